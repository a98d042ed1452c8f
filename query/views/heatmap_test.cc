#include "query/views/heatmap.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace trailmap {
namespace {

// A grid of `columns` one-second columns, one group, starting at 1000.
MergedGrid Grid(uint32_t columns) {
  MergedGrid grid;
  grid.metric = "disk.latency";
  grid.from = 1000;
  grid.to = 1000 + columns;
  grid.step = 1;
  grid.columns = columns;
  grid.groups = {""};
  grid.cells.assign(1, std::vector<Histogram>(columns));
  return grid;
}

TEST(PlanColumns, FitsTheRange) {
  EXPECT_EQ(PlanColumns(0, 300, 0, 0, 600)->step, 1u);
  EXPECT_EQ(PlanColumns(0, 300, 0, 0, 600)->columns, 300u);
  EXPECT_EQ(PlanColumns(0, 3600, 0, 0, 120)->step, 30u);
  EXPECT_EQ(PlanColumns(0, 3600, 0, 0, 120)->columns, 120u);
  EXPECT_EQ(PlanColumns(0, 100, 0, 0, 120)->step, 1u);  // never below one second
  EXPECT_EQ(PlanColumns(0, 3600, 60, 0, 120)->step, 60u);
  EXPECT_EQ(PlanColumns(0, 3600, 0, 7, 120)->columns, 515u);  // ceil(3600 / 7)
  EXPECT_FALSE(PlanColumns(10, 10, 0, 0, 120).ok());
}

// Without --step or --cols, a step the rollups serve exactly, and the first column on a
// multiple of its resolution.
TEST(PlanColumns, TheDefaultStepIsServedByTheRollups) {
  EXPECT_EQ(RollupStep(0), 1u);
  EXPECT_EQ(RollupStep(3), 5u);
  EXPECT_EQ(RollupStep(11), 20u);
  EXPECT_EQ(RollupStep(61), 120u);
  EXPECT_EQ(RollupStep(601), 1200u);
  EXPECT_EQ(RollupStep(86401), 172800u);
  EXPECT_EQ(StoredResolutionOf(1200), 600u);
  EXPECT_EQ(StoredResolutionOf(120), 60u);
  EXPECT_EQ(StoredResolutionOf(20), 10u);
  EXPECT_EQ(StoredResolutionOf(5), 1u);
  // A week at 600 columns: 1,008 s a column would read seconds and rollups of every kind at its
  // edges; 1,200 s (two 10-minute blocks) from a 10-minute boundary reads two keys a column.
  const int64_t now = 1'700'000'123;
  Result<ColumnPlan> week = PlanColumns(now - 7 * 86400, now, 0, 0, 600);
  ASSERT_TRUE(week.ok());
  EXPECT_EQ(week->step, 1200u);
  EXPECT_EQ(week->from, now - 7 * 86400 + 277);  // 323 s past a 10-minute boundary: on to it
  EXPECT_EQ(week->columns, 504u);                // ceil((7 d - 277 s) / 20 min)
  // An hour in a terminal (120 columns): 30 s columns from 10 s rollups, 7 s left out.
  Result<ColumnPlan> hour = PlanColumns(now - 3600, now, 0, 0, 120);
  EXPECT_EQ(hour->step, 30u);
  EXPECT_EQ(hour->from, now - 3600 + 7);
  EXPECT_EQ(hour->columns, 120u);
  // Five minutes: one second a column, from where it was asked.
  EXPECT_EQ(PlanColumns(now - 300, now, 0, 0, 600)->from, now - 300);
}

TEST(RoundTop, NextOneTwoOrFive) {
  const std::pair<uint64_t, uint64_t> cases[] = {
      {0, 1},
      {1, 2},
      {3, 5},
      {7, 10},
      {999, 1000},
      {1000, 2000},
      {1001, 2000},
      {2000, 5000},
      {4999, 5000},
      {5000, 10000},
      {12'345'678, 20'000'000},
      {150'000'000, 200'000'000},
  };
  for (const auto& [value, want] : cases) EXPECT_EQ(RoundTop(value), want) << value;
}

TEST(Heatmap, CellCountsAreExactBucketSums) {
  MergedGrid grid = Grid(3);
  // Exact buckets (< 128) make midpoints equal the values.
  grid.cells[0][0].Record(5, 10);  // row 5 * 10 / 100 = 0
  grid.cells[0][0].Record(15, 3);  // row 1
  grid.cells[0][1].Record(99, 7);  // row 9
  grid.cells[0][2].Record(50, 1);  // row 5
  grid.cells[0][2].Record(55, 2);  // row 5 as well
  HeatmapOptions options;
  options.rows = 10;
  options.ymax = 100;
  Result<HeatmapView> view = AssembleHeatmap(grid, options);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->rows, 10u);
  EXPECT_EQ(view->columns, 3u);
  EXPECT_EQ(view->count(0, 0), 10u);
  EXPECT_EQ(view->count(1, 0), 3u);
  EXPECT_EQ(view->count(9, 1), 7u);
  EXPECT_EQ(view->count(5, 2), 3u);
  uint64_t sum = 0;
  for (uint64_t c : view->counts) sum += c;
  EXPECT_EQ(sum, 23u);
  EXPECT_EQ(view->total, 23u);
  EXPECT_EQ(view->above, 0u);
  EXPECT_EQ(view->nonzero_cells, 4u);
  EXPECT_DOUBLE_EQ(view->RowLow(5), 50);
  EXPECT_DOUBLE_EQ(view->RowHigh(5), 60);
}

