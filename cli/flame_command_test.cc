// `trailmap collapse` and `trailmap flame` as main() runs them: files and standard input in,
// exit codes and what they print.
#include "cli/flame_command.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/collapse_command.h"
#include "query/testing/folded.h"

namespace trailmap {
namespace {

using testing::kSeedFolded;

struct CliRun {
  int code;
  std::string out, err;
};

CliRun RunCollapseOn(const CollapseFlags& flags, const std::string& input) {
  std::ostringstream out, err;
  CliContext context;
  context.out = &out;
  context.err = &err;
  std::istringstream in(input);
  const int code = RunCollapse(flags, context, in);
  return {code, out.str(), err.str()};
}

TEST(CollapseCommand, FoldsStandardInputAndReportsWhatItDropped) {
  const std::string perf =
      "cc 1 [000] 1.0: 5 cycles:\n\tffff do_sys ([kernel.kallsyms])\n\t1 main (/bin/cc)\n\n"
      "cc 1 [000] 1.0: 5 instructions:\n\t1 main (/bin/cc)\n\n"
      "junk\n";
  CollapseFlags flags;
  flags.all = true;
  const CliRun run = RunCollapseOn(flags, perf);
  EXPECT_EQ(run.code, kExitOk);
  EXPECT_EQ(run.out, "cc;main;do_sys_[k] 5\n");
  EXPECT_NE(run.err.find("skipped 1 records of instructions"), std::string::npos);
  EXPECT_NE(run.err.find("line 8: junk"), std::string::npos);
  flags.input = "/nonexistent/perf.txt";
  EXPECT_EQ(RunCollapseOn(flags, "").code, kExitError);
}

TEST(FlameCommand, RendersAFoldedFile) {
  std::ostringstream out, err;
  CliContext context;
  context.out = &out;
  context.err = &err;
  FlameFlags flags;
  flags.folded = "-";
  flags.format = "json";
  std::istringstream in(kSeedFolded);
  EXPECT_EQ(RunFlame(flags, context, in), kExitOk);
  EXPECT_EQ(nlohmann::json::parse(out.str())["value"], 9);
  flags.folded = "/nonexistent/x.folded";
  std::istringstream empty;
  EXPECT_EQ(RunFlame(flags, context, empty), kExitError);
}

TEST(FlameCommand, DifferentialFromTwoFiles) {
  const std::string dir = ::testing::TempDir();
  const std::string base = dir + "/flame_base.folded";
  { std::ofstream(base) << "main;a 2\nmain;b 2\nbad line\n"; }
  std::ostringstream out, err;
  CliContext context;
  context.out = &out;
  context.err = &err;
  FlameFlags flags;
  flags.folded = "-";
  flags.baseline_folded = base;
  flags.format = "folded";
  std::istringstream in("main;a 6\nmain;b 2\n");
  EXPECT_EQ(RunFlame(flags, context, in), kExitOk);
  EXPECT_EQ(out.str(), "main;a 4 6\nmain;b 4 2\n");
  EXPECT_EQ(err.str(), "trailmap flame: ignored 1 baseline lines with invalid format\n");
  out.str("");
  flags.format = "svg";
  std::istringstream in2("main;a 6\nmain;b 2\n");
  EXPECT_EQ(RunFlame(flags, context, in2), kExitOk);
  EXPECT_NE(out.str().find("(baseline scaled by 2 to the same total)"), std::string::npos);
  EXPECT_NE(out.str().find("fill=\"rgb(255,0,0)\""), std::string::npos);
  flags.baseline_folded = "/nonexistent/base.folded";
  std::istringstream in3("main 1\n");
  EXPECT_EQ(RunFlame(flags, context, in3), kExitError);
  flags.baseline_folded = "-";
  EXPECT_EQ(RunFlame(flags, context, in3), kExitUsage);
}

}  // namespace
}  // namespace trailmap
