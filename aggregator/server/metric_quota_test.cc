#include "aggregator/server/metric_quota.h"

#include <gtest/gtest.h>

namespace trailmap::aggregator {
namespace {

using std::chrono::hours;
using Clock = MetricQuota::Clock;

TEST(MetricQuota, EachKeyGetsItsNamesADayAndNoMore) {
  MetricQuota quota({.new_metrics_per_day = 4, .max_keys = 10});
  const Clock::time_point t0{};
  EXPECT_TRUE(quota.Take("key web", {"a", "b", "c"}, t0).empty());
  EXPECT_EQ(quota.Take("key web", {"d", "e", "f"}, t0), (std::vector<std::string>{"e", "f"}));
  EXPECT_TRUE(quota.Take("key db", {"e", "f"}, t0).empty());  // another key: its own quota
  // A quarter of a day later: one more name.
  EXPECT_EQ(quota.Take("key web", {"e", "f"}, t0 + hours(6)), (std::vector<std::string>{"f"}));
  // Never more than a day's worth, however long it waited.
  EXPECT_EQ(quota.Take("key web", {"1", "2", "3", "4", "5"}, t0 + hours(24 * 30)),
            (std::vector<std::string>{"5"}));
  MetricQuota none({.new_metrics_per_day = 0});
  EXPECT_TRUE(none.Take("key web", std::vector<std::string>(1000, "x"), t0).empty());
}

Batch TwoMetrics() {
  Batch b;
  b.series = {{"old.latency", MetricKind::kLatency, "ns", ""},
              {"new.latency", MetricKind::kLatency, "ns", "op=r"},
              {"old.latency", MetricKind::kLatency, "ns", "op=w"},
              {"new.gauge", MetricKind::kScalar, "1", ""}};
  b.seconds = {{100, {{0, "h0"}, {1, "h1"}, {2, "h2"}}, {{3, 1.5}}, {}},
               {101, {{1, "h3"}, {2, "h4"}}, {}, {}}};
  return b;
}

// The refused metrics' series and items leave the batch, each named with its metric; the rest is
// renumbered and stays whole.
TEST(MetricQuota, DropMetricsLeavesOutTheirSeriesAndItemsAndKeepsTheRest) {
  Batch b = TwoMetrics();
  Refusals refused;
  const size_t dropped = DropMetrics(
      &b, {"new.latency", "new.gauge"},
      [](std::string_view metric) { return "quota: " + std::string(metric); }, &refused);
  EXPECT_EQ(dropped, 2u);
  ASSERT_EQ(b.series.size(), 2u);
  EXPECT_EQ(b.series[0].fields, "");
  EXPECT_EQ(b.series[1].fields, "op=w");
  ASSERT_EQ(b.seconds[0].histograms.size(), 2u);
  EXPECT_EQ(b.seconds[0].histograms[0].series, 0u);
  EXPECT_EQ(b.seconds[0].histograms[0].encoded, "h0");
  EXPECT_EQ(b.seconds[0].histograms[1].series, 1u);
  EXPECT_EQ(b.seconds[0].histograms[1].encoded, "h2");
  EXPECT_TRUE(b.seconds[0].scalars.empty());
  ASSERT_EQ(b.seconds[1].histograms.size(), 1u);
  EXPECT_EQ(b.seconds[1].histograms[0].series, 1u);
  EXPECT_EQ(b.seconds[1].histograms[0].encoded, "h4");
  EXPECT_EQ(refused.total, 5u);  // 2 series, h1, the scalar, h3
  ASSERT_EQ(refused.named.size(), 5u);
  EXPECT_EQ(refused.named[0],
            (RefusedItem{RefusedItem::Kind::kSeries, 0, 1, "quota: new.latency"}));
  EXPECT_EQ(refused.named[1], (RefusedItem{RefusedItem::Kind::kSeries, 0, 3, "quota: new.gauge"}));
  EXPECT_EQ(refused.named[2],
            (RefusedItem{RefusedItem::Kind::kHistogram, 0, 1, "quota: new.latency"}));
  EXPECT_EQ(refused.named[3], (RefusedItem{RefusedItem::Kind::kScalar, 0, 0, "quota: new.gauge"}));
  EXPECT_EQ(refused.named[4],
            (RefusedItem{RefusedItem::Kind::kHistogram, 1, 0, "quota: new.latency"}));
  Batch same = TwoMetrics();
  EXPECT_EQ(DropMetrics(
                &same, {"other"}, [](std::string_view) { return ""; }, &refused),
            0u);
  EXPECT_EQ(same.series.size(), 4u);
}

}  // namespace
}  // namespace trailmap::aggregator
