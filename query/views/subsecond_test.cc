#include "query/views/subsecond.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "query/testing/perf_script.h"
#include "query/testing/views.h"

namespace trailmap {
namespace {

using testing::PerfRecord;

TEST(Subsecond, CellsCountSamplesByOffsetAndIdleIsLeftOut) {
  std::string text;
  text += PerfRecord("app", 1700000100, 0, "a");                  // column 0, row 0
  text += PerfRecord("app", 1700000100, 19999, "a");              // row 0 (19.999 ms)
  text += PerfRecord("app", 1700000100, 20000, "b");              // row 1
  text += PerfRecord("app", 1700000102, 999999, "c");             // column 2, row 49
  text += PerfRecord("swapper", 1700000101, 500000, "cpu_idle");  // idle: left out
  text += "app 42 [000] 7: cpu-clock:\n\t1 f (/a)\n\n";       // no time: left out
  const PerfSamples samples = ReadPerfSamples(text);
  EXPECT_EQ(samples.samples.size(), 4u);
  EXPECT_EQ(samples.idle, 1u);
  EXPECT_EQ(samples.untimed, 1u);
  Result<SubsecondView> view = BuildSubsecondView(samples);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->start_second, 1700000100);
  ASSERT_EQ(view->columns(), 3);
  EXPECT_EQ(view->counts[0][0], 2u);
  EXPECT_EQ(view->counts[0][1], 1u);
  EXPECT_EQ(view->counts[2][49], 1u);
  EXPECT_EQ(view->max_count, 2u);
  EXPECT_EQ(view->samples, 4u);
  uint64_t total = 0;
  for (const auto& column : view->counts)
    for (uint64_t n : column) total += n;
  EXPECT_EQ(total, 4u);

  // With the idle sample: column 1, row 25.
  Result<SubsecondView> all = BuildSubsecondView(ReadPerfSamples(text, true), 10);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->counts[1][5], 1u);
  EXPECT_EQ(all->counts[0][0], 3u) << "10 rows: 100 ms each";

  // A range's stacks: [0.000, 0.020) holds the two samples in a; the end is open.
  const FoldedStacks first = FoldSubsecondRange(samples, view->start_second, {0, 0.020});
  EXPECT_EQ(FormatFolded(first), "app;main;a 2\n");
  EXPECT_EQ(FormatFolded(FoldSubsecondRange(samples, view->start_second,
                                            *ParseSubsecondRange("0.020..2.999999"))),
            "app;main;b 1\n");
  EXPECT_EQ(
      FormatFolded(FoldSubsecondRange(samples, view->start_second, *ParseSubsecondRange("0..3"))),
      "app;main;a 2\napp;main;b 1\napp;main;c 1\n");
}

// FlameScope's grid spans every sample it read, idle or not: its start is the earliest
// sample's time and its end the last one's, with ceil(end) - floor(start) columns. Idle samples
// stay out of the cells but not out of the span.
TEST(Subsecond, TheGridSpansIdleSamplesAsFlameScopes) {
  struct Case {
    const char* name;
    std::string text;
    int64_t start_second;
    int columns;
    int columns_with_idle;  // --include-idle: idle samples are drawn, so each needs its column
  };
  const Case cases[] = {
      {"ends idle: the idle second is the last column",
       PerfRecord("app", 100, 0, "a") + PerfRecord("app", 101, 500000, "b") +
           PerfRecord("swapper", 103, 250000, "cpu_idle"),
       100, 4, 4},
      {"starts idle: the idle second is the first column",
       PerfRecord("swapper", 98, 500000, "cpu_idle") + PerfRecord("app", 100, 250000, "a"), 98, 3,
       3},
      {"ends idle on a whole second: ceil(end) adds no column for it",
       PerfRecord("app", 100, 500000, "a") + PerfRecord("swapper", 102, 0, "cpu_idle"), 100, 2, 3},
      {"ends busy on a whole second: its column is kept (FlameScope would index past its grid)",
       PerfRecord("app", 100, 500000, "a") + PerfRecord("app", 102, 0, "b"), 100, 3, 3},
      {"only idle samples: an empty grid over their span",
       PerfRecord("swapper", 100, 500000, "cpu_idle") +
           PerfRecord("swapper", 101, 500000, "cpu_idle"),
       100, 2, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const PerfSamples samples = ReadPerfSamples(c.text);
    Result<SubsecondView> view = BuildSubsecondView(samples);
    ASSERT_TRUE(view.ok()) << view.status().message();
    EXPECT_EQ(view->start_second, c.start_second);
    EXPECT_EQ(view->columns(), c.columns);
    uint64_t total = 0;
    for (const auto& column : view->counts)
      for (uint64_t n : column) total += n;
    EXPECT_EQ(total, samples.samples.size());
    // With the idle samples drawn the grid starts at the same second.
    Result<SubsecondView> all = BuildSubsecondView(ReadPerfSamples(c.text, true));
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->start_second, c.start_second);
    EXPECT_EQ(all->columns(), c.columns_with_idle);
  }
  // The first case cell by cell: b at 101.5 s is column 1, row 25; columns 2 and 3 are empty.
  Result<SubsecondView> view = BuildSubsecondView(ReadPerfSamples(cases[0].text));
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->counts[0][0], 1u);
  EXPECT_EQ(view->counts[1][25], 1u);
  EXPECT_EQ(view->idle, 1u);
}

