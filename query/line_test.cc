#include "query/line.h"

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

}  // namespace
}  // namespace trailmap
