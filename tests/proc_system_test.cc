// The proc and exec sources end to end: a real aggregator and a real agent with the proc source
// on (the default) and one --exec command, for a few seconds; then the aggregator is stopped and
// its RocksDB directory opened with aggregator::Store to read what arrived.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>

#include "aggregator/scan/store_query.h"
#include "aggregator/store/store.h"
#include "tests/cluster.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

int64_t NowSecond() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double MemTotalBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  in >> key >> kib;
  return key == "MemTotal:" ? kib * 1024 : 0;
}

TEST(ProcSystem, AgentShipsProcScalarsAndExecLatencies) {
  TempDir dir;
  Aggregator agg(dir, "agg-proc");
  agg.Start();
  const int64_t from = NowSecond();
  Agent agent(dir, "proc-host-1", agg.ingest(),
              {"--exec",
               "metric=probe.latency,field.probe=sh,command=while true; do echo 5ms op=tick; "
               "echo 'not-a-number op=tick'; sleep 0.25; done"});
  // A second host with the proc source off, shipping to the same aggregator.
  Agent quiet(dir, "noproc-host", agg.ingest(), {"--no-proc"});
  // Long enough for 3+ complete passes (the first gives gauges only) to be shipped and acked.
  std::this_thread::sleep_for(5s);
  agent.process().Kill(SIGTERM);
  ASSERT_EQ(agent.process().Wait(), 0) << agent.process().Stderr();
  quiet.process().Kill(SIGTERM);
  ASSERT_EQ(quiet.process().Wait(), 0) << quiet.process().Stderr();
  EXPECT_NE(quiet.process().Stderr().find("proc off"), std::string::npos);
  const int64_t to = NowSecond() + 1;
  const std::string agent_log = agent.process().Stderr();
  EXPECT_NE(agent_log.find("proc every 1000 ms from /proc"), std::string::npos) << agent_log;
  EXPECT_NE(agent_log.find("refused (bad_value)"), std::string::npos) << agent_log;
  agg.process().Kill(SIGTERM);
  ASSERT_EQ(agg.process().Wait(), 0) << agg.Log();

  Result<std::unique_ptr<aggregator::Store>> opened = aggregator::Store::Open(agg.data_dir());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  const aggregator::Store& store = **opened;

  // cpu.usage: for every second the host has, the eight modes are each in [0, 100] and sum to
  // 100; at least three such seconds arrived.
  static constexpr const char* kModes[] = {"user",   "nice", "system",  "idle",
                                           "iowait", "irq",  "softirq", "steal"};
  int complete_seconds = 0;
  for (int64_t s = from; s < to; ++s) {
    double sum = 0;
    int modes = 0;
    for (const char* mode : kModes) {
      const std::optional<double> v =
          store.ScalarAt("cpu.usage", "proc-host-1", std::string("mode=") + mode, s);
      if (!v) continue;
      EXPECT_GE(*v, 0.0) << mode << " at " << s;
      EXPECT_LE(*v, 100.0) << mode << " at " << s;
      sum += *v;
      ++modes;
    }
    if (modes == 0) continue;
    EXPECT_EQ(modes, 8) << "second " << s;
    EXPECT_NEAR(sum, 100.0, 0.01) << "second " << s;
    ++complete_seconds;
    // The same second has the host's memory, plausibly.
    const std::optional<double> rss = store.ScalarAt("mem.rss.total", "proc-host-1", "", s);
    ASSERT_TRUE(rss.has_value()) << "second " << s;
    EXPECT_GT(*rss, 1 << 20);
    EXPECT_LE(*rss, MemTotalBytes());
    // The agent itself is a process with a name and a resident set. The series adds up every
    // process of that name on the box, and other tests' sanitized agents run beside this one, so
    // the upper bound is the box's memory, not one agent's.
    const std::optional<double> own =
        store.ScalarAt("mem.rss", "proc-host-1", "execname=trailmap-agent", s);
    ASSERT_TRUE(own.has_value()) << "second " << s;
    EXPECT_GT(*own, 1 << 20);
    EXPECT_LE(*own, *rss);
  }
  EXPECT_GE(complete_seconds, 3);
  // The host with --no-proc has none.
  for (int64_t s = from; s < to; ++s) {
    EXPECT_FALSE(store.ScalarAt("cpu.usage", "noproc-host", "mode=idle", s).has_value()) << s;
    EXPECT_FALSE(store.ScalarAt("mem.rss.total", "noproc-host", "", s).has_value()) << s;
  }

  // The exec command's good lines arrived as a latency histogram of 5 ms values.
  HistogramQuery q;
  q.metric = "probe.latency";
  q.from = from;
  q.to = to;
  q.step = static_cast<uint32_t>(to - from);
  Result<HistogramAnswer> answer = QueryHistograms(store, q);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_EQ(answer->cells.size(), 1u);
  const Histogram& h = answer->cells[0].histogram;
  EXPECT_GE(h.count(), 10u);  // 4 a second for ~5 s
  EXPECT_EQ(h.min(), 5'000'000u);
  EXPECT_EQ(h.max(), 5'000'000u);

  // The catalog describes the proc metrics with their kinds and units.
  bool saw_cpu = false;
  for (const MetricInfo& m : store.Metrics()) {
    if (m.name != "cpu.usage") continue;
    saw_cpu = true;
    EXPECT_EQ(m.kind, MetricKind::kScalar);
    EXPECT_EQ(m.unit, "%");
    EXPECT_EQ(m.fields, (std::vector<std::string>{"mode"}));
  }
  EXPECT_TRUE(saw_cpu);
}

}  // namespace
}  // namespace trailmap::test
