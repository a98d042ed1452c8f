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
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

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

// FlameScope for the fleet: a real agent's perf source reads perf script text whose
// samples sit at known offsets (through a stand-in "perf" that records nothing and prints the
// fixture for the first window), ships each sample's offset as cpu.offsets to a real
// aggregator, and `trailmap subsecond` without a FILE draws the cells exactly; --range gives
// the flame graph of the whole second it touches. Runs everywhere (no perf needed), ~2 s.
TEST(PerfSystem, FleetSubsecondMapShowsTheSamplesOffsets) {
  TempDir dir;
  const int64_t base = static_cast<int64_t>(std::time(nullptr)) - 30;
  // Second 0: 4 samples 110 ms in (row 5 of 50) in burn_a; second 1: 3 at 510 ms (row 25) in
  // burn_b; second 2: 5 at 910 ms (row 45, where histogram buckets are 8.4 ms wide) in burn_c.
  struct Slice {
    int second, ms, samples;
    const char* function;
  };
  const Slice slices[] = {{0, 110, 4, "burn_a"}, {1, 510, 3, "burn_b"}, {2, 910, 5, "burn_c"}};
  {
    std::ofstream fixture(dir.path() + "/fixture.txt");
    char line[160];
    for (const Slice& s : slices) {
      for (int i = 0; i < s.samples; ++i) {
        std::snprintf(line, sizeof line, "burner 4242/4242 [001] %lld.%06d: 1 cpu-clock: \n",
                      static_cast<long long>(base + s.second), s.ms * 1000 + 137 + i * 100);
        fixture << line << "\t    401136 " << s.function << "+0x16 (/tmp/burner)\n"
                << "\t    401200 main+0x20 (/tmp/burner)\n\n";
      }
    }
  }
  // `perf record ... -o OUT`: keeps OUT, renaming it OUT.N on each SIGUSR2 as perf does;
  // `perf script`: the fixture for the first window read, nothing after (one per agent).
  auto fake_perf = [&dir](const std::string& name) {
    const std::string fake = dir.path() + "/" + name;
    std::ofstream out(fake);
    out << "#!/bin/sh\n"
           "if [ \"$1\" = record ]; then\n"
           "  for a; do out=$a; done\n"
           "  n=0; : > \"$out\"\n"
           "  trap 'n=$((n+1)); mv \"$out\" \"$out.$n\"; : > \"$out\"' USR2\n"
           "  trap 'exit 0' INT TERM\n"
           "  while :; do sleep 0.05; done\n"
           "fi\n"
           "if mkdir '"
        << fake << ".served' 2>/dev/null; then cat '" << dir.path() << "/fixture.txt'; fi\n";
    out.close();
    chmod(fake.c_str(), 0755);
    return fake;
  };
  const std::string fake = fake_perf("perf");

  Aggregator aggregator(dir, "agg-1");
  aggregator.Start();
  Agent agent(
      dir, "scope-host", aggregator.ingest(),
      {"--no-proc", "--perf", "--perf-path", fake, "--perf-window-ms", "200", "--flush-ms", "50"});
  const std::string from = std::to_string(base), to = std::to_string(base + 3);
  const std::vector<std::string> map = {"subsecond", "--format", "json",    "--from",    from,
                                        "--to",      to,         "--hosts", "scope-host"};
  CommandResult got;
  nlohmann::json j;
  for (const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
       std::chrono::steady_clock::now() < end;
       std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
    got = Cli(map, aggregator.query());
    if (got.exit_code != 0) continue;
    j = nlohmann::json::parse(got.out);
    if (j["samples"] == 12) break;
  }
  ASSERT_EQ(got.exit_code, 0) << got.err << "\nagent log:\n" << agent.Log();
  EXPECT_EQ(j["start_second"], base);
  EXPECT_EQ(j["columns"], 3);
  EXPECT_EQ(j["samples"], 12) << got.out << "\nagent log:\n" << agent.Log();
  EXPECT_EQ(j["max_count"], 5);
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 50; ++r) {
      const int want = r == 5 * (1 + 4 * c) ? slices[c].samples : 0;
      EXPECT_EQ(j["counts"][c][r], want) << "column " << c << " row " << r;
    }
  }
  // 1.200..1.900 lies in second 1: its stacks, the whole second.
  const CommandResult range = Cli(
      {"subsecond", "--from", from, "--to", to, "--range", "1.200..1.900", "--format", "folded"},
      aggregator.query());
  ASSERT_EQ(range.exit_code, 0) << range.err;
  EXPECT_EQ(range.out, "main;burn_b 3\n");
  // The SVG says the seconds are whole.
  const CommandResult svg =
      Cli({"subsecond", "--from", from, "--to", to, "--range", "1.200..1.900"}, aggregator.query());
  EXPECT_NE(svg.out.find("(1 s: stacks are counted per second)"), std::string::npos) << svg.out;
  // A FILE and --metric together are refused.
  const CommandResult both =
      Cli({"subsecond", "x.txt", "--metric", "cpu.offsets"}, aggregator.query());
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_EQ(both.err, "trailmap subsecond: give a FILE or --metric (the fleet's map), not both\n");
  agent.process().Kill(SIGTERM);
  EXPECT_EQ(agent.process().Wait(std::chrono::seconds(15)), 0) << agent.Log();

  // perf.offsets = false (--perf-no-offsets): the same samples' stacks, and no offsets at all.
  Agent quiet(dir, "no-offsets-host", aggregator.ingest(),
              {"--no-proc", "--perf", "--perf-path", fake_perf("perf2"), "--perf-window-ms", "200",
               "--flush-ms", "50", "--perf-no-offsets"});
  const std::vector<std::string> flame = {"flame",   "--format", "folded",         "--from", from,
                                          "--to",    to,         "--hosts",        "no-offsets-host"};
  CommandResult stacks;
  for (const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
       std::chrono::steady_clock::now() < end;
       std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
    stacks = Cli(flame, aggregator.query());
    if (stacks.exit_code == 0 && stacks.out.find("burn_c") != std::string::npos) break;
  }
  EXPECT_EQ(stacks.out, "main;burn_a 4\nmain;burn_b 3\nmain;burn_c 5\n") << stacks.err;
  quiet.process().Kill(SIGTERM);
  EXPECT_EQ(quiet.process().Wait(std::chrono::seconds(15)), 0) << quiet.Log();
  EXPECT_NE(quiet.Log().find(" offsets=0 "), std::string::npos) << quiet.Log();
  const CommandResult none =
      Cli({"subsecond", "--format", "json", "--from", from, "--to", to, "--hosts",
           "no-offsets-host"},
          aggregator.query());
  EXPECT_EQ(none.exit_code, 0) << none.err;
  if (none.exit_code == 0) {
    EXPECT_EQ(nlohmann::json::parse(none.out)["samples"], 0) << none.out;
  }
}

}  // namespace
}  // namespace trailmap::test
