// Fault test: the aggregator is frozen (SIGSTOP) for 30 s, then thawed (SIGCONT). The
// agent's ack timeout fires, it reconnects and resends; the thawed aggregator then sees both the
// first transmissions and the resends, and its watermark makes every resend a duplicate.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "tests/fault_load.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

TEST(SigstopSystem, AFrozenAggregatorCountsEverythingOnce) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs[0]->Start();
  Agent agent(dir, "web-1", IngestList(aggs), {"--no-proc", "--ack-timeout-ms", "1000"});
  ASSERT_TRUE(WaitFor([&] { return agent.Log().find("started:") != std::string::npos; }, 20s));
  SendEvents(agent.statsd_port(), "disk.latency", 100);
  uint64_t sent = 100;
  ASSERT_EQ(WaitForCount(aggs, "disk.latency", sent, 10s), sent) << agent.Log();

  aggs[0]->process().Kill(SIGSTOP);
  const auto frozen = std::chrono::steady_clock::now();
  for (int i = 0; std::chrono::steady_clock::now() - frozen < 30s; ++i) {
    const size_t n = 30 + i % 5;
    SendEvents(agent.statsd_port(), "disk.latency", n);
    sent += n;
    std::this_thread::sleep_for(250ms);
  }
  aggs[0]->process().Kill(SIGCONT);
  EXPECT_EQ(WaitForCount(aggs, "disk.latency", sent, 30s), sent) << agent.Log();
  std::this_thread::sleep_for(2s);  // late duplicates must add nothing
  EXPECT_EQ(StoredCount(aggs, "disk.latency"), sent);

  agent.process().Kill(SIGTERM);
  ASSERT_EQ(agent.process().Wait(), 0);
  const std::string log = agent.Log();
  EXPECT_EQ(LoggedCounter(log, "dropped_events"), 0) << log;
  EXPECT_GE(LoggedCounter(log, "reconnects"), 1) << log;  // the ack timeout fired while frozen
  aggs[0]->process().Kill(SIGTERM);
  ASSERT_EQ(aggs[0]->process().Wait(), 0);
  aggs[0]->Start();
  EXPECT_EQ(WaitForCount(aggs, "disk.latency", sent, 10s), sent);
}

}  // namespace
}  // namespace trailmap::test
