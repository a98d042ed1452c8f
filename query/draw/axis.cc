#include "query/draw/axis.h"

#include <cmath>

#include "core/timespec.h"
#include "core/units.h"

namespace trailmap {

std::vector<double> ValueTicks(double top, int target) {
  std::vector<double> ticks;
  if (!(top > 0) || target < 1) return ticks;
  const double step = NiceStep(top / target);
  for (int i = 0;; ++i) {
    const double v = i * step;
    if (v > top * (1 + 1e-9)) break;
    ticks.push_back(v);
  }
  return ticks;
}

std::vector<double> ValueTicks(double top, int target, std::string_view unit) {
  std::vector<double> ticks;
  if (!(top > 0) || target < 1) return ticks;
  const double step = NiceStep(top / target, unit);
  for (int i = 0;; ++i) {
    const double v = i * step;
    if (v > top * (1 + 1e-9)) break;
    ticks.push_back(v);
  }
  return ticks;
}

int64_t TimeTickInterval(double min_gap) {
  static constexpr int64_t kIntervals[] = {
      1,   2,    5,    10,   15,    30,    60,    120,   300,    600,
      900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800,
  };
  for (int64_t i : kIntervals) {
    if (static_cast<double>(i) >= min_gap) return i;
  }
  return static_cast<int64_t>(std::ceil(min_gap / 604800)) * 604800;
}

std::vector<int64_t> TimeTicks(int64_t from, int64_t to, int64_t interval) {
  std::vector<int64_t> ticks;
  if (interval <= 0) return ticks;
  int64_t t = from - ((from % interval) + interval) % interval;
  if (t < from) t += interval;
  for (; t <= to; t += interval) ticks.push_back(t);
  return ticks;
}

std::string TimeTickLabel(int64_t t, int64_t interval) {
  const std::string clock = FormatClock(t);
  return interval % 60 == 0 ? clock.substr(0, 5) : clock;
}

}  // namespace trailmap
