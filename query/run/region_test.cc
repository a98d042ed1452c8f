#include "query/run/region.h"

#include <gtest/gtest.h>

#include "core/predicate.h"

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

TEST(Region, QueryCarriesTheBandAndTheViewsRange) {
  ViewRequest view;
  view.metric = "http.latency";
  view.from = "1000";
  view.to = "1600";
  view.where = "op == \"read\"";
  view.hosts = "web-1,web-2";
  QueryContext context;
  context.now = 2000;
  Result<StackQuery> q = RegionQuery("1100..1130,50ms..2s", view, context, "cpu.stacks", true);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->metric, "cpu.stacks");
  EXPECT_EQ(q->from, 1100);
  EXPECT_EQ(q->to, 1130);
  EXPECT_EQ(q->hosts, (std::vector<std::string>{"web-1", "web-2"}));
  ASSERT_TRUE(q->region.has_value());
  EXPECT_EQ(q->region->metric, "http.latency");
  // The band joins --where as a tree (query/run/predicate_tree.h), not as pasted text.
  EXPECT_EQ(q->region->where,
            R"({"and":[{"field":"op","op":"==","value":"read"},{"and":[{"field":"value","op":">=",)"
            R"("value":"50ms"},{"field":"value","op":"<=","value":"2s"}]}]})");
  EXPECT_EQ(Predicate::Parse(q->region->where)->ToString(),
            "op == \"read\" and (value >= 50ms and value <= 2s)");
  EXPECT_TRUE(q->region->baseline);
  EXPECT_EQ(q->region->baseline_from, 1000);
  EXPECT_EQ(q->region->baseline_to, 1600);
  // The baseline's range is widened to hold the region.
  q = RegionQuery("1550..1700,1ms..2ms", view, context, "cpu.stacks", true);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->region->baseline_to, 1700);
  q = RegionQuery("1100..1130,1ms..2ms", view, context, "cpu.stacks", false);
  ASSERT_TRUE(q.ok());
  EXPECT_FALSE(q->region->baseline);
  q = RegionQuery("1100..1130,2ms..1ms", view, context, "cpu.stacks", false);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("LOW is above HIGH"), std::string::npos);
}

}  // namespace
}  // namespace trailmap
