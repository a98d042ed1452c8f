// An agent that comes back after the aggregator forgot its watermark (docs/failures.md, "watermarks of
// long-gone agents"): a real trailmap-aggregator with `[retention] agents = "2s"` and the
// agent's real Shipper (ingest/shipper.h). The agent's first batches are acked; the aggregator
// stops; the agent holds two more; the aggregator comes back after the idle time, prunes the
// watermark as it opens, and answers the held batches outOfOrder, expected 1. The shipper takes
// a new incarnation and renumbers what it holds: every batch is stored exactly once.
#include <gtest/gtest.h>

#include <signal.h>

#include <thread>
#include <zmq.hpp>

#include "ingest/shipper.h"
#include "core/histogram.h"
#include "core/query_wire.h"
#include "tests/cluster.h"
#include "tests/stored_events.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One second of "idle.latency" holding `values` values.
Batch Second(int64_t t, int values) {
  Batch b;
  b.host = "web-1";
  b.series = {{"idle.latency", MetricKind::kLatency, "ns", ""}};
  Histogram h;
  for (int i = 0; i < values; ++i) h.Record(1000 + i);
  b.seconds.push_back({t, {{0, h.Encode()}}, {}});
  return b;
}

uint64_t StoredCount(const std::string& query_endpoint) {
  return StoredEvents(query_endpoint, "idle.latency", 600);
}

TEST(IdleAgentSystem, AnAgentBackAfterItsWatermarkWasPrunedLosesAndRepeatsNothing) {
  TempDir dir;
  const std::string ingest = "127.0.0.1:" + std::to_string(FreePort());
  const std::string query = "127.0.0.1:" + std::to_string(FreePort());
  const std::string config = dir / "aggregator.toml";
  WriteFile(config, "data = \"" + (dir / "data") + "\"\ningest = \"" + ingest +
                        "\"\nquery = \"" + query + "\"\nname = \"agg-idle\"\n" +
                        // Its own self-metrics agent would be idle (and pruned) too.
                        "self_metrics = false\n[retention]\n" +
                        "agents = \"2s\"\n");
  auto start = [&] {
    return std::make_unique<Process>(
        std::vector<std::string>{Binary("trailmap-aggregator"), "--config", config}, dir.path(),
        "agg-idle");
  };
  std::unique_ptr<Process> aggregator = start();

  ShipperOptions options;
  options.endpoint = "tcp://" + ingest;
  options.agent_id = NewAgentId("web-1");
  options.curve = TestCurveClient();
  options.ack_timeout = 500ms;
  Shipper shipper(options);
  const int64_t t0 = Now() - 120;
  uint64_t produced = 0;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(shipper.Send(Second(t0 + i, 10 + i)));
    produced += 10 + i;
  }
  ASSERT_TRUE(shipper.Flush(20s).ok()) << aggregator->Stderr();
  EXPECT_EQ(StoredCount(query), produced);

  // The aggregator stops; the agent goes on producing (held, unacknowledged).
  aggregator->Kill(SIGTERM);
  ASSERT_EQ(aggregator->Wait(30s), 0) << aggregator->Stderr();
  for (int i = 3; i < 5; ++i) {
    ASSERT_TRUE(shipper.Send(Second(t0 + i, 10 + i)));
    produced += 10 + i;
  }
  // Longer than the idle time since the agent's last applied batch, in the store's whole
  // seconds: pruned when floor(now) - floor(last seen) > 2, which 3 s always makes true (2.5 s
  // did only when the restart fell in a later second than the fraction allowed).
  std::this_thread::sleep_for(3200ms);
  aggregator = start();
  ASSERT_TRUE(shipper.Flush(30s).ok()) << aggregator->Stderr();
  EXPECT_NE(aggregator->Stderr().find("forgot the watermarks of 1 agent(s)"), std::string::npos)
      << aggregator->Stderr();
  const ShipperCounters c = shipper.counters();
  EXPECT_EQ(c.incarnations, 1u);
  EXPECT_NE(shipper.agent_id(), options.agent_id);
  // Nothing lost, nothing twice: 10 + 11 + 12 + 13 + 14.
  EXPECT_EQ(produced, 60u);
  EXPECT_EQ(StoredCount(query), produced);
  aggregator->Kill(SIGTERM);
  EXPECT_EQ(aggregator->Wait(30s), 0);
}

}  // namespace
}  // namespace trailmap::test
