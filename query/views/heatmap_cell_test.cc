#include "query/views/heatmap_cell.h"

#include <gtest/gtest.h>

#include "query/testing/views.h"

namespace trailmap {
namespace {

// Two one-second columns from 1000 of values up to 100 ns in 10 rows, by disk: sda holds 2 events
// at 15 ns and sdb 5 in column 0; the hosts' grid of column 0 splits the same 7 events.
HeatmapView ByDisk() {
  MergedGrid grid = testing_views::EmptyHostGrid("disk.latency", 1000, 1, 2, {"sda", "sdb"});
  grid.group_by = "disk";
  grid.cells[0][0].Record(15, 2);
  grid.cells[1][0].Record(15, 5);
  grid.cells[1][1].Record(95, 1);
  HeatmapOptions options;
  options.rows = 10;
  options.ymax = 100;
  return *AssembleHeatmap(grid, options);
}

MergedGrid Column0ByHost() {
  MergedGrid hosts = testing_views::EmptyHostGrid("disk.latency", 1000, 1, 1, {"web-1", "web-2"});
  hosts.cells[0][0].Record(15, 3);
  hosts.cells[1][0].Record(15, 4);
  return hosts;
}

TEST(HeatmapCell, TheCellsRangesCountGroupsAndHosts) {
  const HeatmapView view = ByDisk();
  const HeatmapCell cell = AssembleHeatmapCell(view, 1, 0, Column0ByHost(), {"tcp://b: silent"});
  EXPECT_EQ(cell.metric, "disk.latency");
  EXPECT_EQ(cell.unit, "ns");
  EXPECT_EQ(cell.from, 1000);
  EXPECT_EQ(cell.to, 1001);
  EXPECT_EQ(cell.row, 1u);
  EXPECT_EQ(cell.column, 0u);
  EXPECT_DOUBLE_EQ(cell.low, 10);
  EXPECT_DOUBLE_EQ(cell.high, 20);
  EXPECT_EQ(cell.count, 7u);
  EXPECT_EQ(cell.group_by, "disk");
  // Largest first.
  EXPECT_EQ(cell.groups, (std::vector<std::pair<std::string, uint64_t>>{{"sdb", 5}, {"sda", 2}}));
  EXPECT_EQ(cell.hosts,
            (std::vector<std::pair<std::string, uint64_t>>{{"web-2", 4}, {"web-1", 3}}));
  EXPECT_EQ(cell.missing_shards, std::vector<std::string>{"tcp://b: silent"});
}

TEST(HeatmapCell, AViewByHostListsItsHostsOnce) {
  HeatmapView view = ByDisk();
  view.group_by = "host";  // the hosts come from the second query alone
  const HeatmapCell cell = AssembleHeatmapCell(view, 1, 0, Column0ByHost(), {});
  EXPECT_TRUE(cell.groups.empty());
  EXPECT_EQ(cell.hosts.size(), 2u);
  const HeatmapCell empty = AssembleHeatmapCell(view, 5, 1, Column0ByHost(), {});
  EXPECT_EQ(empty.count, 0u);
  EXPECT_TRUE(empty.groups.empty());
}

}  // namespace
}  // namespace trailmap
