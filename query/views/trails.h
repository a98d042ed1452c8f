// Frequency trails (seed 002): each host's (or field value's) distribution over a value range,
// drawn as a line where the density is high enough to read and as rug ticks where it is not, so
// a lone outlier is a visible tick rather than a flat line; staggered into a waterfall of
// hundreds of trails sorted by a statistic.
//
// From a histogram to a trail, for the value range [lo, hi) cut into `points` equal points:
//   1. mass: every bucket's count is spread uniformly over the values the bucket covers
//      ([lower, upper], narrowed to the histogram's exact [min, max]) and lands on the points
//      those values fall in, in proportion to the overlap; divided by the trail's count, so
//      mass[i] is the share of the trail's events in point i. The share outside [lo, hi) is
//      `below` + `above` (not drawn, counted).
//   2. density: a kernel density estimate of the mass, a Gaussian of standard deviation
//      `bandwidth` (Silverman's rule, 0.9 · min(stddev, IQR / 1.34) · n^(-1/5), the default of R's
//      density(), which the seed's trails were drawn with) approximated by three box filters,
//      reflected at the range's ends so no mass is lost; then scaled so the trail's peak is 1:
//      every trail uses its full height, and heights compare shapes, not counts.
//   3. split: point i is on the line where density[i] >= threshold (default 0.2% of the peak:
//      measured on a fleet whose cache-hit spike is 25 times its disk band, 1% cut the disk band's
//      well-populated tail into thousands of ticks; 0.2% leaves ticks to the valley between the
//      modes and the far tail);
//      below it, each bucket holding events is ONE rug tick, at the middle of its part of the
//      range (a bucket is the finest thing stored: one slow event in a 265 µs-wide bucket at
//      17 ms is one tick, not 27 points of ticks), and empty points are nothing at all — except
//      where the events below the threshold crowd: a point with events stays on the line when
//      the points within kRugCrowdHalf of it hold at least kRugCrowdEvents events below the
//      threshold. Measured on the demo fleet (10 minutes, ~120k events per host, a tail
//      of 0.7% of the events spread over 12–20 ms): without it, that tail became a tick in every
//      pixel, a solid black bar on every trail that hid the shapes; the seed's rug is for
//      outliers "with the highest resolution possible", and a lone outlier still is one.
//
// Pure functions; value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/histogram.h"
#include "core/status.h"
#include "query/fetch/partials.h"
#include "query/views/distribution_stats.h"

