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

TEST(Outliers, WhenMostHostsAgreeTheMeanDeviationStandsIn) {
  // MAD is 0 (five of six equal); MeanAD = 50/6.
  const std::vector<double> z = ModifiedZScores({10, 10, 10, 10, 10, 60});
  EXPECT_NEAR(z[5], 50 / (1.253314 * 50.0 / 6), 1e-9);
  EXPECT_EQ(z[0], 0);
  EXPECT_EQ(ModifiedZScores({5, 5, 5}), (std::vector<double>{0, 0, 0}));
  EXPECT_TRUE(ModifiedZScores({}).empty());
}

}  // namespace
}  // namespace trailmap
