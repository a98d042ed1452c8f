#include "query/views/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "query/testing/views.h"

namespace trailmap {
namespace {

uint64_t Exact(std::vector<uint64_t> values, double p) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(p / 100 * values.size()));
  return values[std::max<size_t>(rank, 1) - 1];
}

TEST(Stats, PercentilesWithinTheHistogramError) {
  std::vector<uint64_t> values;
  StatsTable table = ComputeStats(testing_views::TwoLatencyHosts(&values));
  ASSERT_EQ(table.rows.size(), 2u);
  const StatsRow& a = table.rows[0];
  EXPECT_EQ(a.group, "web-1");
  EXPECT_EQ(a.count, 100'000u);
  EXPECT_EQ(a.min, *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(a.max, *std::max_element(values.begin(), values.end()));
  const std::pair<double, uint64_t> checks[] = {
      {50, a.p50}, {90, a.p90}, {99, a.p99}, {99.9, a.p999}};
  for (const auto& [p, got] : checks) {
    const double want = static_cast<double>(Exact(values, p));
    EXPECT_NEAR(static_cast<double>(got), want, want * 0.008) << "p" << p;
  }
  double sum = 0;
  for (uint64_t v : values) sum += static_cast<double>(v);
  EXPECT_NEAR(a.mean, sum / values.size(), 1e-6 * a.mean);
}

TEST(Stats, SortAndTop) {
  std::vector<uint64_t> values;
  StatsTable table = ComputeStats(testing_views::TwoLatencyHosts(&values));
  SortStats(&table, StatsSort::kP99, 1);
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0].group, "web-2");  // 50 ms beats ~12 ms
  EXPECT_FALSE(ParseStatsSort("p42").ok());
  EXPECT_EQ(*ParseStatsSort("p99.9"), StatsSort::kP999);
}

}  // namespace
}  // namespace trailmap
