#include "query/views/trails.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>
#include <sstream>

#include "query/testing/views.h"
#include "query/views/micro_trail.h"

namespace trailmap {
namespace {

double Sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(TrailMass, MassIsConservedAndOutsideIsCounted) {
  Histogram h;
  std::mt19937_64 rng(1);
  std::lognormal_distribution<double> d(std::log(4e6), 0.6);
  for (int i = 0; i < 50'000; ++i) h.Record(static_cast<uint64_t>(d(rng)));
  h.Record(300'000'000, 7);  // far above the range
  const TrailMass m = SpreadHistogram(h, 0, 20'000'000, 2048);
  ASSERT_EQ(m.mass.size(), 2048u);
  EXPECT_NEAR(Sum(m.mass) + m.below + m.above, 1.0, 1e-9);
  EXPECT_GT(m.above, 7.0 / h.count());
  EXPECT_EQ(m.below, 0);
  for (double x : m.mass) EXPECT_GE(x, 0);

  // All inside: everything lands on a point.
  const TrailMass all = SpreadHistogram(h, 0, 400'000'000, 2048);
  EXPECT_NEAR(Sum(all.mass), 1.0, 1e-9);
  EXPECT_EQ(all.above, 0);
}

TEST(TrailMass, SingleValueLandsOnItsPoint) {
  // 4 ms over 0..20 ms in 2048 points: point width 9765.625 ns, so 4e6 is in point 409.
  Histogram h;
  h.Record(4'000'000, 100);
  const TrailMass m = SpreadHistogram(h, 0, 20'000'000, 2048);
  EXPECT_DOUBLE_EQ(m.mass[409], 1.0);
  EXPECT_NEAR(Sum(m.mass), 1.0, 1e-12);

  // An exact small value over 0..128 in 128 points: value v is point v.
  Histogram s;
  s.Record(37, 3);
  const TrailMass ms = SpreadHistogram(s, 0, 128, 128);
  EXPECT_DOUBLE_EQ(ms.mass[37], 1.0);
}

TEST(TrailMass, ABucketIsSpreadUniformlyNotPiledOnItsMidpoint) {
  // Two values in the same bucket, far apart within it: the bucket [4194304, 4259839] spreads over
  // every point between the histogram's min and max, evenly.
  Histogram h;
  h.Record(4'194'304);
  h.Record(4'259'839);
  ASSERT_EQ(BucketIndex(4'194'304), BucketIndex(4'259'839));
  const TrailMass m = SpreadHistogram(h, 4'194'304, 4'259'840, 64);  // 1024 values a point
  for (double x : m.mass) EXPECT_NEAR(x, 1.0 / 64, 1e-12);
}

TEST(TrailSmoothing, GaussianKeepsTheSumAndSpreads) {
  std::vector<double> spike(200, 0);
  spike[100] = 1;
  const std::vector<double> s = SmoothGaussian(spike, 5);
  EXPECT_NEAR(Sum(s), 1.0, 1e-12);
  EXPECT_LT(s[100], 0.1);
  EXPECT_NEAR(s[95], s[105], 1e-12);
  double var = 0;
  for (size_t i = 0; i < s.size(); ++i) var += s[i] * (i - 100.0) * (i - 100.0);
  EXPECT_NEAR(std::sqrt(var), 5, 0.3);
  // At the edge nothing is lost either (reflection).
  std::vector<double> edge(50, 0);
  edge[0] = 1;
  EXPECT_NEAR(Sum(SmoothGaussian(edge, 8)), 1.0, 1e-12);
  EXPECT_EQ(SmoothGaussian(spike, 0.2), spike);
}

TEST(TrailSplit, LineAboveThresholdRugBelow) {
  //                            0    1    2     3    4    5    6     7    8
  const std::vector<double> density = {0, 0.005, 0.02, 0.5, 1.0, 0.3, 0.009, 0, 0.0001};
  const std::vector<double> mass = {0, 0.001, 0.1, 0.2, 0.3, 0.2, 0, 0, 0.0001};
  const TrailSplit split = SplitTrail(density, mass, {1, 2, 3, 4, 5, 8}, 0.01, 1000);
  ASSERT_EQ(split.lines.size(), 1u);
  EXPECT_EQ(split.lines[0], std::make_pair(2u, 6u));
  // Point 1 has events below the threshold: a tick. Point 6 is below but empty: nothing.
  // Point 8 is a lone outlier: a tick.
  EXPECT_EQ(split.rug, (std::vector<uint32_t>{1, 8}));
  // Exactly at the threshold is on the line.
  const TrailSplit at = SplitTrail({0.01, 1}, {1, 1}, {0, 1}, 0.01, 2);
  ASSERT_EQ(at.lines.size(), 1u);
  EXPECT_EQ(at.lines[0], std::make_pair(0u, 2u));
  EXPECT_TRUE(at.rug.empty());
}

TEST(TrailSplit, CrowdedTicksJoinTheLineALoneOneStaysATick) {
  // A peak, then a long sparse tail of events at every point (all below the threshold), then
  // nothing, then one outlier.
  std::vector<double> density(200, 0), mass(200, 0);
  for (uint32_t i = 0; i < 10; ++i) density[i] = mass[i] = 1;
  for (uint32_t i = 10; i < 110; ++i) {
    density[i] = 0.001;
    mass[i] = 0.0001;
  }
  density[180] = 0.0005;
  mass[180] = 0.0001;
  // 10,000 events: one per tail point, so 17 in any window of the tail, 1 around the outlier.
  std::vector<uint32_t> ticks;
  for (uint32_t i = 0; i < 110; i += 5) ticks.push_back(i);
  ticks.push_back(180);
  const TrailSplit split = SplitTrail(density, mass, ticks, 0.01, 10'000);
  ASSERT_EQ(split.lines.size(), 1u);
  EXPECT_EQ(split.lines[0], std::make_pair(0u, 110u));
  EXPECT_EQ(split.rug, (std::vector<uint32_t>{180}));
}

TEST(FrequencyTrail, ALoneOutlierIsARugTick) {
  Histogram h;
  std::mt19937_64 rng(2);
  std::lognormal_distribution<double> d(std::log(4e6), 0.3);
  for (int i = 0; i < 100'000; ++i) h.Record(static_cast<uint64_t>(d(rng)));
  h.Record(17'000'000);  // one slow event, far from the band
  const FrequencyTrail t = ComputeTrail(h, 0, 20'000'000, 2048, 0.01, -1);
  // One tick for the one event, at the middle of its bucket's part of the range (the bucket
  // ends at the histogram's max, 17 ms).
  const double point = 20'000'000 / 2048.0;
  const uint64_t lower = BucketLower(BucketIndex(17'000'000));
  const auto outlier = static_cast<uint32_t>((lower + 17'000'001) / 2.0 / point);
  const auto ticks_near = std::count_if(t.split.rug.begin(), t.split.rug.end(), [&](uint32_t p) {
    return p * point >= lower - point && p * point <= 17'000'001;
  });
  EXPECT_EQ(ticks_near, 1);
  EXPECT_NE(std::find(t.split.rug.begin(), t.split.rug.end(), outlier), t.split.rug.end());
  for (const auto& [b, e] : t.split.lines) EXPECT_FALSE(outlier >= b && outlier < e);
  ASSERT_FALSE(t.split.lines.empty());
  EXPECT_DOUBLE_EQ(*std::max_element(t.density.begin(), t.density.end()), 1.0);
  EXPECT_GT(t.bandwidth, 0);
}

MergedGrid Fleet() {
  MergedGrid grid = testing_views::HostGrid({"a-fast", "b-bimodal", "c-slow", "d-empty"});
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> cache(std::log(60e3), 0.3), disk(std::log(4e6), 0.3),
      slow(std::log(8e6), 0.3);
  for (int i = 0; i < 20'000; ++i) {
    grid.cells[0][0].Record(static_cast<uint64_t>(disk(rng)));
    grid.cells[1][0].Record(static_cast<uint64_t>(i % 2 ? cache(rng) : disk(rng)));
    grid.cells[2][0].Record(static_cast<uint64_t>(slow(rng)));
  }
  return grid;
}

std::vector<std::string> Order(const TrailsView& view) {
  std::vector<std::string> names;
  for (const FrequencyTrail& t : view.trails) names.push_back(t.group);
  return names;
}

TEST(TrailsView, SortOrders) {
  const MergedGrid grid = Fleet();
  TrailOptions o;
  o.sort = TrailSort::kP99;
  TrailsView view = AssembleTrails(grid, o);
  // The empty host has no trail; the planted slow host is first by p99.
  ASSERT_EQ(view.trails.size(), 3u);
  EXPECT_EQ(view.trails.front().group, "c-slow");
  EXPECT_EQ(view.groups_total, 3u);
  o.sort = TrailSort::kBimodality;
  EXPECT_EQ(AssembleTrails(grid, o).trails.front().group, "b-bimodal");
  o.sort = TrailSort::kCov;
  EXPECT_EQ(AssembleTrails(grid, o).trails.front().group, "b-bimodal");
  o.sort = TrailSort::kP50;
  EXPECT_EQ(AssembleTrails(grid, o).trails.front().group, "c-slow");
  o.sort = TrailSort::kName;
  EXPECT_EQ(Order(AssembleTrails(grid, o)),
            (std::vector<std::string>{"a-fast", "b-bimodal", "c-slow"}));
  o.sort = TrailSort::kMax;
  o.limit = 1;
  view = AssembleTrails(grid, o);
  EXPECT_EQ(Order(view), (std::vector<std::string>{"c-slow"}));
  EXPECT_EQ(view.groups_total, 3u);
}

TEST(TrailsView, AutomaticRangeIsTheRoundedP99) {
  const TrailsView view = AssembleTrails(Fleet(), TrailOptions{});
  EXPECT_TRUE(view.range_auto);
  EXPECT_EQ(view.lo, 0u);
  EXPECT_EQ(view.hi, 20'000'000u);  // the p99 of everything is in the slow host's band
  EXPECT_EQ(view.points, 2048u);
  TrailOptions o;
  o.lo = 1'000'000;
  o.hi = 5'000'000;
  const TrailsView fixed = AssembleTrails(Fleet(), o);
  EXPECT_FALSE(fixed.range_auto);
  EXPECT_EQ(fixed.hi, 5'000'000u);
  EXPECT_GT(fixed.above_events, 20'000);  // the slow host is outside the range
  // With a limit, the range is the kept trails': the fastest host's disk band alone (p99 of
  // a log-normal around 4 ms, sigma 0.3: ~8 ms) rounds to 10 ms, not to the slow host's 20 ms.
  TrailOptions fast;
  fast.sort = TrailSort::kName;
  fast.limit = 1;
  const TrailsView kept = AssembleTrails(Fleet(), fast);
  ASSERT_EQ(Order(kept), (std::vector<std::string>{"a-fast"}));
  EXPECT_EQ(kept.hi, 10'000'000u);
}

// A view assembled without shapes gives each trail, through ShapeTrail, exactly the shape
// AssembleTrails makes: for one-column grids (the trails' own query) and grids of several
// columns (merged per group), with Silverman's bandwidth and a fixed one.
TEST(TrailsView, ShapesMadeLaterAreTheSame) {
  MergedGrid wide =
      testing_views::EmptyHostGrid("disk.latency", 1'795'363'200, 60, 3, {"h1", "h2", "h3", "h4"});
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> latency(std::log(2e6), 0.6);
  for (size_t h = 0; h < wide.groups.size(); ++h) {
    for (size_t c = 0; c < 3; ++c) {
      for (size_t i = 0; i < 500 * (h + 1) * (c + 1); ++i) {
        wide.cells[h][c].Record(static_cast<uint64_t>(latency(rng)));
      }
    }
  }
  for (const MergedGrid& grid : {Fleet(), wide}) {
    for (double bandwidth : {-1.0, 250'000.0}) {
      TrailOptions o;
      o.points = 512;
      o.bandwidth = bandwidth;
      o.sort = TrailSort::kCov;
      const TrailsView shaped = AssembleTrails(grid, o);
      o.shapes = false;
      const TrailsView later = AssembleTrails(grid, o);
      ASSERT_EQ(later.trails.size(), shaped.trails.size());
      EXPECT_EQ(later.total, shaped.total);
      EXPECT_EQ(later.hi, shaped.hi);
      for (size_t i = 0; i < shaped.trails.size(); ++i) {
        EXPECT_TRUE(later.trails[i].density.empty()) << i;
        const FrequencyTrail t = ShapeTrail(later, i);
        const FrequencyTrail& want = shaped.trails[i];
        EXPECT_EQ(t.group, want.group) << i;
        EXPECT_EQ(t.density, want.density) << i;
        EXPECT_EQ(t.split.lines, want.split.lines) << i;
        EXPECT_EQ(t.split.rug, want.split.rug) << i;
        EXPECT_EQ(t.below, want.below) << i;
        EXPECT_EQ(t.above, want.above) << i;
        EXPECT_EQ(t.bandwidth, want.bandwidth) << i;
      }
    }
  }
}

TEST(TrailSort, Parse) {
  EXPECT_EQ(*ParseTrailSort("median"), TrailSort::kP50);
  EXPECT_EQ(*ParseTrailSort("bimodality"), TrailSort::kBimodality);
  EXPECT_FALSE(ParseTrailSort("p42").ok());
}

TEST(MicroTrail, SqueezeKeepsTheTallestPointAndTheRugCells) {
  FrequencyTrail t;
  t.density = {0, 0, 0.1, 0.5, 1.0, 0.3, 0, 0, 0, 0.001, 0, 0};
  const std::vector<double> mass = {0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0};
  t.split = SplitTrail(t.density, mass, {2, 3, 4, 5, 9}, 0.01, t.count);
  const std::vector<MicroTrailCell> cells = SqueezeTrail(t, 6);  // two points a cell
  ASSERT_EQ(cells.size(), 6u);
  EXPECT_FALSE(cells[0].line || cells[0].rug);
  EXPECT_TRUE(cells[1].line);
  EXPECT_DOUBLE_EQ(cells[1].height, std::sqrt(0.5));  // the root of the taller of 0.1 and 0.5
  EXPECT_DOUBLE_EQ(cells[2].height, 1.0);
  EXPECT_FALSE(cells[3].line || cells[3].rug);
  EXPECT_TRUE(cells[4].rug);
  EXPECT_FALSE(cells[4].line);
  EXPECT_EQ(SqueezeTrail(FrequencyTrail{}, 3).size(), 3u);
}

}  // namespace
}  // namespace trailmap
