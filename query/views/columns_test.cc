#include "query/views/columns.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "query/testing/views.h"
#include "query/views/shade_levels.h"

namespace trailmap {
namespace {

// A grid grouped by host over one column, hosts in name order (as MergePartials gives them).
MergedGrid Fleet(const std::vector<std::pair<std::string, Histogram>>& hosts) {
  MergedGrid grid = testing_views::HostGrid({});
  for (const auto& [name, h] : hosts) {
    grid.groups.push_back(name);
    grid.cells.push_back({h});
  }
  return grid;
}

Histogram Band(uint64_t value, uint64_t count) {
  Histogram h;
  h.Record(value, count);
  return h;
}

std::vector<std::string> Order(const ColumnsView& view) {
  std::vector<std::string> out;
  for (const HostColumn& h : view.hosts) out.push_back(h.host);
  return out;
}

// Twenty ordinary hosts (1-3 ms, a few at 8 ms) and one, sim-006, with a slow tail.
MergedGrid FleetWithSlowHost() {
  std::vector<std::pair<std::string, Histogram>> hosts;
  for (int i = 1; i <= 20; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "sim-%03d", i);
    Histogram h;
    h.Record(1'000'000 + i * 10'000, 900);
    h.Record(3'000'000, 95 + i);
    h.Record(8'000'000, 5);
    if (i == 6) h.Record(40'000'000, 30);  // 3% of its events: its p99 is 40 ms
    hosts.emplace_back(name, h);
  }
  return Fleet(hosts);
}

TEST(ColumnsSort, ParsesEveryName) {
  for (const char* name : {"cov", "p50", "p90", "p99", "mean", "max", "count", "name", "bimodality"}) {
    Result<ColumnsSort> sort = ParseColumnsSort(name);
    ASSERT_TRUE(sort.ok()) << name;
    EXPECT_STREQ(ColumnsSortName(*sort), name);
  }
  EXPECT_FALSE(ParseColumnsSort("p42").ok());
  EXPECT_EQ(*ParseColumnShading("global"), ColumnShading::kGlobal);
  EXPECT_EQ(*ParseColumnShading("column"), ColumnShading::kPerColumn);
  EXPECT_FALSE(ParseColumnShading("row").ok());
}

TEST(Columns, CountsPerHostAreExactAndSortOrdersHold) {
  const MergedGrid grid = Fleet({{"a", Band(100, 7)},
                                 {"b", Band(5'000, 3)},
                                 {"c", Band(50, 11)},
                                 {"d", Band(5'000, 3)}});
  ColumnsOptions options;
  options.sort = ColumnsSort::kCount;
  ColumnsView view = *AssembleColumns(grid, options);
  EXPECT_EQ(Order(view), (std::vector<std::string>{"c", "a", "b", "d"}));  // ties by name
  ASSERT_EQ(view.columns(), 4u);
  uint64_t per_column[4] = {};
  for (uint32_t r = 0; r < view.rows(); ++r) {
    for (uint32_t c = 0; c < 4; ++c) per_column[c] += view.grid.count(r, c);
  }
  EXPECT_EQ(per_column[0], 11u);
  EXPECT_EQ(per_column[1], 7u);
  EXPECT_EQ(per_column[2], 3u);
  EXPECT_EQ(per_column[3], 3u);
  EXPECT_EQ(view.grid.total, 24u);
  EXPECT_EQ(view.hosts_total, 4u);

  options.sort = ColumnsSort::kP50;
  EXPECT_EQ(Order(*AssembleColumns(grid, options)),
            (std::vector<std::string>{"b", "d", "a", "c"}));
  options.reverse = true;
  EXPECT_EQ(Order(*AssembleColumns(grid, options)),
            (std::vector<std::string>{"c", "a", "b", "d"}));
  options.sort = ColumnsSort::kName;
  EXPECT_EQ(Order(*AssembleColumns(grid, options)),
            (std::vector<std::string>{"d", "c", "b", "a"}));
  options.reverse = false;
  options.limit = 2;
  const ColumnsView limited = *AssembleColumns(grid, options);
  EXPECT_EQ(Order(limited), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(limited.hosts_total, 4u);
  EXPECT_EQ(limited.grid.total, 10u);  // the shown hosts only
}

TEST(Columns, HostsWithoutEventsAreLeftOutAndAGridNotByHostIsRefused) {
  MergedGrid grid = Fleet({{"a", Band(100, 7)}, {"quiet", Histogram()}});
  EXPECT_EQ(Order(*AssembleColumns(grid, {})), (std::vector<std::string>{"a"}));
  grid.group_by = "op";
  EXPECT_FALSE(AssembleColumns(grid, {}).ok());
}

TEST(Columns, PlantedSlowHostSortsFirstByP99) {
  ColumnsOptions options;
  options.sort = ColumnsSort::kP99;
  const ColumnsView view = *AssembleColumns(FleetWithSlowHost(), options);
  ASSERT_EQ(view.hosts.size(), 20u);
  EXPECT_EQ(view.hosts[0].host, "sim-006");
  EXPECT_NEAR(static_cast<double>(view.hosts[0].p99), 40e6, 40e6 * 0.008);
  EXPECT_LT(view.hosts[1].p99, 10'000'000u);
  options.reverse = true;
  EXPECT_EQ(AssembleColumns(FleetWithSlowHost(), options)->hosts.back().host, "sim-006");
}

TEST(DescribeHost, CovAndBimodalityOnKnownDistributions) {
  // Two equal spikes (exact buckets below 128): mean 55, population stddev 45, bimodality 1.
  Histogram two;
  two.Record(10, 500);
  two.Record(100, 500);
  HostColumn h = DescribeHost("two", two);
  EXPECT_DOUBLE_EQ(h.mean, 55);
  EXPECT_NEAR(h.cov, 45.0 / 55.0, 1e-9);
  EXPECT_NEAR(h.skewness, 0, 1e-9);
  EXPECT_NEAR(h.kurtosis, 1, 1e-9);
  EXPECT_NEAR(h.bimodality, 1, 1e-9);

  // Uniform over 0..127: kurtosis 9/5 - 6/(5(n²-1)), bimodality ~5/9.
  Histogram uniform;
  for (uint64_t v = 0; v < 128; ++v) uniform.Record(v, 10);
  h = DescribeHost("uniform", uniform);
  EXPECT_NEAR(h.bimodality, 5.0 / 9.0, 1e-4);
  EXPECT_NEAR(h.cov, std::sqrt((128.0 * 128 - 1) / 12) / 63.5, 1e-9);

  // One value: no spread, no shape.
  h = DescribeHost("spike", Band(5'000'000, 40));
  EXPECT_EQ(h.count, 40u);
  EXPECT_EQ(h.cov, 0);
  EXPECT_EQ(h.bimodality, 0);

  // A bimodal host sorts ahead of a unimodal one by bimodality.
  Histogram hump;
  for (uint64_t v = 40; v < 60; ++v) hump.Record(v, 50 - 2 * (v > 50 ? v - 50 : 50 - v));
  ColumnsOptions options;
  options.sort = ColumnsSort::kBimodality;
  EXPECT_EQ(Order(*AssembleColumns(Fleet({{"hump", hump}, {"two", two}}), options)),
            (std::vector<std::string>{"two", "hump"}));
}

TEST(Columns, PerColumnShadingGivesEveryColumnTheDarkestLevel) {
  // A busy host and a quiet one: shaded per column, each has a cell at the darkest level;
  // shaded globally by linear count, the quiet host's fullest cell is far lighter.
  Histogram busy = Band(1'000'000, 10'000);
  busy.Record(2'000'000, 500);
  Histogram quiet = Band(3'000'000, 20);
  quiet.Record(1'000'000, 2);
  const MergedGrid grid = Fleet({{"busy", busy}, {"quiet", quiet}});
  for (Coloring coloring : {Coloring::kRank, Coloring::kLinear}) {
    ColumnsOptions options;
    options.coloring = coloring;
    options.sort = ColumnsSort::kName;
    const ColumnsView view = *AssembleColumns(grid, options);
    for (uint32_t c = 0; c < view.columns(); ++c) {
      uint8_t darkest = 0;
      uint32_t darkest_row = 0;
      for (uint32_t r = 0; r < view.rows(); ++r) {
        if (view.grid.levels[view.grid.Index(r, c)] > darkest) {
          darkest = view.grid.levels[view.grid.Index(r, c)];
          darkest_row = r;
        }
      }
      EXPECT_EQ(darkest, kShadeLevels - 1) << "column " << c;
      EXPECT_EQ(view.grid.count(darkest_row, c), view.column_max[c]);
    }
  }
  ColumnsOptions global;
  global.coloring = Coloring::kLinear;
  global.shading = ColumnShading::kGlobal;
  global.sort = ColumnsSort::kName;
  const ColumnsView view = *AssembleColumns(grid, global);
  uint8_t quiet_darkest = 0;
  for (uint32_t r = 0; r < view.rows(); ++r) {
    quiet_darkest = std::max(quiet_darkest, view.grid.levels[view.grid.Index(r, 1)]);
  }
  EXPECT_EQ(quiet_darkest, 1);  // 20 / 10,000 of the fullest cell: the lightest non-zero shade
}

TEST(Columns, YRangeAsTheHeatMap) {
  ColumnsOptions options;
  options.rows = 10;
  ColumnsView view = *AssembleColumns(FleetWithSlowHost(), options);
  EXPECT_EQ(view.grid.ymax, 50'000'000u);  // RoundTop of the largest midpoint, ~40 ms
  EXPECT_EQ(view.grid.above, 0u);
  options.clip_percent = 0.2;  // 40 events: the 30 slow ones (0.15%) and ten at 8 ms
  view = *AssembleColumns(FleetWithSlowHost(), options);
  EXPECT_EQ(view.grid.ymax, 10'000'000u);
  EXPECT_EQ(view.grid.above, 30u);
  options.ymax = 5'000'000;
  view = *AssembleColumns(FleetWithSlowHost(), options);
  EXPECT_EQ(view.grid.ymax, 5'000'000u);
  EXPECT_FALSE(view.grid.ymax_auto);
}

}  // namespace
}  // namespace trailmap
