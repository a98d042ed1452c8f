#include "query/axis.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(Axis, ValueTicksAreRound) {
  EXPECT_EQ(ValueTicks(20e6, 5), (std::vector<double>{0, 5e6, 10e6, 15e6, 20e6}));
  EXPECT_EQ(ValueTicks(1000, 5), (std::vector<double>{0, 200, 400, 600, 800, 1000}));
  EXPECT_EQ(ValueTicks(5, 5), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_DOUBLE_EQ(NiceStep(0.3), 0.5);
  EXPECT_DOUBLE_EQ(NiceStep(7), 10);
}

TEST(Axis, TimeTicksAlignToTheClock) {
  EXPECT_EQ(TimeTickInterval(7), 10);
  EXPECT_EQ(TimeTickInterval(61), 120);
  EXPECT_EQ(TimeTicks(1005, 1031, 10), (std::vector<int64_t>{1010, 1020, 1030}));
  EXPECT_EQ(TimeTickLabel(1'700'000'000, 10), "22:13:20");
  EXPECT_EQ(TimeTickLabel(1'699'999'980, 60), "22:13");
}

}  // namespace
}  // namespace trailmap
