#include "agent/statsd_scalars.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace trailmap {
namespace {

StatsdSample Line(std::string_view text) {
  Result<StatsdSample> s = ParseStatsdLine(text);
  EXPECT_TRUE(s.ok()) << text << ": " << s.status().ToString();
  return s.ok() ? *s : StatsdSample{};
}

// Everything the bucketizer holds, as "second metric{fields} unit" -> scalar.
std::map<std::string, double> Scalars(Bucketizer* b) {
  std::map<std::string, double> out;
  const CompletedSeconds done = b->TakeAll();
  for (const SecondDelta& d : done.seconds) {
    for (const ScalarValue& v : d.scalars) {
      const SeriesDef& s = done.series[v.series];
      out[std::to_string(d.time) + " " + s.metric + "{" + s.fields + "} " + s.unit] = v.value;
    }
  }
  return out;
}

TEST(StatsdScalars, CountersSumValueOverRatePerSecond) {
  Bucketizer b;
  StatsdScalars scalars(&b);
  scalars.Add(100, Line("hits:1|c"));
  scalars.Add(100, Line("hits:2|c|@0.5"));    // stands for 4
  scalars.Add(100, Line("hits:-1|c"));        // a decrement
  scalars.Add(100, Line("hits:1:1|c|#a:b"));  // packed, another series
  scalars.Add(101, Line("hits:0.5|c|@0.1"));  // 5, in the next second
  const std::map<std::string, double> want = {
      {"100 hits{} /s", 4}, {"100 hits{a=b} /s", 2}, {"101 hits{} /s", 5}};
  EXPECT_EQ(Scalars(&b), want);
}

TEST(StatsdScalars, AValueAfterItsSecondWasTakenResendsTheWholeTotal) {
  Bucketizer b;
  StatsdScalars scalars(&b);
  scalars.Add(100, Line("hits:3|c"));
  EXPECT_EQ(Scalars(&b), (std::map<std::string, double>{{"100 hits{} /s", 3}}));
  scalars.Add(100, Line("hits:2|c"));  // late: the aggregator replaces 3 with 5
  EXPECT_EQ(Scalars(&b), (std::map<std::string, double>{{"100 hits{} /s", 5}}));
}

TEST(StatsdScalars, GaugesKeepTheirValueAcrossSeconds) {
  Bucketizer b;
  StatsdScalars scalars(&b);
  scalars.Add(100, Line("queue:10|g"));
  scalars.Add(100, Line("queue:+5|g"));
  scalars.Add(101, Line("queue:-3|g"));          // 12, from the last value held
  scalars.Add(101, Line("fresh:-3|g"));          // never set: starts at 0
  scalars.Add(102, Line("queue:1:7|g"));         // packed absolute values: the last wins
  scalars.Add(103, Line("queue:+1:+1|g|@0.5"));  // a gauge ignores the rate
  const std::map<std::string, double> want = {{"100 queue{} 1", 15},
                                              {"101 queue{} 1", 12},
                                              {"101 fresh{} 1", -3},
                                              {"102 queue{} 1", 7},
                                              {"103 queue{} 1", 9}};
  EXPECT_EQ(Scalars(&b), want);
}

TEST(StatsdScalars, SetsCountDistinctMembersPerSecond) {
  Bucketizer b;
  StatsdScalars scalars(&b);
  scalars.Add(100, Line("users:alice|s"));
  scalars.Add(100, Line("users:bob:alice|s"));
  scalars.Add(100, Line("users:alice|s"));
  scalars.Add(101, Line("users:alice|s"));
  const std::map<std::string, double> want = {{"100 users{} distinct/s", 2},
                                              {"101 users{} distinct/s", 1}};
  EXPECT_EQ(Scalars(&b), want);
}

TEST(StatsdScalars, BoundsDropAndCount) {
  Bucketizer b;
  StatsdScalarsOptions options;
  options.keep_seconds = 10;
  options.max_set_members = 2;
  options.max_gauges = 1;
  StatsdScalars scalars(&b, options);
  scalars.Add(100, Line("users:a:b:c:a|s"));
  EXPECT_EQ(scalars.counters().set_members_dropped, 1u);
  scalars.Add(100, Line("g1:5|g"));
  scalars.Add(100, Line("g2:7|g"));   // written, not remembered
  scalars.Add(100, Line("g2:+1|g"));  // cannot be applied
  EXPECT_EQ(scalars.counters().gauge_deltas_dropped, 1u);
  EXPECT_EQ(scalars.remembered_gauges(), 1u);
  scalars.Add(111, Line("hits:1|c"));  // forgets second 100
  EXPECT_EQ(scalars.seconds_held(), 1u);
  scalars.Add(100, Line("hits:1|c"));
  EXPECT_EQ(scalars.counters().stale, 1u);
  const std::map<std::string, double> want = {
      {"100 users{} distinct/s", 2}, {"100 g1{} 1", 5}, {"100 g2{} 1", 7}, {"111 hits{} /s", 1}};
  EXPECT_EQ(Scalars(&b), want);
}

TEST(StatsdScalars, PastMaxEntriesTheOldestSecondsAreForgottenNotRebuilt) {
  Bucketizer b;
  StatsdScalarsOptions options;
  options.max_entries = 3;
  StatsdScalars scalars(&b, options);
  scalars.Add(100, Line("a:1|c"));
  scalars.Add(100, Line("b:1|c"));
  scalars.Add(101, Line("a:1|c"));
  scalars.Add(101, Line("b:1|c"));  // 4 entries: second 100 goes
  EXPECT_EQ(scalars.seconds_held(), 1u);
  scalars.Add(100, Line("a:5|c"));  // would replace a's 1 with a partial 5: dropped
  EXPECT_EQ(scalars.counters().stale, 1u);
  scalars.Add(101, Line("c:1|c"));
  scalars.Add(101, Line("d:1|c"));  // the newest second is never forgotten
  EXPECT_EQ(scalars.seconds_held(), 1u);
  const std::map<std::string, double> want = {{"100 a{} /s", 1}, {"100 b{} /s", 1},
                                              {"101 a{} /s", 1}, {"101 b{} /s", 1},
                                              {"101 c{} /s", 1}, {"101 d{} /s", 1}};
  EXPECT_EQ(Scalars(&b), want);
}

// Past max_series_per_metric (2 here) the overflow series holds the exact sum of the overflowed
// series' totals — each counted once at its latest value — not the sum of every running total
// written; a late line after the take re-sends the corrected overflow sum.
TEST(StatsdScalars, TheOverflowSeriesHoldsExactSums) {
  Bucketizer b(BucketizerOptions{.max_series_per_metric = 2});
  StatsdScalars scalars(&b);
  for (const char* line : {"hits:1|c|#k:a", "hits:1|c|#k:b",  // their own series
                           "hits:1|c|#k:c", "hits:2|c|#k:c",  // overflow: c = 3
                           "hits:4|c|#k:d", "hits:1|c|#k:c",  // d = 4, c = 4
                           "hits:1|c|#k:a",                   // a = 2, its own series still
                           "users:x|s|#k:a", "users:x|s|#k:b", "users:x|s|#k:c", "users:y|s|#k:c",
                           "users:x|s|#k:c",  // c: 2 distinct
                           "users:z|s|#k:d",  // d: 1
                           "temp:5|g|#k:a", "temp:5|g|#k:b", "temp:7|g|#k:c", "temp:9|g|#k:c",
                           "temp:+1|g|#k:c",  // c = 10
                           "temp:20|g|#k:d"}) {
    scalars.Add(100, Line(line));
  }
  const std::map<std::string, double> want = {
      {"100 hits{k=a} /s", 2},
      {"100 hits{k=b} /s", 1},
      {"100 hits{overflow=true} /s", 8},  // c 4 + d 4
      {"100 users{k=a} distinct/s", 1},
      {"100 users{k=b} distinct/s", 1},
      {"100 users{overflow=true} distinct/s", 3},  // c 2 + d 1
      {"100 temp{k=a} 1", 5},
      {"100 temp{k=b} 1", 5},
      {"100 temp{overflow=true} 1", 30},  // c 10 + d 20: the last values
  };
  EXPECT_EQ(Scalars(&b), want);
  scalars.Add(100, Line("hits:5|c|#k:c"));  // late: c = 9, the overflow 13
  EXPECT_EQ(Scalars(&b), (std::map<std::string, double>{{"100 hits{overflow=true} /s", 13}}));
}

}  // namespace
}  // namespace trailmap
