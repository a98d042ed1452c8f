// Units: reading quantities people type ("10ms", "1.5s", "4KiB") into a metric's base unit, and
// writing base-unit values back for people ("12.5µs", "3.2MiB").
//
// Base units are the ones histograms hold: nanoseconds for durations, bytes for sizes.
//
// Durations: a decimal number followed by ns, us, µs (or μs), ms, s, m (minutes), h, d.
// Sizes: a decimal number followed by B, KB/MB/GB/TB (powers of 1000) or KiB/MiB/GiB/TiB
// (powers of 1024); "K", "M", "G" alone are refused because they are ambiguous.
// ParseQuantity also takes a bare number, read in the base unit ("1500" for a metric in ns).
// A value that is negative, not finite or past 2^64 is refused with a message that lists the
// accepted forms.
//
// Scalar metrics (cpu.usage in "%", net.rx.bytes in "B/s") are shown in the distribution views
// as histograms of integers, so a fractional value is held in FIXED POINT: the histogram's unit
// is then written with its step in front — "0.01%" means "integers counting hundredths of a
// percent", "0.001" thousandths of a plain number. ScalarStep picks the step per unit (0.01 for
// "%", 1 for bytes, byte rates and ns, 0.001 otherwise); Parse/FormatQuantity understand such
// units, so axes and --ymax read "50%" and never the raw integer. A rate "X/s" formats as X
// does, followed by "/s" ("1.5MiB/s").
//
// Formatting keeps three significant digits and drops trailing zeros: 850 → "850ns",
// 12500 → "12.5µs", 3200000 → "3.2ms", 1250000000 → "1.25s"; bytes → "512B", "4KiB", "1.5MiB".
//
// Pure functions; no state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "core/status.h"

namespace trailmap {

// "10ms" → 10'000'000 (ns). A unit is required.
Result<uint64_t> ParseDuration(std::string_view text);
// "4KiB" → 4096 (bytes). A unit is required.
Result<uint64_t> ParseSize(std::string_view text);
// A value for a metric whose base unit is `unit` ("ns" for durations, "B" or "bytes" for sizes;
// anything else takes bare numbers only). A bare number is read in the base unit.
Result<uint64_t> ParseQuantity(std::string_view text, std::string_view unit);
// The nanoseconds in one of "s", "ms", "us", "µs", "ns" (the --time-unit / --value-unit names).
Result<uint64_t> NanosPerUnit(std::string_view name);
// "0.1%" or "0.1" → 0.1 (percent, in [0, 100]).
Result<double> ParsePercent(std::string_view text);

// 850 → "850ns", 12500 → "12.5µs", 1.25e9 → "1.25s", 90e9 → "90s". 0 → "0".
std::string FormatDuration(double ns);
// 512 → "512B", 4096 → "4KiB", 1572864 → "1.5MiB". 0 → "0".
std::string FormatBytes(double bytes);
// Dispatches on the metric's base unit: "ns" → FormatDuration, "B"/"bytes" → FormatBytes,
// otherwise the number with three significant digits followed by the unit ("" and "1", a plain
// number as statsd gauges have, without one).
std::string FormatQuantity(double value, std::string_view unit);
// The fixed-point step a scalar in `unit` is stored with in a histogram: 0.01 for "%", 1 for
// "ns", bytes and byte rates, 0.001 for anything else.
double ScalarStep(std::string_view unit);
// The histogram unit of a scalar in `unit`: "%" → "0.01%", "B/s" → "B/s", "" → "0.001".
std::string FixedPointUnit(std::string_view unit);
// Splits a fixed-point unit: "0.01%" → {0.01, "%"}; a unit without a leading step → {1, unit}.
std::pair<double, std::string_view> SplitFixedPointUnit(std::string_view unit);

// Three significant digits without trailing zeros: 12.5, 3.2, 850, 1250.
std::string FormatSignificant(double value);

// The smallest 1, 2 or 5 × 10^k (k may be negative) at least `raw`; 1 for raw <= 0.
double NiceStep(double raw);
// The same in a metric's unit: for bytes and byte rates ("B", "bytes", "B/s") a step is a power
// of two times 1, 1024, 1024^2, ... so ticks read 1GiB, 2GiB, 4GiB (not 954MiB, 1.86GiB); any
// other unit takes the decimal steps above.
double NiceStep(double raw, std::string_view unit);
// The top of an automatic axis above `value`: NiceStep(value) (1, 2 or 5 × 10^k) in decimal
// units; in byte units a whole number of binary steps (8.1GiB -> 10GiB, not 16GiB).
double NiceTop(double value, std::string_view unit);

}  // namespace trailmap
