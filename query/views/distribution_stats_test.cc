#include "query/views/distribution_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace trailmap {
namespace {

TEST(DistributionStats, EmptyAndSpikeAreAllZero) {
  const DistributionStats empty = ComputeDistributionStats(Histogram());
  EXPECT_EQ(empty.count, 0u);
  EXPECT_EQ(empty.mean, 0);
  EXPECT_EQ(empty.bimodality, 0);

  Histogram spike;
  spike.Record(4'000'000, 1000);
  const DistributionStats s = ComputeDistributionStats(spike);
  EXPECT_EQ(s.count, 1000u);
  EXPECT_NEAR(s.mean, 4'000'000, 4'000'000 * 0.008);
  EXPECT_EQ(s.stddev, 0);
  EXPECT_EQ(s.cov, 0);
  EXPECT_EQ(s.skewness, 0);
  EXPECT_EQ(s.kurtosis, 0);
  EXPECT_EQ(s.bimodality, 0);
}

// Exact values (below 128) make the moments exact: two equal spikes at 10 and 30.
TEST(DistributionStats, TwoEqualSpikesHaveBimodalityOne) {
  Histogram h;
  h.Record(10, 500);
  h.Record(30, 500);
  const DistributionStats s = ComputeDistributionStats(h);
  EXPECT_DOUBLE_EQ(s.mean, 20);
  EXPECT_DOUBLE_EQ(s.stddev, 10);
  EXPECT_DOUBLE_EQ(s.cov, 0.5);
  EXPECT_DOUBLE_EQ(s.skewness, 0);
  EXPECT_DOUBLE_EQ(s.kurtosis, 1);
  EXPECT_DOUBLE_EQ(s.bimodality, 1);
}

// One value at 0 and three at 100 (a Bernoulli with p = 3/4): mean 75, variance 1875,
// skewness (1 - 2p)/sqrt(p(1-p)) = -1.1547, kurtosis (1 - 3pq)/(pq) = 7/3.
TEST(DistributionStats, SkewedTwoPoint) {
  Histogram h;
  h.Record(0, 1);
  h.Record(100, 3);
  const DistributionStats s = ComputeDistributionStats(h);
  EXPECT_DOUBLE_EQ(s.mean, 75);
  EXPECT_NEAR(s.stddev, std::sqrt(1875.0), 1e-9);
  EXPECT_NEAR(s.skewness, -0.5 / std::sqrt(0.1875), 1e-9);
  EXPECT_NEAR(s.kurtosis, 7.0 / 3.0, 1e-9);
  EXPECT_NEAR(s.bimodality, (4.0 / 3.0 + 1) / (7.0 / 3.0), 1e-9);
}

TEST(DistributionStats, UniformAndNormalMatchTheTextbook) {
  Histogram uniform;
  for (uint64_t v = 0; v < 128; ++v) uniform.Record(v, 10);
  const DistributionStats u = ComputeDistributionStats(uniform);
  EXPECT_NEAR(u.skewness, 0, 1e-9);
  EXPECT_NEAR(u.kurtosis, 1.8, 0.01);  // 9/5 for a continuous uniform
  EXPECT_NEAR(u.bimodality, 5.0 / 9.0, 0.01);

  Histogram normal;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> d(5e6, 5e5);  // 5 ms ± 0.5 ms
  for (int i = 0; i < 200'000; ++i) normal.Record(static_cast<uint64_t>(d(rng)));
  const DistributionStats n = ComputeDistributionStats(normal);
  EXPECT_NEAR(n.cov, 0.1, 0.003);
  EXPECT_NEAR(n.skewness, 0, 0.03);
  EXPECT_NEAR(n.kurtosis, 3, 0.06);
  EXPECT_NEAR(n.bimodality, 1.0 / 3.0, 0.01);
}

// The fleet's shape: a cache band near 80 µs and a disk band near 4 ms is clearly bimodal, and
// the same cache band alone is not.
TEST(DistributionStats, CacheAndDiskBandsAreBimodal) {
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> cache(std::log(80e3), 0.2), disk(std::log(4e6), 0.2);
  Histogram both, fast;
  for (int i = 0; i < 50'000; ++i) {
    const auto c = static_cast<uint64_t>(cache(rng));
    both.Record(c);
    fast.Record(c);
    if (i % 2 == 0) both.Record(static_cast<uint64_t>(disk(rng)));
  }
  EXPECT_GT(ComputeDistributionStats(both).bimodality, 5.0 / 9.0);
  EXPECT_LT(ComputeDistributionStats(fast).bimodality, 5.0 / 9.0);
  EXPECT_GT(ComputeDistributionStats(both).cov, ComputeDistributionStats(fast).cov);
}

}  // namespace
}  // namespace trailmap
