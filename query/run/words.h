// The words a view reads itself, parsed in one place: what needs the clock, the metric's unit or
// more than one value ("10s" a column, "p50,p99" percentiles, "16:05:03" a cell's time, "0..20ms"
// a value range, "20ms" on the value axis). Each refusal names the option as the CLI writes it
// and shows a form that works. Below these: times are core/timespec.h's, durations and
// quantities core/units.h's; numbers, flags and fixed sets of words (colorings, palettes, sorts,
// formats) are read by the tables of query/run/options.h. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace trailmap {

// --step: whole seconds per column, "10s", "1m" or a bare number of seconds ("30"); "" = 0
// (automatic). At most 366 days.
Result<uint32_t> ParseStepWords(const std::string& text);

// --overlay: "p50,p99,99.9" → {50, 99, 99.9}; each above 0 and at most 100.
Result<std::vector<double>> ParsePercentiles(const std::string& list);

// The time of --at: a clock time "HH:MM:SS" is taken on the UTC day of `range_from` (the next day
// when that is before it), anything else as --from takes it.
Result<int64_t> ParseClockOrTime(const std::string& text, int64_t range_from, int64_t now);

// --ymin / --ymax before the metric's unit is known: a quantity of some unit (a duration, a size,
// or a bare number), so a typo is refused before any shard is asked; AxisValueIn reads it once the
// unit is known ("--ymax: m is in ns: ...").
Status CheckAxisWords(const char* flag, const std::string& text);

// "LOW..HIGH" in `unit` ("0..20ms", "..20ms" from 0): --range of the trails. HIGH above LOW.
Result<std::pair<uint64_t, uint64_t>> ParseValueRange(const std::string& text,
                                                      const std::string& unit);

}  // namespace trailmap
