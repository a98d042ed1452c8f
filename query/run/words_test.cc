#include "query/run/words.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(Words, StepIsWholeSecondsWithOrWithoutAUnit) {
  EXPECT_EQ(ParseStepWords("").value(), 0u);
  EXPECT_EQ(ParseStepWords("10s").value(), 10u);
  EXPECT_EQ(ParseStepWords("1m").value(), 60u);
  EXPECT_EQ(ParseStepWords("30").value(), 30u);
  EXPECT_EQ(ParseStepWords("1.5s").status().message(),
            "--step 1.5s: a step is whole seconds, at least 1s (e.g. 1s, 10s, 1m)");
  EXPECT_EQ(ParseStepWords("0").status().message(),
            "--step 0: a step is whole seconds, at least 1s (e.g. 1s, 10s, 1m)");
  EXPECT_EQ(ParseStepWords("367d").status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(ParseStepWords("soon").status().message().rfind("--step: ", 0), 0u);
}

TEST(Words, PercentilesAreAListAboveZeroAndAtMostAHundred) {
  EXPECT_EQ(ParsePercentiles("p50,P99,99.9").value(), (std::vector<double>{50, 99, 99.9}));
  EXPECT_TRUE(ParsePercentiles("").value().empty());
  EXPECT_EQ(ParsePercentiles("p50,p0").status().message(),
            "--overlay p0: give percentiles like p50,p99,p99.9 (above 0, at most 100)");
  EXPECT_FALSE(ParsePercentiles("p100.1").ok());
  EXPECT_FALSE(ParsePercentiles("p").ok());
  EXPECT_FALSE(ParsePercentiles("p5x").ok());
}

TEST(Words, AClockTimeIsOnTheDayOfTheRangesStart) {
  const int64_t from = 1'700'000'000;  // 2023-11-14T22:13:20Z
  EXPECT_EQ(ParseClockOrTime("22:13:30", from, from + 60).value(), from + 10);
  EXPECT_EQ(ParseClockOrTime("00:00:10", from, from + 60).value(), 1'700'006'410);  // next day
  EXPECT_EQ(ParseClockOrTime("-1m", from, from + 60).value(), from);
  EXPECT_FALSE(ParseClockOrTime("25:00:00", from, from).ok());
}

TEST(Words, TheAxisTakesAQuantityOfSomeUnitBeforeTheMetricsUnitIsKnown) {
  EXPECT_TRUE(CheckAxisWords("--ymax", "").ok());
  EXPECT_TRUE(CheckAxisWords("--ymax", "20ms").ok());
  EXPECT_TRUE(CheckAxisWords("--ymax", "4KiB").ok());
  EXPECT_TRUE(CheckAxisWords("--ymin", "1500").ok());
  EXPECT_EQ(CheckAxisWords("--ymax", "20 parsecs").message().rfind("--ymax: ", 0), 0u);
}

TEST(Words, AValueRangeIsLowDotDotHighAboveLow) {
  EXPECT_EQ(ParseValueRange("0..20ms", "ns").value(),
            std::make_pair(uint64_t{0}, uint64_t{20'000'000}));
  EXPECT_EQ(ParseValueRange("..1KiB", "B").value(), std::make_pair(uint64_t{0}, uint64_t{1024}));
  EXPECT_EQ(ParseValueRange("20ms", "ns").status().message(),
            "--range 20ms: write LOW..HIGH, e.g. 0..20ms");
  EXPECT_EQ(ParseValueRange("5ms..1ms", "ns").status().message(),
            "--range 5ms..1ms: HIGH must be above LOW");
}

}  // namespace
}  // namespace trailmap
