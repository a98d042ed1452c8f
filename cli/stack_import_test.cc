#include "cli/stack_import.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(StackImport, PerfSampleTimeFindsTheHeaderTimestamp) {
  EXPECT_DOUBLE_EQ(*PerfSampleTime("app 100 [000] 4512.337164: 1 cpu-clock:"), 4512.337164);
  EXPECT_DOUBLE_EQ(*PerfSampleTime("java 12/13 99.500000:   250000 cycles:u:"), 99.5);
  EXPECT_FALSE(PerfSampleTime("app 100 [000] cpu-clock:").has_value());
  EXPECT_FALSE(PerfSampleTime("app 100 1.2.3: cpu-clock:").has_value());
  EXPECT_FALSE(PerfSampleTime("").has_value());
}

TEST(StackImport, PerfScriptIsFoldedOneSecondAtATime) {
  const char* text =
      "app 100 [000] 10.100000: 1 cpu-clock:\n"
      "\t1 work+0x10 (/usr/bin/app)\n"
      "\t2 main+0x20 (/usr/bin/app)\n"
      "\n"
      "app 100 [000] 10.900000: 1 cpu-clock:\n"
      "\t1 work+0x14 (/usr/bin/app)\n"
      "\t2 main (/usr/bin/app)\n"
      "\n"
      "app 100 [000] 13.000000: 1 cpu-clock:\n"
      "\t3 idle (/usr/bin/app)\n"
      "\t2 main (/usr/bin/app)\n";  // the last record has no blank line: still counted
  const TimedStacks t = CollapsePerfScriptBySecond(text);
  EXPECT_TRUE(t.timed);
  ASSERT_EQ(t.seconds.size(), 2u);
  EXPECT_EQ(t.seconds[0].first, 0);
  EXPECT_EQ(FormatFolded(t.seconds[0].second), "app;main;work 2\n");
  EXPECT_EQ(t.seconds[1].first, 3);
  EXPECT_EQ(FormatFolded(t.seconds[1].second), "app;main;idle 1\n");
  EXPECT_EQ(t.stats.records, 3u);
  EXPECT_EQ(t.stats.event, "cpu-clock");
}

TEST(StackImport, PerfScriptCountsSamplesNotPeriods) {
  // perf's cpu-clock period is 10,101,010 ns at 99 Hz: an import counts the two samples as 2, as
  // the agent's perf source does (trailmap collapse would count periods, as FlameGraph does).
  const TimedStacks t = CollapsePerfScriptBySecond(
      "app 100 [000] 10.100000:   10101010 cpu-clock:\n\t1 work (/usr/bin/app)\n\n"
      "app 100 [000] 10.200000:   10101010 cpu-clock:\n\t1 work (/usr/bin/app)\n\n");
  ASSERT_EQ(t.seconds.size(), 1u);
  EXPECT_EQ(FormatFolded(t.seconds[0].second), "app;work 2\n");
}

TEST(StackImport, PerfScriptWithoutTimesIsOneFold) {
  const TimedStacks t = CollapsePerfScriptBySecond(
      "app 100 cpu-clock:\n\t1 a (/x)\n\napp 100 cpu-clock:\n\t1 a (/x)\n\n");
  EXPECT_FALSE(t.timed);
  ASSERT_EQ(t.seconds.size(), 1u);
  EXPECT_EQ(FormatFolded(t.seconds[0].second), "app;a 2\n");
}

TEST(StackImport, FoldedLinesParseOrNameTheBadLine) {
  Result<FoldedStacks> ok = ParseFoldedStackLines("main;foo 3\n\nmain;bar baz 2\r\nmain 0\n");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(FormatFolded(*ok), "main;foo 3\nmain;bar baz 2\n");
  for (const char* bad : {"main;foo 3\nmain;foo\n", "main;foo 3\nmain 2.5\n", "main;foo 3\n 7\n",
                          "main;foo 3\nmain 99999999999999999999999\n"}) {
    Result<FoldedStacks> r = ParseFoldedStackLines(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message().rfind("line 2: ", 0), 0u) << r.status().message();
  }
  EXPECT_TRUE(ParseFoldedStackLines("main 1099511627776\n").ok());  // 2^40
  EXPECT_EQ(ParseFoldedStackLines("main 1\nmain 1099511627777\n").status().message(),
            "line 2: count 1099511627777 is more than one line may carry (2^40)");
}

TEST(StackImport, SplitFoldedFrames) {
  EXPECT_EQ(SplitFoldedFrames("a;b;c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(SplitFoldedFrames("a"), (std::vector<std::string>{"a"}));
  EXPECT_EQ(SplitFoldedFrames("a;;b"), (std::vector<std::string>{"a", "", "b"}));
}

}  // namespace
}  // namespace trailmap
