#include "query/run/outliers.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(Outliers, ModifiedZScoreOfTheWorkedExample) {
  // docs/outliers.md: p99s in ms of seven hosts; median 10, MAD 1.
  const std::vector<double> p99 = {9, 10, 10, 11, 12, 9, 40};
  const std::vector<double> z = ModifiedZScores(p99);
  EXPECT_NEAR(z[6], 0.6745 * 30, 1e-9);  // 20.2: an outlier
  EXPECT_NEAR(z[4], 0.6745 * 2, 1e-9);   // 1.35: not
  EXPECT_NEAR(z[0], -0.6745, 1e-9);      // faster than the fleet: negative
}

TEST(Outliers, WhenMostHostsAgreeTheBucketWidthIsTheScale) {
  // Nine of twelve hosts at 4.95 ms, three at 246 ms: the MAD is 0, floored at 4.95/64 ms. (The
  // mean absolute deviation, inflated by the three, would score them 3.19: not outliers.)
  std::vector<double> p99(12, 4.95);
  p99[2] = p99[6] = p99[10] = 246;
  const std::vector<double> z = ModifiedZScores(p99);
  EXPECT_NEAR(z[2], 0.6745 * (246 - 4.95) / (4.95 / 64), 1e-6);
  EXPECT_EQ(z[0], 0);
  // A median of 0: the mean absolute deviation stands in, and then nothing.
  const std::vector<double> zero = ModifiedZScores({0, 0, 0, 0, 6});
  EXPECT_NEAR(zero[4], 6 / (1.253314 * 6.0 / 5), 1e-9);
  EXPECT_EQ(ModifiedZScores({5, 5, 5}), (std::vector<double>{0, 0, 0}));
  EXPECT_TRUE(ModifiedZScores({}).empty());
}

}  // namespace
}  // namespace trailmap
