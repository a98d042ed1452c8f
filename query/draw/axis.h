// Axis ticks shared by the heat map renderers: round value ticks and round time ticks.
// Pure functions; no state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trailmap {

// Ticks 0, step, 2*step, ... up to and including `top`, about `target` of them (the step is
// core/units.h NiceStep, in the metric's unit when one is given).
std::vector<double> ValueTicks(double top, int target);
std::vector<double> ValueTicks(double top, int target, std::string_view unit);

// A round number of seconds between time labels (1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min,
// 1, 2, 3, 6, 12 h, 1 d, ...) so that labels are at least `min_gap` seconds apart.
int64_t TimeTickInterval(double min_gap);
// The multiples of `interval` (in unix seconds, so aligned to the clock) in [from, to].
std::vector<int64_t> TimeTicks(int64_t from, int64_t to, int64_t interval);
// "HH:MM:SS", or "HH:MM" when the interval is whole minutes.
std::string TimeTickLabel(int64_t t, int64_t interval);

}  // namespace trailmap