TEST(Heatmap, BucketsGoToTheRowOfTheirMidpoint) {
  MergedGrid grid = Grid(1);
  // 1000 falls in bucket [1000, 1007], midpoint 1003: row 1003 * 4 / 2000 = 2.
  grid.cells[0][0].Record(1000, 4);
  // 1999 falls in [1984, 1999], midpoint 1991: row 3.
  grid.cells[0][0].Record(1999, 1);
  HeatmapOptions options;
  options.rows = 4;
  options.ymax = 2000;
  HeatmapView view = *AssembleHeatmap(grid, options);
  EXPECT_EQ(view.count(2, 0), 4u);
  EXPECT_EQ(view.count(3, 0), 1u);
}

TEST(Heatmap, ValuesAtOrAboveYmaxAreCountedNotDrawn) {
  MergedGrid grid = Grid(2);
  grid.cells[0][0].Record(10, 5);
  grid.cells[0][1].Record(100, 2);  // == ymax: above
  grid.cells[0][1].Record(120, 1);
  HeatmapOptions options;
  options.rows = 5;
  options.ymax = 100;
  HeatmapView view = *AssembleHeatmap(grid, options);
  EXPECT_EQ(view.above, 3u);
  EXPECT_EQ(view.total, 8u);
  EXPECT_EQ(view.count(0, 0), 5u);
  EXPECT_FALSE(view.ymax_auto);
}

TEST(Heatmap, AutomaticYmaxIsTheRoundTopAboveTheData) {
  MergedGrid grid = Grid(2);
  grid.cells[0][0].Record(3'000'000, 100);  // 3 ms
  grid.cells[0][1].Record(13'000'000, 1);   // 13 ms → 20 ms
  HeatmapView view = *AssembleHeatmap(grid, {});
  EXPECT_EQ(view.ymax, 20'000'000u);
  EXPECT_TRUE(view.ymax_auto);
  EXPECT_EQ(view.above, 0u);
  EXPECT_EQ(view.rows, 50u);
}

