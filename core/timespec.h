// Time specifications: what --from and --to accept, turned into unix seconds.
//
// Accepted forms:
//   now                       the `now` passed in
//   -10m, -30s, -1h, -2d, -1w relative to now (units s, m, h, d, w; an optional "now" prefix:
//                             "now-10m"); "+5m" points into the future
//   1700000000                unix seconds (an integer of at most 12 digits)
//   2026-11-22T16:00:00Z      RFC 3339: "T" or a space between date and time, fractional
//   2026-11-22T17:00:00+01:00 seconds (dropped: times are whole seconds), "Z" or ±HH:MM
//   2026-11-22                a date alone means its midnight UTC
//
// There is no clock in here: the caller passes `now`, so tests are deterministic.
// Errors name the text and list the accepted forms. Pure functions; no state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace trailmap {

// Parses `text` into unix seconds, with relative forms taken from `now` (unix seconds).
Result<int64_t> ParseTimeSpec(std::string_view text, int64_t now);

// Unix seconds → "2026-11-22T16:00:00Z".
std::string FormatRfc3339(int64_t unix_seconds);
// Unix seconds → "16:00:00" (UTC), for axis labels.
std::string FormatClock(int64_t unix_seconds);

// Days since 1970-01-01 of a proleptic Gregorian date (month 1..12, day 1..31).
int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day);

}  // namespace trailmap
