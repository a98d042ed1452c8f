#include "query/views/line.h"

#include <gtest/gtest.h>

#include <cmath>

namespace trailmap {
namespace {

// cpu.usage in 0.01% by host, 4 one-second columns. Host h (1..5) records h*10% + c% in column
// c, plus (for host 5 only) a second sample of 90% in column 1; host 3 has no data in column 2.
MergedGrid Grid() {
  MergedGrid g;
  g.metric = "cpu.usage";
  g.kind = MetricKind::kScalar;
  g.unit = "0.01%";
  g.from = 1'795'363'200;
  g.step = 1;
  g.columns = 4;
  g.to = g.from + 4;
  g.group_by = "host";
  g.groups = {"h1", "h2", "h3", "h4", "h5"};
  g.cells.assign(5, std::vector<Histogram>(4));
  for (int h = 1; h <= 5; ++h) {
    for (uint32_t c = 0; c < 4; ++c) {
      if (h == 3 && c == 2) continue;
      g.cells[h - 1][c].Record(static_cast<uint64_t>((h * 10 + c) * 100));
    }
  }
  g.cells[4][1].Record(9000);
  return g;
}

TEST(LineView, AvgMaxMinSumInTheDisplayUnit) {
  LineView v = AssembleLineView(Grid(), {.stat = LineStat::kAvg, .top = 0});
  EXPECT_EQ(v.unit, "%");
  ASSERT_EQ(v.series.size(), 5u);
  // Largest mean first: h5 (50, (51+90)/2, 52, 53).
  EXPECT_EQ(v.series[0].name, "h5");
  EXPECT_DOUBLE_EQ(v.series[0].values[1], 70.5);
  EXPECT_DOUBLE_EQ(v.series[0].mean, (50 + 70.5 + 52 + 53) / 4);
  EXPECT_EQ(v.series[2].name, "h3");
  EXPECT_TRUE(std::isnan(v.series[2].values[2]));  // a gap, not a zero
  EXPECT_DOUBLE_EQ(v.series[2].mean, (30 + 31 + 33) / 3.0);
  EXPECT_DOUBLE_EQ(AssembleLineView(Grid(), {.stat = LineStat::kMax}).series[0].values[1], 90);
  EXPECT_DOUBLE_EQ(AssembleLineView(Grid(), {.stat = LineStat::kMin}).series[0].values[1], 51);
  EXPECT_DOUBLE_EQ(AssembleLineView(Grid(), {.stat = LineStat::kSum}).series[0].values[1], 141);
  EXPECT_DOUBLE_EQ(v.Top(), 70.5);
}

TEST(LineView, TopNAndTheRestAsOther) {
  LineView v = AssembleLineView(Grid(), {.stat = LineStat::kSum, .top = 2});
  ASSERT_EQ(v.series.size(), 3u);
  EXPECT_EQ(v.series[0].name, "h5");
  EXPECT_EQ(v.series[1].name, "h4");
  EXPECT_EQ(v.series[2].name, "other");
  EXPECT_TRUE(v.series[2].other);
  EXPECT_EQ(v.merged, 3u);
  // other = h1 + h2 + h3 merged: column 0 sums 10 + 20 + 30, column 2 lacks h3.
  EXPECT_DOUBLE_EQ(v.series[2].values[0], 60);
  EXPECT_DOUBLE_EQ(v.series[2].values[2], 12 + 22);
  // Stacked: the top is the largest column total.
  LineView s = AssembleLineView(Grid(), {.stat = LineStat::kSum, .top = 2, .stacked = true});
  EXPECT_TRUE(s.area);
  EXPECT_DOUBLE_EQ(s.Top(), 141 + 41 + (11 + 21 + 31));  // column 1
}

TEST(LineView, LatencyKeepsNanosecondsAndOneGroupIsNamedForTheMetric) {
  MergedGrid g;
  g.metric = "disk.latency";
  g.unit = "ns";
  g.from = 0;
  g.to = 2;
  g.columns = 2;
  g.groups = {""};
  g.cells.assign(1, std::vector<Histogram>(2));
  g.cells[0][0].Record(1000, 3);
  LineView v = AssembleLineView(g, {});
  EXPECT_EQ(v.unit, "ns");
  ASSERT_EQ(v.series.size(), 1u);
  EXPECT_EQ(v.series[0].name, "disk.latency");
  EXPECT_DOUBLE_EQ(v.series[0].values[0], 1000);
  EXPECT_TRUE(std::isnan(v.series[0].values[1]));
  EXPECT_FALSE(ParseLineStat("median").ok());
}

// Two shards' summary answers merge into one grid: groups unified, equal cells added.
TEST(LineView, MergeSummariesAcrossShards) {
  HistogramQuery q{.metric = "cpu.usage", .from = 100, .to = 104, .step = 2, .group_by = "host"};
  Answer a, b;
  a.shard = "agg-1";
  a.histograms.unit = "%";
  a.histograms.groups = {"h2", "h9"};
  a.histograms.summaries = {{0, 0, 2, 30, 10, 20}, {1, 1, 1, 5, 5, 5}};
  b.shard = "agg-2";
  b.histograms.unit = "%";
  b.histograms.groups = {"h2"};
  b.histograms.summaries = {{0, 0, 1, 40, 40, 40}};
  Result<SummaryGrid> grid = MergeSummaries(q, {a, b});
  ASSERT_TRUE(grid.ok()) << grid.status().ToString();
  EXPECT_EQ(grid->columns, 2u);
  EXPECT_EQ(grid->groups, (std::vector<std::string>{"h2", "h9"}));
  EXPECT_EQ(grid->cells[0][0].count, 3u);
  EXPECT_DOUBLE_EQ(grid->cells[0][0].sum, 70);
  EXPECT_DOUBLE_EQ(grid->cells[0][0].max, 40);
  LineView v = AssembleLineView(*grid, {.stat = LineStat::kAvg});
  ASSERT_EQ(v.series.size(), 2u);
  EXPECT_EQ(v.series[0].name, "h2");
  EXPECT_DOUBLE_EQ(v.series[0].values[0], 70.0 / 3);
  EXPECT_TRUE(std::isnan(v.series[0].values[1]));
  // A shard that predates summaries answers with fixed-point histograms: summarized, scaled.
  Answer old;
  old.shard = "agg-old";
  old.histograms.unit = "0.01%";
  old.histograms.groups = {"h9"};
  Histogram h;
  h.Record(1250, 2);
  old.histograms.cells.push_back(QueryCell{1, 0, h});
  Result<SummaryGrid> mixed = MergeSummaries(q, {a, old});
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  EXPECT_EQ(mixed->unit, "%");
  EXPECT_EQ(mixed->cells[1][1].count, 3u);
  EXPECT_DOUBLE_EQ(mixed->cells[1][1].sum, 5 + 25);
  EXPECT_DOUBLE_EQ(mixed->cells[1][1].max, 12.5);
  // A shard in another unit, or a cell past the columns, is refused, naming the shard.
  b.histograms.unit = "B";
  EXPECT_NE(MergeSummaries(q, {a, b}).status().message().find("agg-2 says B"), std::string::npos);
  b.histograms.unit = "%";
  b.histograms.summaries[0].column = 2;
  EXPECT_NE(MergeSummaries(q, {a, b}).status().message().find("agg-2: summary of column 2"),
            std::string::npos);
}

}  // namespace
}  // namespace trailmap