TEST(Heatmap, ClipLeavesTheTopPercentAbove) {
  MergedGrid grid = Grid(10);
  for (uint32_t c = 0; c < 10; ++c) grid.cells[0][c].Record(2'000'000 + c * 1000, 999);  // ~2 ms
  grid.cells[0][3].Record(900'000'000, 10);  // 10 outliers at 900 ms: 0.1% of 10000
  HeatmapView unclipped = *AssembleHeatmap(grid, {});
  EXPECT_EQ(unclipped.ymax, 1'000'000'000u);
  EXPECT_EQ(unclipped.above, 0u);
  HeatmapOptions options;
  options.clip_percent = 0.1;
  HeatmapView clipped = *AssembleHeatmap(grid, options);
  EXPECT_EQ(clipped.ymax, 5'000'000u);  // the 99.9th percentile is ~2 ms
  EXPECT_EQ(clipped.above, 10u);
  EXPECT_DOUBLE_EQ(clipped.clip_percent, 0.1);
}

// A dense band of large counts and one outlier cell of count 1.
MergedGrid BandAndOutlier() {
  MergedGrid grid = Grid(20);
  for (uint32_t c = 0; c < 20; ++c) grid.cells[0][c].Record(10, 1000 + c);  // distinct counts
  grid.cells[0][7].Record(90, 1);
  return grid;
}

TEST(Coloring, RankKeepsALoneOutlierVisible) {
  HeatmapOptions options;
  options.rows = 10;
  options.ymax = 100;
  HeatmapView view = *AssembleHeatmap(BandAndOutlier(), options);
  ASSERT_EQ(view.nonzero_cells, 21u);
  const size_t outlier = view.Index(9, 7);
  EXPECT_EQ(view.counts[outlier], 1u);
  EXPECT_DOUBLE_EQ(view.saturation[outlier], 1.0 / 21);  // position 1 of 21
  EXPECT_GE(view.levels[outlier], 2);                    // visibly more than the faintest shade
  const size_t fullest = view.Index(1, 19);
  EXPECT_EQ(view.counts[fullest], 1019u);
  EXPECT_DOUBLE_EQ(view.saturation[fullest], 1.0);
  EXPECT_EQ(view.levels[fullest], kShadeLevels - 1);
}

TEST(Coloring, LinearGivesTheOutlierTheMinimumShade) {
  HeatmapOptions options;
  options.rows = 10;
  options.ymax = 100;
  options.coloring = Coloring::kLinear;
  HeatmapView view = *AssembleHeatmap(BandAndOutlier(), options);
  const size_t outlier = view.Index(9, 7);
  EXPECT_DOUBLE_EQ(view.saturation[outlier], 1.0 / 1019);
  EXPECT_EQ(view.levels[outlier], 1);  // one shade above the background, no more
  EXPECT_DOUBLE_EQ(view.saturation[view.Index(1, 19)], 1.0);
  EXPECT_EQ(view.levels[view.Index(0, 0)], 0);  // empty: the background
}

TEST(Coloring, EqualCountsShareTheMeanOfTheirPositions) {
  HeatmapView view;
  view.rows = 1;
  view.columns = 5;
  view.counts = {0, 3, 3, 7, 1};
  ColorHeatmap(&view);
  EXPECT_DOUBLE_EQ(view.saturation[0], 0);
  EXPECT_DOUBLE_EQ(view.saturation[4], 1.0 / 4);
  EXPECT_DOUBLE_EQ(view.saturation[1], 2.5 / 4);  // positions 2 and 3
  EXPECT_DOUBLE_EQ(view.saturation[2], 2.5 / 4);
  EXPECT_DOUBLE_EQ(view.saturation[3], 1.0);
  EXPECT_EQ(view.max_count, 7u);
}

TEST(Coloring, SparseDataKeepsItsOnesMidScaleAndTheBandOnTop) {
  // 90 cells of one event (sparse outliers) and 10 of a dense band: the ones must not take the
  // band's darkest shades.
  HeatmapView view;
  view.rows = 1;
  view.columns = 100;
  view.counts.assign(100, 1);
  for (size_t i = 90; i < 100; ++i) view.counts[i] = 100 + i;
  ColorHeatmap(&view);
  EXPECT_DOUBLE_EQ(view.saturation[0], 45.5 / 100);
  EXPECT_EQ(view.levels[0], 15);                 // ceil(0.455 * 31)
  EXPECT_EQ(view.levels[99], kShadeLevels - 1);  // the fullest band cell
  EXPECT_EQ(view.levels[90], 29);                // ceil(0.91 * 31): the band is clearly darker
}

TEST(Heatmap, GroupedViewKeepsPerGroupCounts) {
  MergedGrid grid = Grid(1);
  grid.group_by = "host";
  grid.groups = {"a", "b"};
  grid.cells.assign(2, std::vector<Histogram>(1));
  grid.cells[0][0].Record(10, 3);
  grid.cells[1][0].Record(11, 4);
  HeatmapOptions options;
  options.rows = 10;
  options.ymax = 100;
  HeatmapView view = *AssembleHeatmap(grid, options);
  ASSERT_EQ(view.groups.size(), 2u);
  EXPECT_EQ(view.count(1, 0), 7u);
  const auto& parts = view.breakdown[view.Index(1, 0)];
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0], (std::pair<uint32_t, uint64_t>{0, 3}));
  EXPECT_EQ(parts[1], (std::pair<uint32_t, uint64_t>{1, 4}));
}

