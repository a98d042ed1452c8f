// Fault test: the aggregator is down for 60 s while the agent keeps producing. The
// agent's spool bridges the outage; when the aggregator is back everything arrives exactly once,
// in order (the aggregator applies only watermark + 1), and survives a RocksDB reopen.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <thread>

#include "tests/fault_load.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

TEST(OutageSystem, AggregatorDownForAMinuteLosesNothing) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs[0]->Start();
  Agent agent(dir, "web-1", IngestList(aggs), {"--no-proc"});
  ASSERT_TRUE(WaitFor([&] { return agent.Log().find("started:") != std::string::npos; }, 20s));
  SendEvents(agent.statsd_port(), "disk.latency", 100);
  uint64_t sent = 100;
  ASSERT_EQ(WaitForCount(aggs, "disk.latency", sent, 10s), sent) << agent.Log();

  aggs[0]->KillHard();
  const auto down = std::chrono::steady_clock::now();
  for (int i = 0; std::chrono::steady_clock::now() - down < 60s; ++i) {
    const size_t n = 20 + i % 7;
    SendEvents(agent.statsd_port(), "disk.latency", n);
    sent += n;
    std::this_thread::sleep_for(250ms);
  }
  // The outage waits in the spool on disk: about 60 s of batches.
  uint64_t spooled = 0;
  for (const auto& f : std::filesystem::directory_iterator(agent.spool_dir())) {
    if (f.path().extension() == ".spool") spooled += f.file_size();
  }
  EXPECT_GT(spooled, 20'000u);
  aggs[0]->Start();
  EXPECT_EQ(WaitForCount(aggs, "disk.latency", sent, 30s), sent) << agent.Log();
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(StoredCount(aggs, "disk.latency"), sent);

  agent.process().Kill(SIGTERM);
  ASSERT_EQ(agent.process().Wait(), 0);
  const std::string log = agent.Log();
  EXPECT_EQ(LoggedCounter(log, "dropped_events"), 0) << log;
  EXPECT_EQ(LoggedCounter(log, "out_of_order"), 0) << log;  // every resend came in order
  EXPECT_GE(LoggedCounter(log, "sent"), 60) << log;  // the outage's batches went after it
  aggs[0]->process().Kill(SIGTERM);
  ASSERT_EQ(aggs[0]->process().Wait(), 0);
  aggs[0]->Start();
  EXPECT_EQ(WaitForCount(aggs, "disk.latency", sent, 10s), sent);
}

}  // namespace
}  // namespace trailmap::test
