// `trailmap subsecond` on perf script text whose samples were made at known offsets: a busy
// loop that burns only in a chosen 100 ms slice of each second (slice k in second k, sampled
// every 10 ms, in function burn_k), plus idle samples everywhere else. The cells must show
// exactly the slices; a range over one slice gives exactly its function.
#include "cli/subsecond_command.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/testing_cli.h"

namespace trailmap {
namespace {

constexpr int64_t kStart = 1'795'000'000;

std::string SlicedPerfScript() {
  std::string text = "# ========\n# captured on    : Thu Nov 26 23:00:00 2026\n# ========\n#\n";
  char line[160];
  for (int second = 0; second < 10; ++second) {
    for (int ms = 0; ms < 1000; ms += 10) {
      const bool busy = ms >= second * 100 && ms < second * 100 + 100;
      snprintf(line, sizeof line, "%s %d/%d [001] %lld.%06d: 10101010 cpu-clock: \n",
               busy ? "burner" : "swapper", busy ? 4242 : 0, busy ? 4242 : 0,
               static_cast<long long>(kStart + second), ms * 1000 + 137);
      text += line;
      if (busy) {
        text += "\t    401136 burn_" + std::to_string(second) + "+0x16 (/tmp/burner)\n";
        text += "\t    401200 main+0x20 (/tmp/burner)\n\n";
      } else {
        text += "\tffffffff81e4a5c0 native_safe_halt+0x6 ([kernel.kallsyms])\n";
        text += "\tffffffff81e4a9c0 default_idle+0x5 ([kernel.kallsyms])\n\n";
      }
    }
  }
  return text;
}

TEST(SubsecondCommand, CellsShowExactlyTheBusySlices) {
  testing::CliHarness h;
  SubsecondFlags flags;
  flags.input = "-";
  flags.format = "json";
  std::istringstream in(SlicedPerfScript());
  ASSERT_EQ(RunSubsecond(flags, h.context, in), kExitOk) << h.err.str();
  const auto j = nlohmann::json::parse(h.out.str());
  EXPECT_EQ(j["start_second"], kStart);
  EXPECT_EQ(j["columns"], 10);
  EXPECT_EQ(j["samples"], 100);
  EXPECT_EQ(j["idle"], 900);
  EXPECT_EQ(j["max_count"], 2);
  // Second k: rows 5k .. 5k+4 (20 ms each) hold 2 samples each; every other cell is empty.
  for (int c = 0; c < 10; ++c) {
    for (int r = 0; r < 50; ++r) {
      const int want = r >= 5 * c && r < 5 * c + 5 ? 2 : 0;
      EXPECT_EQ(j["counts"][c][r], want) << "column " << c << " row " << r;
    }
  }
}

// FlameScope's grid runs to the second of the profile's last sample, idle or not: two more
// seconds of idle samples after the busy ones are two more (empty) columns.
TEST(SubsecondCommand, AProfileEndingIdleKeepsItsLastColumns) {
  std::string text = SlicedPerfScript();
  char line[160];
  for (int second = 10; second < 12; ++second) {
    snprintf(line, sizeof line, "swapper 0/0 [001] %lld.%06d: 10101010 cpu-clock: \n",
             static_cast<long long>(kStart + second), 500000);
    text += line;
    text += "\tffffffff81e4a5c0 native_safe_halt+0x6 ([kernel.kallsyms])\n\n";
  }
  testing::CliHarness h;
  SubsecondFlags flags;
  flags.input = "-";
  flags.format = "json";
  std::istringstream in(text);
  ASSERT_EQ(RunSubsecond(flags, h.context, in), kExitOk) << h.err.str();
  const auto j = nlohmann::json::parse(h.out.str());
  EXPECT_EQ(j["start_second"], kStart);
  ASSERT_EQ(j["columns"], 12);
  EXPECT_EQ(j["samples"], 100);
  EXPECT_EQ(j["idle"], 902);
  EXPECT_EQ(j["counts"][11], nlohmann::json(std::vector<int>(50, 0)));

  // Only idle samples: nothing to draw, and the message says how to draw them.
  testing::CliHarness idle;
  std::istringstream only_idle(
      "swapper 0/0 [001] 5.5: 1 cpu-clock: \n\tffff native_safe_halt+0x6 ([kernel.kallsyms])\n\n");
  EXPECT_EQ(RunSubsecond(flags, idle.context, only_idle), kExitUsage);
  EXPECT_NE(idle.err.str().find("holds only idle samples (1); --include-idle draws them"),
            std::string::npos)
      << idle.err.str();
}

TEST(SubsecondCommand, ARangeGivesThatRangesFlameGraph) {
  testing::CliHarness h;
  SubsecondFlags flags;
  flags.input = "-";
  flags.range = "3.300..3.400";  // exactly slice 3
  flags.format = "folded";
  std::istringstream in(SlicedPerfScript());
  ASSERT_EQ(RunSubsecond(flags, h.context, in), kExitOk) << h.err.str();
  EXPECT_EQ(h.out.str(), "burner;main;burn_3 10\n");

  testing::CliHarness two;
  flags.range = "3.350..4.450";  // half of slice 3, half of slice 4
  std::istringstream again(SlicedPerfScript());
  ASSERT_EQ(RunSubsecond(flags, two.context, again), kExitOk);
  EXPECT_EQ(two.out.str(), "burner;main;burn_3 5\nburner;main;burn_4 5\n");

  testing::CliHarness svg;
  flags.format = "svg";
  std::istringstream third(SlicedPerfScript());
  ASSERT_EQ(RunSubsecond(flags, svg.context, third), kExitOk);
  EXPECT_NE(svg.out.str().find("burn_4 (5 samples, 50.00%)"), std::string::npos) << svg.out.str();

  testing::CliHarness bad;
  flags.range = "4..3";
  std::istringstream fourth(SlicedPerfScript());
  EXPECT_EQ(RunSubsecond(flags, bad.context, fourth), kExitUsage);
  EXPECT_NE(bad.err.str().find("--range: expected FROM..TO"), std::string::npos);
}

TEST(SubsecondCommand, TextMapAndNoTimedSamples) {
  testing::CliHarness h;
  SubsecondFlags flags;
  flags.input = "-";
  flags.rows = 10;
  std::istringstream in(SlicedPerfScript());
  ASSERT_EQ(RunSubsecond(flags, h.context, in), kExitOk);
  // 10 rows of 100 ms: slice k is row k of column k, the diagonal from the bottom left.
  EXPECT_EQ(h.out.str(),
            "   900 |         @|\n"
            "   800 |        @ |\n"
            "   700 |       @  |\n"
            "   600 |      @   |\n"
            "   500 |     @    |\n"
            "   400 |    @     |\n"
            "   300 |   @      |\n"
            "   200 |  @       |\n"
            "   100 | @        |\n"
            "     0 |@         |\n"
            "       ------------\n"
            "ms / seconds from 1795000000: 100 samples, largest cell 10\n");

  testing::CliHarness none;
  std::istringstream empty("java 12 cycles:\n\t1 f (/a)\n\n");
  SubsecondFlags stdin_flags;
  stdin_flags.input = "-";
  EXPECT_EQ(RunSubsecond(stdin_flags, none.context, empty), kExitUsage);
  EXPECT_NE(none.err.str().find("holds no timed samples"), std::string::npos);
}

}  // namespace
}  // namespace trailmap
