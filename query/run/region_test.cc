#include "query/run/region.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(Region, TextSplitsIntoTimesAndValues) {
  Result<RegionText> r = ParseRegionText("1700000000..1700000060,50ms..200ms");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->from, "1700000000");
  EXPECT_EQ(r->to, "1700000060");
  EXPECT_EQ(r->low, "50ms");
  EXPECT_EQ(r->high, "200ms");
  EXPECT_TRUE(ParseRegionText("-2m..-1m,0..4KiB").ok());
  EXPECT_TRUE(ParseRegionText("2026-11-22T16:00:00Z..2026-11-22T16:01:00Z,1..2").ok());
}

TEST(Region, BadTextNamesTheFlagAndTheForm) {
  for (const char* bad : {"-2m..-1m", "-2m,1ms..2ms", "-2m..-1m,1ms", "..-1m,1ms..2ms",
                          "-2m..-1m,1ms..2ms or 1", "-2m..-1m,ms..2ms"}) {
    Result<RegionText> r = ParseRegionText(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message().rfind(std::string("--region ") + bad + ": ", 0), 0u)
        << r.status().message();
  }
}

TEST(Region, BaselineListsTheSameHostsWithTheirSelectedSecondsLeftOut) {
  RegionSelection s;
  s.from = 100;
  s.to = 110;
  s.weights = {{"a", {101, 105}, {4, 1}, 0}};
  const StackQuery target = RegionStackQuery(s, "cpu.stacks");
  EXPECT_EQ(target.from, 100);
  EXPECT_EQ(target.weights[0].weights, (std::vector<uint64_t>{4, 1}));
  const StackQuery base = RegionBaselineQuery(s, "cpu.stacks", 50, 108);
  EXPECT_EQ(base.from, 50);
  EXPECT_EQ(base.to, 110);  // widened to hold the region
  EXPECT_EQ(base.weights[0].host, "a");
  EXPECT_EQ(base.weights[0].weights, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(base.weights[0].other_seconds, 1u);
}

}  // namespace
}  // namespace trailmap