TEST(Subsecond, RangesAndRowsAreChecked) {
  for (const char* bad : {"", "1", "2..1", "1..1", "a..2", "1..2x", "1.1234567891..2", "-1..2"}) {
    EXPECT_FALSE(ParseSubsecondRange(bad).ok()) << bad;
  }
  Result<SubsecondRange> r = ParseSubsecondRange("12.340..13.020");
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->from, 12.34);
  EXPECT_DOUBLE_EQ(r->to, 13.02);
  EXPECT_FALSE(BuildSubsecondView({}, 0).ok());
  EXPECT_FALSE(BuildSubsecondView({}, 1001).ok());
  PerfSamples far;
  far.samples = {{0, "a"}, {int64_t{kMaxSubsecondColumns} * 1'000'000'000, "a"}};
  Result<SubsecondView> v = BuildSubsecondView(far);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message().rfind("the samples span 36001 seconds", 0), 0u);
}

// The fleet's map from a grid of cpu.offsets (ns): each column's histogram spread over the rows,
// the groups added up. 110 ms (row 5), 510 ms (row 25) and 910 ms (row 45, where buckets are
// 8.4 ms wide) lie inside their rows' buckets: exact cells. 19.99 ms sits in the bucket
// [19.92, 20.19) ms across the edge of rows 0 and 1: split by overlap (29% below, 71% above),
// rounded to whole samples that add up, so it lands in row 1 — the blur the header states.
TEST(SubsecondFromGrid, ExactCellsFromHistograms) {
  MergedGrid g =
      testing_views::EmptyHostGrid("cpu.offsets", 1'795'000'000, 1, 3, {"web-1", "web-2"});
  g.cells[0][0].Record(110'000'137, 4);
  g.cells[1][0].Record(110'500'000, 1);
  g.cells[0][1].Record(510'000'137, 3);
  g.cells[1][2].Record(910'000'137, 5);
  g.cells[0][2].Record(19'990'000, 1);
  Result<SubsecondView> view = SubsecondFromGrid(g);
  ASSERT_TRUE(view.ok()) << view.status().message();
  EXPECT_EQ(view->start_second, 1'795'000'000);
  EXPECT_EQ(view->columns(), 3);
  EXPECT_EQ(view->samples, 14u);
  EXPECT_EQ(view->max_count, 5u);
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 50; ++r) {
      uint64_t want = 0;
      if (c == 0 && r == 5) want = 5;
      if (c == 1 && r == 25) want = 3;
      if (c == 2 && r == 45) want = 5;
      if (c == 2 && r == 1) want = 1;  // 71% of the straddling bucket is above 20 ms
      EXPECT_EQ(view->counts[c][r], want) << "column " << c << " row " << r;
    }
  }
  g.step = 2;
  EXPECT_EQ(SubsecondFromGrid(g).status().message(),
            "the sub-second map needs one column per second, got a step of 2 s");
}

}  // namespace
}  // namespace trailmap
