// Real perf through the whole cluster: an agent with --perf samples this machine while a child
// burns CPU in trailmap_test_busy_loop (agent/busy_main.cc, frame pointers on); the agent folds
// the samples, ships them as interned stack deltas, the aggregator stores them, and `trailmap
// flame` merges them back. The function must appear in that process's flame graph with a share
// and a sample count that fit 99 Hz and the CPU the child really used.
//
// Skipped, saying why, only where perf cannot record at all (not installed, or forbidden by
// kernel.perf_event_paranoid without root).
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>

#include "tests/cluster.h"
#include "tests/harness.h"

namespace trailmap::test {
namespace {

// Whether `perf record -a` works here; `why` says what it printed when it does not.
bool PerfRecords(const TempDir& dir, std::string* why) {
  const CommandResult r = RunProgram({"/bin/sh", "-c",
                                      "perf record -F 99 -a -g -e cpu-clock -o '" + dir.path() +
                                          "/probe.data' -- sleep 0.1"},
                                     std::chrono::seconds(20));
  *why = r.err.empty() ? "exit code " + std::to_string(r.exit_code) : r.err;
  return r.exit_code == 0;
}

struct FoldedTotals {
  uint64_t samples = 0;  // every stack
  uint64_t busy = 0;     // stacks through trailmap_test_busy_loop
};

FoldedTotals Totals(const std::string& folded) {
  FoldedTotals t;
  std::istringstream in(folded);
  std::string line;
  while (std::getline(in, line)) {
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    const uint64_t n = std::stoull(line.substr(space + 1));
    t.samples += n;
    if (line.find("trailmap_test_busy_loop") != std::string::npos) t.busy += n;
  }
  return t;
}

TEST(PerfSystem, ABusyFunctionShowsInItsProcessFlameGraph) {
  TempDir dir;
  std::string why;
  if (!PerfRecords(dir, &why)) GTEST_SKIP() << "perf cannot record on this machine: " << why;

  Aggregator aggregator(dir, "agg-1");
  aggregator.Start();
  Agent agent(dir, "perf-host", aggregator.ingest(),
              {"--no-proc", "--perf", "--perf-window-ms", "1000", "--flush-ms", "100"});

  // 1.5 CPU-seconds in the function (at most 20 s of wall time on a loaded machine).
  Process busy({std::string(TRAILMAP_BIN_DIR) + "/trailmap-test-busy", "1.5", "20"}, dir.path(),
               "busy");
  const pid_t pid = busy.pid();
  // The child's CPU time, as the kernel counted it: what reaping it adds to RUSAGE_CHILDREN.
  const auto children_cpu = [] {
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  };
  const double before = children_cpu();
  ASSERT_EQ(busy.Wait(std::chrono::seconds(30)), 0);
  const double cpu_seconds = children_cpu() - before;
  ASSERT_GE(cpu_seconds, 1.4);

  // perf delivers a window at a time, so the samples come a window or two after the CPU was
  // used: read until the count has stopped growing for longer than a window.
  const std::vector<std::string> query = {
      "flame", "--format", "folded", "--from", "-5m", "--to", "now", "--hosts", "perf-host",
      "--where", "pid == \"" + std::to_string(pid) + "\""};
  FoldedTotals totals;
  CommandResult flame;
  const double expected = 99 * cpu_seconds;
  uint64_t last = 0;
  for (const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       std::chrono::steady_clock::now() < end;) {
    flame = Cli(query, aggregator.query());
    totals = Totals(flame.out);
    if (flame.exit_code == 0 && totals.samples > 0 && totals.samples == last) break;
    last = totals.samples;
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  }
  ASSERT_EQ(flame.exit_code, 0) << flame.err;
  std::printf("pid %d: %.2f CPU-seconds, %llu samples (about %.0f expected), %llu in the loop\n",
              static_cast<int>(pid), cpu_seconds, static_cast<unsigned long long>(totals.samples),
              expected, static_cast<unsigned long long>(totals.busy));
  // cpu-clock at 99 Hz: about 99 samples per CPU-second, within generous bounds for a busy box.
  EXPECT_GE(totals.samples, 0.6 * expected) << flame.out << "\nagent log:\n"
                                              << agent.process().Stderr();
  EXPECT_LE(totals.samples, 1.4 * expected) << flame.out;
  // Nearly all of them in the loop: a plausible share is more than half.
  EXPECT_GT(totals.busy, totals.samples / 2) << flame.out;
  // The process name is the execname field (comm, cut to 15 characters by the kernel).
  const CommandResult by_name = Cli({"flame", "--format", "folded", "--from", "-5m", "--where",
                                     "execname == \"trailmap-test-b\""},
                                    aggregator.query());
  EXPECT_GE(Totals(by_name.out).busy, totals.busy) << by_name.err;
  // And the SVG of the host draws the function.
  const CommandResult svg =
      Cli({"flame", "--from", "-5m", "--hosts", "perf-host", "--where",
           "pid == \"" + std::to_string(pid) + "\""},
          aggregator.query());
  EXPECT_NE(svg.out.find("trailmap_test_busy_loop"), std::string::npos);
  agent.process().Kill(SIGTERM);
  EXPECT_EQ(agent.process().Wait(std::chrono::seconds(15)), 0) << agent.process().Stderr();
}

}  // namespace
}  // namespace trailmap::test
