// Axis ticks shared by the heat map renderers: round value ticks and round time ticks.
// Pure functions; no state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trailmap {

// The smallest 1, 2 or 5 × 10^k (k may be negative) at least `raw`; 1 for raw <= 0.
double NiceStep(double raw);
// Ticks 0, step, 2*step, ... up to and including `top`, about `target` of them.
std::vector<double> ValueTicks(double top, int target);
// The same in a metric's unit: for bytes and byte rates ("B", "bytes", "B/s") a step is a power
// of two times 1, 1024, 1024^2, ... so ticks read 1GiB, 2GiB, 4GiB (not 954MiB, 1.86GiB); any
// other unit takes the decimal steps above.
double NiceStep(double raw, std::string_view unit);
// The top of an automatic axis above `value`: NiceStep(value) (1, 2 or 5 × 10^k) in decimal
// units; in byte units a whole number of binary steps (8.1GiB -> 10GiB, not 16GiB).
double NiceTop(double value, std::string_view unit);
std::vector<double> ValueTicks(double top, int target, std::string_view unit);

// A round number of seconds between time labels (1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min,
// 1, 2, 3, 6, 12 h, 1 d, ...) so that labels are at least `min_gap` seconds apart.
int64_t TimeTickInterval(double min_gap);
// The multiples of `interval` (in unix seconds, so aligned to the clock) in [from, to].
std::vector<int64_t> TimeTicks(int64_t from, int64_t to, int64_t interval);
// "HH:MM:SS", or "HH:MM" when the interval is whole minutes.
std::string TimeTickLabel(int64_t t, int64_t interval);

}  // namespace trailmap
