// Fault tests of the exactly-once path with real processes: an aggregator killed
// between its write and its ack, and an agent killed right after it spooled a batch. Failpoints
// (core/failpoint.h) put each kill in its window every time. After each fault the stored total
// must be exactly what was produced minus what the product said it lost.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <thread>

#include "tests/fault_load.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

// Sets TRAILMAP_FAILPOINTS for the processes started while it lives.
class Failpoints {
 public:
  explicit Failpoints(const std::string& spec) { setenv("TRAILMAP_FAILPOINTS", spec.c_str(), 1); }
  ~Failpoints() { unsetenv("TRAILMAP_FAILPOINTS"); }
};

// Waits until the agent has logged its n-th "started:" line (its statsd port is bound).
bool Started(const Agent& agent, size_t n) {
  return WaitFor(
      [&] {
        const std::string log = agent.Log();
        size_t count = 0;
        for (size_t at = log.find("started:"); at != std::string::npos;
             at = log.find("started:", at + 1)) {
          ++count;
        }
        return count >= n;
      },
      20s);
}

std::string AgentIdOf(const std::string& started_line_log, size_t nth) {
  size_t at = 0;
  for (size_t i = 0; i <= nth; ++i) {
    at = started_line_log.find(", agent ", at);
    if (at == std::string::npos) return "";
    at += 8;
  }
  return started_line_log.substr(at, started_line_log.find(',', at) - at);
}

// The aggregator dies after its 3rd write, before that write's ack. The agent resends the batch
// to the restarted aggregator, which answers `duplicate`: every event counts once.
TEST(FaultSystem, AggregatorKilledBetweenWriteAndAckCountsTheResendOnce) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  {
    Failpoints fp("ingest.after_write=kill@3");
    aggs[0]->Start();
  }
  Agent agent(dir, "web-1", IngestList(aggs), {"--no-proc", "--ack-timeout-ms", "500"});
  ASSERT_TRUE(Started(agent, 1)) << agent.Log();
  uint64_t sent = 0;
  // One burst a second until the failpoint has killed the aggregator (its 3rd write).
  for (int i = 0; i < 15 && aggs[0]->process().Running(); ++i) {
    SendEvents(agent.statsd_port(), "disk.latency", 100);
    sent += 100;
    std::this_thread::sleep_for(1s);
  }
  ASSERT_EQ(aggs[0]->process().Wait(5s), -SIGKILL) << aggs[0]->Log();
  ASSERT_NE(aggs[0]->Log().find("failpoint ingest.after_write"), std::string::npos);
  SendEvents(agent.statsd_port(), "disk.latency", 100);  // while it is down
  sent += 100;
  aggs[0]->Start();
  EXPECT_EQ(WaitForCount(aggs, "disk.latency", sent, 20s), sent) << aggs[0]->Log() << agent.Log();
  std::this_thread::sleep_for(1500ms);  // resends still in flight must add nothing
  EXPECT_EQ(StoredCount(aggs, "disk.latency"), sent);

  agent.process().Kill(SIGTERM);
  ASSERT_EQ(agent.process().Wait(), 0) << agent.Log();
  const std::string log = agent.Log();
  EXPECT_GE(LoggedCounter(log, "duplicates"), 1) << log;  // the written, unacked batch came back
  EXPECT_EQ(LoggedCounter(log, "dropped"), 0) << log;
  // RocksDB reopened: what was acknowledged is still there, once.
  aggs[0]->process().Kill(SIGTERM);
  ASSERT_EQ(aggs[0]->process().Wait(), 0);
  aggs[0]->Start();
  EXPECT_EQ(WaitForCount(aggs, "disk.latency", sent, 10s), sent);
}

// The agent dies right after it spooled its 6th batch, before sending it. One burst of a
// distinct size goes out in the middle of each second, so each second is one batch's worth and
// the stored total must be exactly the sum of the first k bursts: the seconds spooled before the
// kill. The restarted agent keeps its agent id and sends what its spool held.
TEST(FaultSystem, AgentKilledAfterSpoolingLosesOnlySecondsNotYetSpooled) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs[0]->Start();
  std::unique_ptr<Agent> agent;
  {
    Failpoints fp("agent.after_spool=kill@6");
    agent = std::make_unique<Agent>(dir, "web-1", IngestList(aggs),
                                    std::vector<std::string>{"--no-proc"});
  }
  ASSERT_TRUE(Started(*agent, 1)) << agent->Log();
  std::vector<uint64_t> bursts;
  int after_death = 0;
  for (int i = 0; i < 20 && after_death < 2; ++i) {
    SleepUntilMsOfSecond(400);  // far from the second's ends, where the agent cuts batches
    const uint64_t n = 100 + bursts.size();
    SendEvents(agent->statsd_port(), "disk.latency", n);
    bursts.push_back(n);
    if (!agent->process().Running()) ++after_death;
  }
  ASSERT_EQ(agent->process().Wait(1s), -SIGKILL) << agent->Log();
  agent->Start();  // same spool, no failpoint
  ASSERT_TRUE(Started(*agent, 2)) << agent->Log();
  SleepUntilMsOfSecond(400);
  const uint64_t last_burst = 77;
  SendEvents(agent->statsd_port(), "disk.latency", last_burst);

  // The stored total is a sum of the first k bursts plus the last one, for one k.
  std::vector<uint64_t> prefix{0};
  for (uint64_t b : bursts) prefix.push_back(prefix.back() + b);
  uint64_t stored = 0;
  size_t k = prefix.size();
  WaitFor(
      [&] {
        stored = StoredCount(aggs, "disk.latency").value_or(0);
        for (size_t j = 0; j < prefix.size(); ++j) {
          if (prefix[j] + last_burst == stored) k = j;
        }
        return k < prefix.size();
      },
      20s);
  ASSERT_LT(k, prefix.size()) << "stored " << stored << " is no sum of whole seconds\n"
                              << agent->Log();
  EXPECT_GE(k, 2u)
      << "the kill came after the 6th batch: at least 2 seconds of bursts were spooled";
  EXPECT_LT(k, bursts.size()) << "the bursts sent after the kill cannot have arrived";
  const std::string log = agent->Log();
  // The restart kept the agent id and resent what the spool held (at least the 6th batch).
  ASSERT_FALSE(AgentIdOf(log, 1).empty()) << log;
  EXPECT_EQ(AgentIdOf(log, 0), AgentIdOf(log, 1)) << log;
  EXPECT_NE(log.find("batches from the last run to send again"), std::string::npos) << log;
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(StoredCount(aggs, "disk.latency"), stored);  // nothing twice
  agent->process().Kill(SIGTERM);
  ASSERT_EQ(agent->process().Wait(), 0);
  EXPECT_EQ(LoggedCounter(agent->Log(), "dropped_events"), 0);
  aggs[0]->process().Kill(SIGTERM);
  ASSERT_EQ(aggs[0]->process().Wait(), 0);
  aggs[0]->Start();
  EXPECT_EQ(WaitForCount(aggs, "disk.latency", stored, 10s), stored);
}

}  // namespace
}  // namespace trailmap::test
