#include "query/views/trails.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/bucket_spans.h"
#include "core/parallel.h"
#include "core/units.h"

namespace trailmap {
namespace {

// Box widths (odd) whose three successive passes have the variance of a Gaussian of `sigma`:
// a box of width w has variance (w² - 1) / 12.
std::vector<int> BoxWidths(double sigma) {
  const double ideal = std::sqrt(12 * sigma * sigma / 3 + 1);
  int lower = static_cast<int>(std::floor(ideal));
  if (lower % 2 == 0) --lower;
  const int upper = lower + 2;
  const double m = std::round((12 * sigma * sigma - 3.0 * lower * lower - 12.0 * lower - 9) /
                              (-4.0 * lower - 4));
  std::vector<int> widths;
  for (int i = 0; i < 3; ++i) widths.push_back(i < m ? lower : upper);
  return widths;
}

// One box filter of odd width over `in` into `out`, reflecting about the ends (x[-1] = x[0],
// x[n] = x[n-1]): every value keeps its whole weight, so the sum is unchanged. `prefix` is scratch
// space, kept by the caller so three passes over a trail allocate once.
void BoxFilter(const std::vector<double>& in, int width, std::vector<double>* prefix,
               std::vector<double>* out) {
  const int n = static_cast<int>(in.size());
  const int r = std::min(width / 2, n);
  prefix->resize(static_cast<size_t>(n + 2 * r) + 1);
  double* sums = prefix->data();
  sums[0] = 0;
  const double* x = in.data();
  // The reflected ends apart, so the middle, nearly all of it, is a plain running sum.
  const auto reflected = [x, n](int k) {
    return x[std::clamp(k < 0 ? -k - 1 : 2 * n - k - 1, 0, n - 1)];
  };
  for (int k = -r; k < 0; ++k) sums[k + r + 1] = sums[k + r] + reflected(k);
  for (int k = 0; k < n; ++k) sums[k + r + 1] = sums[k + r] + x[k];
  for (int k = n; k < n + r; ++k) sums[k + r + 1] = sums[k + r] + reflected(k);
  out->resize(in.size());
  double* y = out->data();
  const double w = 2 * r + 1;
  for (int i = 0; i < n; ++i) y[i] = (sums[i + 2 * r + 1] - sums[i]) / w;
}

// Silverman's rule from statistics already computed (ComputeTrail needs them anyway).
double Silverman(const Histogram& histogram, const DistributionStats& s) {
  if (histogram.count() < 2) return 0;
  const double iqr =
      static_cast<double>(histogram.Percentile(75)) - static_cast<double>(histogram.Percentile(25));
  double spread = s.stddev;
  if (iqr > 0) spread = std::min(spread, iqr / 1.34);
  return 0.9 * spread * std::pow(static_cast<double>(histogram.count()), -0.2);
}

double SortKey(const FrequencyTrail& t, TrailSort sort) {
  switch (sort) {
    case TrailSort::kCov:
      return t.stats.cov;
    case TrailSort::kP99:
      return static_cast<double>(t.p99);
    case TrailSort::kP50:
      return static_cast<double>(t.p50);
    case TrailSort::kMax:
      return static_cast<double>(t.max);
    case TrailSort::kBimodality:
      return t.stats.bimodality;
    case TrailSort::kName:
      return 0;
  }
  return 0;
}

}  // namespace

TrailMass SpreadHistogram(const Histogram& histogram, uint64_t lo, uint64_t hi, size_t points) {
  TrailMass out;
  SpreadHistogramInto(histogram, lo, hi, points, &out);
  return out;
}

void SpreadHistogramInto(const Histogram& histogram, uint64_t lo, uint64_t hi, size_t points,
                         TrailMass* into) {
  TrailMass& out = *into;
  out.mass.assign(points, 0);
  out.below = out.above = 0;
  out.ticks.clear();
  if (histogram.empty() || hi <= lo || points == 0) return;
  const double n = static_cast<double>(histogram.count());
  const double dlo = static_cast<double>(lo), dhi = static_cast<double>(hi);
  const double width = (dhi - dlo) / static_cast<double>(points);
  const double vmin = static_cast<double>(histogram.min());
  const double vmax = static_cast<double>(histogram.max()) + 1;
  const BucketSpan* spans = BucketSpans();
  histogram.ForEachBucket([&](uint32_t index, uint64_t count) {
    // The values the bucket covers, as the continuous interval [a, b).
    const double a = std::max(spans[index].lower, vmin);
    const double b = std::min(spans[index].end, vmax);
    const double share = static_cast<double>(count) / n;
    if (b <= a) return;  // cannot happen for a valid histogram; nothing to spread
    const double per_value = share / (b - a);
    if (a < dlo) out.below += per_value * (std::min(b, dlo) - a);
    if (b > dhi) out.above += per_value * (b - std::max(a, dhi));
    const double from = std::max(a, dlo), to = std::min(b, dhi);
    if (to <= from) return;
    // Where the bucket's tick goes if it is drawn as one: the middle of its part in range.
    const auto mid = static_cast<uint32_t>(
        std::min<double>(static_cast<double>(points - 1), ((from + to) / 2 - dlo) / width));
    if (out.ticks.empty() || out.ticks.back() != mid) out.ticks.push_back(mid);
    size_t p = static_cast<size_t>((from - dlo) / width);
    for (; p < points; ++p) {
      const double p_lo = dlo + static_cast<double>(p) * width;
      const double p_hi = p + 1 == points ? dhi : p_lo + width;
      const double overlap = std::min(to, p_hi) - std::max(from, p_lo);
      if (overlap > 0) out.mass[p] += per_value * overlap;
      if (p_hi >= to) break;
    }
  });
}

double SilvermanBandwidth(const Histogram& histogram) {
  if (histogram.count() < 2) return 0;
  return Silverman(histogram, ComputeDistributionStats(histogram));
}

std::vector<double> SmoothGaussian(const std::vector<double>& values, double sigma) {
  std::vector<double> out;
  SmoothGaussianInto(values, sigma, &out);
  return out;
}

void SmoothGaussianInto(const std::vector<double>& values, double sigma, std::vector<double>* out) {
  if (sigma < 0.5 || values.empty()) {
    out->assign(values.begin(), values.end());
    return;
  }
  // Scratch kept by each thread: a view smooths a thousand trails, a few per thread at a time.
  thread_local std::vector<double> between, prefix;
  const std::vector<int> widths = BoxWidths(sigma);
  BoxFilter(values, widths[0], &prefix, out);
  BoxFilter(*out, widths[1], &prefix, &between);
  BoxFilter(between, widths[2], &prefix, out);
}

TrailSplit SplitTrail(const std::vector<double>& density, const std::vector<double>& mass,
                      const std::vector<uint32_t>& ticks, double threshold, uint64_t events) {
  TrailSplit split;
  const auto n = static_cast<uint32_t>(density.size());
  const auto above = [&density, threshold](uint32_t i) {
    return density[i] > 0 && density[i] >= threshold;
  };
  // The mass of the points below the threshold, as prefix sums. Where it crowds (at least
  // kRugCrowdEvents events within kRugCrowdHalf points of a point), the events are a sparse but
  // continuous tail, not outliers, and join the line (see the header).
  thread_local std::vector<double> low_mass;  // scratch, as in SmoothGaussianInto
  thread_local std::vector<uint8_t> on;       // bytes, not bits: read back once per tick
  low_mass.assign(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i) {
    const double m = i < mass.size() && !above(i) ? mass[i] : 0;
    low_mass[i + 1] = low_mass[i] + m;
  }
  const double crowd_mass = events > 0 ? kRugCrowdEvents / static_cast<double>(events) : 2;
  const auto crowded = [n, crowd_mass](uint32_t i) {  // low_mass: thread_local, not captured
    const uint32_t b = i >= kRugCrowdHalf ? i - kRugCrowdHalf : 0;
    const uint32_t e = std::min(n, i + kRugCrowdHalf + 1);
    return low_mass[e] - low_mass[b] >= crowd_mass * (1 - 1e-9);
  };
  on.assign(n, 0);
  uint32_t run_start = 0;
  bool on_line = false;
  for (uint32_t i = 0; i < n; ++i) {
    const bool has_events = i < mass.size() && mass[i] > 0;
    const bool line = above(i) || (density[i] > 0 && has_events && crowded(i));
    on[i] = line;
    if (line && !on_line) run_start = i;
    if (!line && on_line) split.lines.emplace_back(run_start, i);
    on_line = line;
  }
  if (on_line) split.lines.emplace_back(run_start, n);
  for (uint32_t t : ticks) {
    if (t < n && !on[t] && (split.rug.empty() || split.rug.back() != t)) split.rug.push_back(t);
  }
  return split;
}

namespace {

// The statistics of a trail: what sorting needs, cheap beside its shape.
void FillTrailStats(const Histogram& histogram, FrequencyTrail* t) {
  t->count = histogram.count();
  t->p50 = histogram.Percentile(50);
  t->p99 = histogram.Percentile(99);
  t->max = histogram.max();
  t->stats = ComputeDistributionStats(histogram);
}

// Steps 1-3 for a trail whose statistics are filled.
// The mass (step 1) is scratch of each thread: of a trail only its density and split are kept
// (for 1,000 trails, 16 MB less memory for a fresh process to fault in).
void FillTrailShape(const Histogram& histogram, uint64_t lo, uint64_t hi, size_t points,
                    double threshold, double bandwidth, FrequencyTrail* t) {
  thread_local TrailMass m;
  SpreadHistogramInto(histogram, lo, hi, points, &m);
  t->below = m.below;
  t->above = m.above;
  t->bandwidth = bandwidth < 0 ? Silverman(histogram, t->stats) : bandwidth;
  const double width = hi > lo ? static_cast<double>(hi - lo) / static_cast<double>(points) : 1;
  // A kernel wider than an eighth of the range would flatten everything; cap it there.
  const double sigma = std::min(t->bandwidth / width, static_cast<double>(points) / 8);
  SmoothGaussianInto(m.mass, sigma, &t->density);
  const double peak =
      t->density.empty() ? 0 : *std::max_element(t->density.begin(), t->density.end());
  if (peak > 0) {
    for (double& d : t->density) d /= peak;
  }
  t->split = SplitTrail(t->density, m.mass, m.ticks, threshold, t->count);
}

bool TrailBefore(const FrequencyTrail& a, const FrequencyTrail& b, TrailSort sort) {
  const double ka = SortKey(a, sort), kb = SortKey(b, sort);
  if (ka != kb) return ka > kb;
  return a.group < b.group;
}

}  // namespace

FrequencyTrail ComputeTrail(const Histogram& histogram, uint64_t lo, uint64_t hi, size_t points,
                            double threshold, double bandwidth) {
  FrequencyTrail t;
  FillTrailStats(histogram, &t);
  FillTrailShape(histogram, lo, hi, points, threshold, bandwidth, &t);
  return t;
}

FrequencyTrail ShapeTrail(const TrailsView& view, size_t i) {
  FrequencyTrail t = view.trails[i];
  FillTrailShape(*view.unshaped[i], view.lo, view.hi, view.points, view.threshold, view.bandwidth,
                 &t);
  return t;
}

Result<TrailSort> ParseTrailSort(std::string_view text) {
  static constexpr std::pair<std::string_view, TrailSort> kNames[] = {
      {"cov", TrailSort::kCov},     {"p99", TrailSort::kP99},
      {"p50", TrailSort::kP50},     {"median", TrailSort::kP50},
      {"max", TrailSort::kMax},     {"bimodality", TrailSort::kBimodality},
      {"name", TrailSort::kName},
  };
  for (const auto& [name, sort] : kNames) {
    if (name == text) return sort;
  }
  return Status::InvalidArgument("unknown sort \"" + std::string(text) +
                                 "\": use cov, p99, p50, max, bimodality or name");
}

std::string TrailSortName(TrailSort sort) {
  switch (sort) {
    case TrailSort::kCov:
      return "cov";
    case TrailSort::kP99:
      return "p99";
    case TrailSort::kP50:
      return "p50";
    case TrailSort::kMax:
      return "max";
    case TrailSort::kBimodality:
      return "bimodality";
    case TrailSort::kName:
      return "name";
  }
  return "";
}

void SortTrails(std::vector<FrequencyTrail>* trails, TrailSort sort) {
  std::stable_sort(
      trails->begin(), trails->end(),
      [sort](const FrequencyTrail& a, const FrequencyTrail& b) { return TrailBefore(a, b, sort); });
}

TrailsView AssembleTrails(const MergedGrid& grid, const TrailOptions& options) {
  TrailsView view;
  view.metric = grid.metric;
  view.unit = grid.unit;
  view.kind = grid.kind;
  view.group_by = grid.group_by;
  view.from = grid.from;
  view.to = grid.to;
  view.points = std::max<size_t>(options.points, 2);
  view.threshold = options.threshold;
  view.sort = options.sort;

  // Each group's histogram over the range: a one-column grid's own cell (no copy: 1,000 hosts'
  // are ~8 MB), else its columns merged.
  std::vector<Histogram> merged;
  merged.reserve(grid.groups.size());  // `groups` points into it: never reallocated
  std::vector<const Histogram*> groups;
  std::vector<size_t> kept;
  for (size_t g = 0; g < grid.groups.size(); ++g) {
    const Histogram* h = nullptr;
    if (grid.columns == 1 && grid.cells[g].size() == 1) {
      h = &grid.cells[g][0];
    } else {
      merged.push_back(grid.Group(g));
      h = &merged.back();
    }
    if (h->empty()) continue;
    groups.push_back(h);
    kept.push_back(g);
  }
  view.groups_total = groups.size();
  // Every group's statistics decide the order; only the trails kept get a shape (a 2,048-point
  // density is most of a trail's cost, and a picture keeps the few hundred that fit).
  std::vector<FrequencyTrail> stats(groups.size());
  ParallelFor(groups.size(), 256, [&stats, &groups, &grid, &kept](size_t i) {
    FillTrailStats(*groups[i], &stats[i]);
    stats[i].group = grid.groups[kept[i]];
  });
  std::vector<size_t> order(stats.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&stats, &options](size_t a, size_t b) {
    return TrailBefore(stats[a], stats[b], options.sort);
  });
  if (options.limit > 0 && order.size() > options.limit) order.resize(options.limit);
  view.lo = options.lo;
  view.hi = options.hi;
  if (view.hi == 0) {
    // From the trails shown, as the columns choose their y range: 225 SSD hosts of a mixed fleet
    // get the range of an SSD, not of the spinning disks left out.
    Histogram all;
    for (size_t k : order) (void)all.Merge(*groups[k]);  // refused only past 2^64 events
    view.range_auto = true;
    view.lo = 0;
    view.hi = static_cast<uint64_t>(
        NiceTop(static_cast<double>(std::max<uint64_t>(all.Percentile(99), 1)), grid.unit));
  }
  if (view.hi <= view.lo) view.hi = view.lo + 1;
  view.bandwidth = options.bandwidth;
  view.trails.resize(order.size());
  if (!options.shapes) {
    for (size_t k : order) view.unshaped.push_back(groups[k]);
    view.merged = std::move(merged);  // the buffer moves with it: `unshaped` still points there
  }
  // The shapes are independent: computed on a few threads when there are many.
  ParallelFor(order.size(), 64, [&view, &stats, &order, &groups, &options](size_t k) {
    FrequencyTrail& t = view.trails[k];
    t = std::move(stats[order[k]]);
    if (options.shapes) {
      FillTrailShape(*groups[order[k]], view.lo, view.hi, view.points, view.threshold,
                     view.bandwidth, &t);
    }
  });
  for (const FrequencyTrail& t : view.trails) {  // above and below are 0 without shapes
    view.total += t.count;
    view.above_events += (t.above + t.below) * static_cast<double>(t.count);
  }
  return view;
}

}  // namespace trailmap