TEST(ShadeLevel, EmptyIsBackgroundAndEveryOtherCellAtLeastOne) {
  EXPECT_EQ(ShadeLevel(0.0001, true), 1);
  EXPECT_EQ(ShadeLevel(1.0, true), kShadeLevels - 1);
  EXPECT_EQ(ShadeLevel(0.5, false), 0);
}

// A fleet-like column: a fast band at 5, 20 and 40 µs, a disk band near 5 ms, an outlier at
// 90 ms.
MergedGrid FastBandAndDisk() {
  MergedGrid grid = Grid(4);
  for (uint32_t c = 0; c < 4; ++c) {
    grid.cells[0][c].Record(5'000, 300);
    grid.cells[0][c].Record(20'000, 200);
    grid.cells[0][c].Record(40'000, 100);
    grid.cells[0][c].Record(5'000'000 + c * 100'000, 50);
  }
  grid.cells[0][2].Record(90'000'000, 1);
  return grid;
}

TEST(Zoom, RevealsStructureThatTheFullRangePutsInOneRow) {
  HeatmapOptions full;
  full.ymax = 100'000'000;  // 0-100 ms in 50 rows of 2 ms
  HeatmapView wide = *AssembleHeatmap(FastBandAndDisk(), full);
  EXPECT_EQ(wide.count(0, 0), 600u);  // the three fast values share row 0
  HeatmapOptions zoom;
  zoom.ymax = 50'000;  // 0-50 µs in 50 rows of 1 µs
  HeatmapView near = *AssembleHeatmap(FastBandAndDisk(), zoom);
  std::vector<uint32_t> lit;
  for (uint32_t r = 0; r < near.rows; ++r) {
    if (near.count(r, 0)) lit.push_back(r);
  }
  // Three separate bands with empty rows between them: each bucket (64, 256 and 512 ns wide)
  // is spread over the one or two 1-µs rows it overlaps.
  ASSERT_GE(lit.size(), 3u);
  EXPECT_LE(lit.size(), 6u);
  std::set<int> bands;
  for (uint32_t r : lit) {
    for (int us : {5, 20, 40}) {
      if (std::abs(static_cast<double>(r) + 0.5 - us) <= 1.5) bands.insert(us);
    }
  }
  EXPECT_EQ(bands, (std::set<int>{5, 20, 40})) << "rows lit: " << testing::PrintToString(lit);
  EXPECT_EQ(near.count(12, 0), 0u);
  EXPECT_EQ(near.count(30, 0), 0u);
  EXPECT_EQ(near.above, 4u * 50 + 1);
  uint64_t drawn = 0;
  for (uint64_t c : near.counts) drawn += c;
  EXPECT_EQ(drawn + near.above + near.below, near.total);
}

TEST(Zoom, NoBandingWhenRowsAreNarrowerThanBuckets) {
  MergedGrid grid = Grid(1);
  for (uint64_t v = 1000; v < 3000; ++v) grid.cells[0][0].Record(v, 1);  // uniform
  HeatmapOptions options;
  options.rows = 100;  // 30-ns rows over buckets 16 and 32 ns wide
  options.ymax = 3000;
  HeatmapView view = *AssembleHeatmap(grid, options);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (uint32_t r = 34; r < 99; ++r) {  // row 99's bucket reaches past 3000
    lo = std::min(lo, view.count(r, 0));
    hi = std::max(hi, view.count(r, 0));
  }
  // Midpoints would give rows 1 or 2 buckets (16/32 or 32/64 events); spread, every row has ~30.
  EXPECT_GE(lo, 28u);
  EXPECT_LE(hi, 32u);
  uint64_t drawn = 0;
  for (uint64_t c : view.counts) drawn += c;
  EXPECT_EQ(drawn + view.above + view.below, 2000u);
}

TEST(Zoom, YminLeavesTheSmallValuesBelow) {
  HeatmapOptions options;
  options.ymin = 10'000;
  options.ymax = 50'000;
  options.rows = 40;
  HeatmapView view = *AssembleHeatmap(FastBandAndDisk(), options);
  EXPECT_EQ(view.below, 4u * 300);
  EXPECT_DOUBLE_EQ(view.RowLow(0), 10'000);
  EXPECT_DOUBLE_EQ(view.RowHigh(39), 50'000);
  options.ymin = 50'000;
  EXPECT_FALSE(AssembleHeatmap(FastBandAndDisk(), options).ok());
}

TEST(Scale, LogRowsAreEqualInLogValue) {
  HeatmapOptions options;
  options.scale = ValueScale::kLog;
  options.rows = 20;
  HeatmapView view = *AssembleHeatmap(FastBandAndDisk(), options);
  EXPECT_EQ(view.ymin, 1'000u);  // the power of ten below 5 µs
  EXPECT_EQ(view.ymax, 100'000'000u);
  EXPECT_NEAR(view.RowHigh(0) / view.RowLow(0), view.RowHigh(10) / view.RowLow(10), 1e-9);
  EXPECT_NEAR(view.RowHigh(0) / view.RowLow(0), std::pow(1e5, 1.0 / 20), 1e-9);
  // The fast band and the disk band are rows apart, not squashed into row 0.
  uint32_t lit = 0;
  for (uint32_t r = 0; r < view.rows; ++r) lit += view.count(r, 0) != 0;
  EXPECT_GE(lit, 4u);
  uint64_t drawn = 0;
  for (uint64_t c : view.counts) drawn += c;
  EXPECT_EQ(drawn + view.above + view.below, view.total);
}

TEST(Coloring, PerColumnGivesEveryColumnTheDarkestShade) {
  MergedGrid grid = Grid(3);
  grid.cells[0][0].Record(10, 1000);
  grid.cells[0][0].Record(50, 10);
  grid.cells[0][1].Record(30, 2);  // a quiet second
  grid.cells[0][2].Record(70, 1);
  grid.cells[0][2].Record(90, 3);
  for (Coloring coloring : {Coloring::kRank, Coloring::kLinear}) {
    HeatmapOptions options;
    options.rows = 10;
    options.ymax = 100;
    options.per_column = true;
    options.coloring = coloring;
    HeatmapView view = *AssembleHeatmap(grid, options);
    EXPECT_EQ(view.levels[view.Index(1, 0)], kShadeLevels - 1);
    EXPECT_EQ(view.levels[view.Index(3, 1)], kShadeLevels - 1);
    EXPECT_EQ(view.levels[view.Index(9, 2)], kShadeLevels - 1);
    EXPECT_LT(view.levels[view.Index(7, 2)], kShadeLevels - 1);
    options.per_column = false;
    HeatmapView whole = *AssembleHeatmap(grid, options);
    EXPECT_LT(whole.levels[whole.Index(3, 1)], kShadeLevels - 1);
  }
}

TEST(Palette, Parse) {
  EXPECT_EQ(*ParsePalette("false"), Palette::kFalse);
  EXPECT_EQ(*ParsePalette("heat"), Palette::kHeat);
  EXPECT_FALSE(ParsePalette("rainbow").ok());
}

TEST(SidePanel, AverageEventsPerSecondPerRowAndOverTheRange) {
  MergedGrid grid = Grid(4);
  for (uint32_t c = 0; c < 4; ++c) grid.cells[0][c].Record(10, 100);
  grid.cells[0][1].Record(90, 8);
  HeatmapOptions options;
  options.rows = 10;
  options.ymax = 100;
  HeatmapView view = *AssembleHeatmap(grid, options);
  const std::vector<double> rates = RowEventsPerSecond(view);
  EXPECT_DOUBLE_EQ(rates[1], 100);
  EXPECT_DOUBLE_EQ(rates[9], 2);
  EXPECT_DOUBLE_EQ(rates[5], 0);
  EXPECT_DOUBLE_EQ(RangeEventsPerSecond(view), 102);
}

MergedGrid ThreeHosts() {
  MergedGrid grid = Grid(2);
  grid.group_by = "host";
  grid.groups = {"a", "b", "c"};
  grid.cells.assign(3, std::vector<Histogram>(2));
  grid.cells[0][0].Record(10, 3);
  grid.cells[1][0].Record(10, 4);
  grid.cells[2][0].Record(10, 5);
  grid.cells[2][1].Record(90, 1);
  return grid;
}

TEST(Selection, ChosenKeepTheirHuesTheRestAreOther) {
  HeatmapOptions options;
  options.rows = 10;
  options.ymax = 100;
  options.select = {"c"};
  HeatmapView view = *AssembleHeatmap(ThreeHosts(), options);
  EXPECT_EQ(view.groups, (std::vector<std::string>{"c", "other"}));
  EXPECT_EQ(view.count(1, 0), 12u);
  const auto& parts = view.breakdown[view.Index(1, 0)];
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0], (std::pair<uint32_t, uint64_t>{0, 5}));
  EXPECT_EQ(parts[1], (std::pair<uint32_t, uint64_t>{1, 7}));
  EXPECT_EQ(view.excluded, 0u);
  EXPECT_EQ(view.total, 13u);
}

TEST(Selection, IsolateAndExclude) {
  HeatmapOptions options;
  options.rows = 10;
  options.ymax = 100;
  options.select = {"c"};
  options.selection = Selection::kIsolate;
  HeatmapView only = *AssembleHeatmap(ThreeHosts(), options);
  EXPECT_EQ(only.groups, (std::vector<std::string>{"c"}));
  EXPECT_EQ(only.count(1, 0), 5u);
  EXPECT_EQ(only.count(9, 1), 1u);
  EXPECT_EQ(only.excluded, 7u);
  EXPECT_EQ(only.total, 6u);
  options.selection = Selection::kExclude;
  HeatmapView rest = *AssembleHeatmap(ThreeHosts(), options);
  EXPECT_EQ(rest.groups, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(rest.count(1, 0), 7u);
  EXPECT_EQ(rest.count(9, 1), 0u);
  EXPECT_EQ(rest.excluded, 6u);
  options.select = {"nosuch"};
  EXPECT_FALSE(AssembleHeatmap(ThreeHosts(), options).ok());
  options.select = {"c"};
  EXPECT_FALSE(AssembleHeatmap(Grid(2), options).ok());  // not grouped
}

TEST(CellDetails, HostsOfACellAddUpToIt) {
  // The view is not grouped; the details come from the same column grouped by host.
  MergedGrid hosts = ThreeHosts();
  MergedGrid plain = Grid(2);
  for (uint32_t c = 0; c < 2; ++c) plain.cells[0][c] = hosts.Column(c);
  HeatmapOptions options;
  options.rows = 10;
  options.ymax = 100;
  HeatmapView view = *AssembleHeatmap(plain, options);
  ASSERT_EQ(RowOf(view, 10), 1);
  EXPECT_EQ(RowOf(view, 100), -1);
  MergedGrid column0 = hosts;
  column0.columns = 1;
  for (auto& cells : column0.cells) cells.resize(1);
  const auto parts = CellGroups(column0, view, 1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], (std::pair<std::string, uint64_t>{"c", 5}));
  EXPECT_EQ(parts[2], (std::pair<std::string, uint64_t>{"a", 3}));
  EXPECT_EQ(parts[0].second + parts[1].second + parts[2].second, view.count(1, 0));
}

}  // namespace
}  // namespace trailmap
