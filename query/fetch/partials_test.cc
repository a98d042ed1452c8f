#include "query/fetch/partials.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

HistogramQuery Query3() {
  HistogramQuery q;
  q.metric = "disk.latency";
  q.from = 100;
  q.to = 130;
  q.step = 10;
  q.group_by = "host";
  return q;
}

QueryCell Cell(uint32_t column, uint32_t group, uint64_t value, uint64_t count) {
  QueryCell cell;
  cell.column = column;
  cell.group = group;
  cell.histogram.Record(value, count);
  return cell;
}

TEST(Partials, UnifiesGroupsAndAddsCells) {
  Answer a;
  a.shard = "agg-1";
  a.histograms.unit = "ns";
  a.histograms.groups = {"web-2", "web-1"};
  a.histograms.cells = {Cell(0, 0, 100, 2), Cell(2, 1, 200, 3)};
  Answer b;
  b.shard = "agg-2";
  b.histograms.unit = "ns";
  b.histograms.groups = {"web-3", "web-1"};  // web-1 on both shards: merged
  b.histograms.cells = {Cell(2, 1, 200, 4), Cell(1, 0, 50, 1)};

  Result<MergedGrid> grid = MergePartials(Query3(), {a, b});
  ASSERT_TRUE(grid.ok()) << grid.status().ToString();
  EXPECT_EQ(grid->columns, 3u);
  EXPECT_EQ(grid->group_by, "host");
  ASSERT_EQ(grid->groups, (std::vector<std::string>{"web-1", "web-2", "web-3"}));
  EXPECT_EQ(grid->cells[0][2].count(), 7u);  // web-1, column 2: 3 + 4
  EXPECT_EQ(grid->cells[1][0].count(), 2u);  // web-2
  EXPECT_EQ(grid->cells[2][1].count(), 1u);  // web-3
  EXPECT_EQ(grid->Total().count(), 10u);
  EXPECT_EQ(grid->Column(2).count(), 7u);
  EXPECT_EQ(grid->Group(0).count(), 7u);
}

// Two shards each hold a cell near the bound (kMaxTotalCount = 2^62): their sum saturates in
// the query layer as in the store — the count stops at the bound, the proportions hold, the
// cell says so — and the merge never fails or wraps. A third shard's saturated cell is taken as
// it is.
TEST(Partials, CellsPastTheBoundSaturateAcrossShards) {
  const uint64_t near = kMaxTotalCount - 1;
  Answer a, b, c;
  for (Answer* x : {&a, &b, &c}) {
    x->histograms.unit = "ns";
    x->histograms.groups = {"web-1"};
  }
  a.shard = "agg-1";
  a.histograms.cells = {Cell(0, 0, 100, near)};
  b.shard = "agg-2";
  b.histograms.cells = {Cell(0, 0, 100000, near)};
  c.shard = "agg-3";
  QueryCell full = Cell(1, 0, 5000, near);
  full.histogram.Record(5000, 2);  // past the bound: saturated
  ASSERT_TRUE(full.histogram.saturated());
  c.histograms.cells = {full};

  Result<MergedGrid> grid = MergePartials(Query3(), {a, b, c});
  ASSERT_TRUE(grid.ok()) << grid.status().ToString();
  const Histogram& merged = grid->cells[0][0];
  EXPECT_TRUE(merged.saturated());
  EXPECT_EQ(merged.count(), kMaxTotalCount);
  EXPECT_EQ(merged.min(), 100u);
  EXPECT_EQ(merged.max(), 100000u);
  // Half below 1,000 and half above: the median sits at either value's bucket, p25 at the low.
  EXPECT_LT(merged.Percentile(25), 1000u);
  EXPECT_GT(merged.Percentile(75), 1000u);
  EXPECT_TRUE(grid->cells[0][1].saturated());
  EXPECT_EQ(grid->cells[0][1].count(), kMaxTotalCount);
  EXPECT_TRUE(grid->Total().saturated());
  EXPECT_EQ(grid->Total().count(), kMaxTotalCount);
}

TEST(Partials, UngroupedHasOneGroupEvenWithoutData) {
  HistogramQuery q = Query3();
  q.group_by = "";
  Result<MergedGrid> grid = MergePartials(q, {});
  ASSERT_TRUE(grid.ok());
  EXPECT_EQ(grid->groups, std::vector<std::string>{""});
  EXPECT_EQ(grid->unit, "ns");
  EXPECT_TRUE(grid->Total().empty());
}

TEST(Partials, RefusesCellsOutsideTheQuery) {
  Answer a;
  a.shard = "agg-1";
  a.histograms.unit = "ns";
  a.histograms.groups = {"web-1"};
  a.histograms.cells = {Cell(3, 0, 1, 1)};
  Result<MergedGrid> grid = MergePartials(Query3(), {a});
  ASSERT_FALSE(grid.ok());
  EXPECT_NE(grid.status().message().find("agg-1"), std::string::npos);
}

TEST(Partials, RefusesShardsThatDisagreeOnTheUnit) {
  Answer a, b;
  a.shard = "agg-1";
  a.histograms.unit = "ns";
  a.histograms.groups = {"x"};
  a.histograms.cells = {Cell(0, 0, 1, 1)};
  b = a;
  b.shard = "agg-2";
  b.histograms.unit = "B";
  b.histograms.kind = MetricKind::kSize;
  Result<MergedGrid> grid = MergePartials(Query3(), {a, b});
  ASSERT_FALSE(grid.ok());
  EXPECT_NE(grid.status().message().find("agg-2"), std::string::npos);
}

}  // namespace
}  // namespace trailmap