namespace trailmap {

inline constexpr size_t kDefaultTrailPoints = 2048;
// Ticks that crowd join the line (step 3): kRugCrowdEvents events within kRugCrowdHalf points.
inline constexpr uint32_t kRugCrowdHalf = 8;
inline constexpr double kRugCrowdEvents = 9;

// The mass of one histogram over [lo, hi) cut into `points` points (step 1 above).
struct TrailMass {
  std::vector<double> mass;     // share of the events per point
  double below = 0;             // share of the events below lo
  double above = 0;             // share at or above hi
  std::vector<uint32_t> ticks;  // each non-empty bucket's point (the middle of its part in
                                // range), increasing, once each: where its rug tick would go
};
TrailMass SpreadHistogram(const Histogram& histogram, uint64_t lo, uint64_t hi, size_t points);
// The same into *into, reusing its vectors' memory.
void SpreadHistogramInto(const Histogram& histogram, uint64_t lo, uint64_t hi, size_t points,
                         TrailMass* into);

// Silverman's rule of thumb for `histogram`, in its base unit; 0 when it has no spread.
double SilvermanBandwidth(const Histogram& histogram);
// `values` smoothed by a Gaussian of `sigma` points (three box filters, reflecting ends; the sum
// is kept). sigma < 0.5 returns `values` unchanged.
std::vector<double> SmoothGaussian(const std::vector<double>& values, double sigma);
// The same into *out (not `values`), reusing its memory.
void SmoothGaussianInto(const std::vector<double>& values, double sigma, std::vector<double>* out);

// The line runs and rug ticks of a trail (step 3 above); density scaled to peak 1.
struct TrailSplit {
  std::vector<std::pair<uint32_t, uint32_t>> lines;  // [begin, end) runs of points on the line
  std::vector<uint32_t> rug;                         // points drawn as rug ticks
};
// `ticks` are the candidate tick points (TrailMass::ticks); `events` is the trail's count (mass
// times events is events; 0 never joins low points to the line).
TrailSplit SplitTrail(const std::vector<double>& density, const std::vector<double>& mass,
                      const std::vector<uint32_t>& ticks, double threshold, uint64_t events);

struct FrequencyTrail {
  std::string group;   // host name or field value ("" for events without the field)
  uint64_t count = 0;  // every event of the group, drawn or not
  uint64_t p50 = 0, p99 = 0, max = 0;
  DistributionStats stats;      // cov, skewness, kurtosis, bimodality
  double bandwidth = 0;         // the kernel's standard deviation, in the base unit (0 = none)
  double below = 0, above = 0;  // shares of the events outside the range
  std::vector<double> density;  // step 2, peak 1 (all 0 when nothing is in range)
  TrailSplit split;             // step 3
};

enum class TrailSort { kCov, kP99, kP50, kMax, kBimodality, kName };
// "cov", "p99", "p50" (or "median"), "max", "bimodality", "name".
Result<TrailSort> ParseTrailSort(std::string_view text);
std::string TrailSortName(TrailSort sort);

struct TrailOptions {
  // The value range [lo, hi) in the base unit. hi == 0: automatic, lo = 0 and hi the smallest
  // 1, 2 or 5 × 10^k at or above the p99 of every event of the trails kept after `limit`
  // together, as the columns choose their y range from the hosts shown (the body of every trail
  // fills the width; the p99.9 of a latency fleet usually sits among its rare outliers, which would
  // squeeze the bands into the first few percent of the width; those beyond are counted).
  uint64_t lo = 0;
  uint64_t hi = 0;
  size_t points = kDefaultTrailPoints;
  double threshold = 0.002;  // of the trail's peak density: below it, rug ticks
  // The kernel's standard deviation in the base unit; < 0 = Silverman's rule per trail, 0 = none.
  double bandwidth = -1;
  TrailSort sort = TrailSort::kCov;  // statistics largest first, names ascending; ties by name
  size_t limit = 0;                  // keep the first N trails after sorting; 0 = all
  // false: the trails get their statistics only, and ShapeTrail makes each one's shape when it
  // is written (a document of 1,000 trails then never holds 1,000 densities at once).
  bool shapes = true;
};

struct TrailsView {
  std::string metric;
  std::string unit = "ns";
  MetricKind kind = MetricKind::kLatency;  // kScalar: counts are host-seconds
  std::string group_by;                    // "host" or a field key
  int64_t from = 0, to = 0;
  uint64_t lo = 0, hi = 0;
  bool range_auto = false;
  size_t points = kDefaultTrailPoints;
  double threshold = 0.002;
  TrailSort sort = TrailSort::kCov;
  size_t groups_total = 0;  // groups with events, before --limit
  bool fitted = false;      // the limit was the picture's (how many trails fit), not the user's
  uint64_t total = 0;       // events in the trails shown
  double above_events = 0;  // of those, how many lie beyond the range (estimated from shares)
  std::vector<FrequencyTrail> trails;  // sorted: the first is the top (back) of the waterfall
  std::vector<std::string> missing_shards;
  double bandwidth = -1;  // TrailOptions::bandwidth
  // With TrailOptions::shapes false: each trail's histogram, for ShapeTrail. They point into the
  // grid AssembleTrails read, which must outlive the view, or into `merged` (a grid of several
  // columns). above_events is then 0.
  std::vector<const Histogram*> unshaped;
  std::vector<Histogram> merged;
};

// One trail per group of `grid` that holds events (a grid summed over its columns).
TrailsView AssembleTrails(const MergedGrid& grid, const TrailOptions& options);
// Trail i of a view assembled without shapes, with its shape (steps 1-3): as AssembleTrails
// would have made it. Thread-safe: each call reads the view and writes only its result.
FrequencyTrail ShapeTrail(const TrailsView& view, size_t i);
// The trail of one histogram over [lo, hi) (steps 1-3).
FrequencyTrail ComputeTrail(const Histogram& histogram, uint64_t lo, uint64_t hi, size_t points,
                            double threshold, double bandwidth);
// Sorts (statistics largest first, names ascending, ties by name).
void SortTrails(std::vector<FrequencyTrail>* trails, TrailSort sort);

}  // namespace trailmap
