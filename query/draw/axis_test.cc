#include "query/draw/axis.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(Axis, ValueTicksAreRound) {
  EXPECT_EQ(ValueTicks(20e6, 5), (std::vector<double>{0, 5e6, 10e6, 15e6, 20e6}));
  EXPECT_EQ(ValueTicks(1000, 5), (std::vector<double>{0, 200, 400, 600, 800, 1000}));
  EXPECT_EQ(ValueTicks(5, 5), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST(Axis, TimeTicksAlignToTheClock) {
  EXPECT_EQ(TimeTickInterval(7), 10);
  EXPECT_EQ(TimeTickInterval(61), 120);
  EXPECT_EQ(TimeTicks(1005, 1031, 10), (std::vector<int64_t>{1010, 1020, 1030}));
  EXPECT_EQ(TimeTickLabel(1'700'000'000, 10), "22:13:20");
  EXPECT_EQ(TimeTickLabel(1'699'999'980, 60), "22:13");
}

TEST(Axis, ByteUnitsStepInPowersOfTwo) {
  EXPECT_EQ(ValueTicks(8.0 * 1024 * 1024 * 1024, 8, "B"),
            (std::vector<double>{0, 1 * 1073741824.0, 2 * 1073741824.0, 3 * 1073741824.0,
                                 4 * 1073741824.0, 5 * 1073741824.0, 6 * 1073741824.0,
                                 7 * 1073741824.0, 8 * 1073741824.0}));
}

}  // namespace
}  // namespace trailmap
