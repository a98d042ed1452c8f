// Replicated delivery: an agent started with --cluster FILE sends every batch to each
// of its host's R owners, each with its own sequence and spool segment, and never to a
// non-owner. With one owner killed the other keeps receiving everything; when the killed one
// returns, its spool segment replays and it holds exactly what its peer holds.
//
// Three aggregators in three zones, R=2, four agents fed over statsd on loopback. Each host sends
// its own metric (rep.hN.latency), so one aggregator's count of that metric is that host's events
// on that aggregator (tests/stored_events.h asks it alone).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/cluster.h"
#include "tests/fault_load.h"
#include "tests/stored_events.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kWindow = 3600;  // seconds StoredEvents looks back

struct Host {
  std::string name;
  std::string metric;
  std::vector<size_t> owners;  // aggregator indexes
  uint64_t sent = 0;
  std::unique_ptr<Agent> agent;
};

// Waits until aggregator `a` holds `want` events of `metric`; returns the last count seen.
uint64_t WaitForStored(const Aggregator& a, const std::string& metric, uint64_t want,
                       std::chrono::milliseconds timeout) {
  uint64_t last = 0;
  WaitFor(
      [&] {
        last = StoredEvents(a.query(), metric, kWindow);
        return last == want;
      },
      timeout);
  return last;
}

void SendRound(std::vector<Host>& hosts, size_t round) {
  for (size_t i = 0; i < hosts.size(); ++i) {
    const size_t n = 40 + 7 * i + 3 * round;
    SendEvents(hosts[i].agent->statsd_port(), hosts[i].metric, n);
    hosts[i].sent += n;
  }
}

TEST(ReplicatedDeliverySystem, EachOwnerGetsEveryBatchAndAReturningOwnerCatchesUp) {
  TempDir dir;
  const std::string file = dir / "cluster.toml";
  std::vector<std::unique_ptr<Aggregator>> aggs;
  for (int i = 1; i <= 3; ++i) {
    aggs.push_back(std::make_unique<Aggregator>(
        dir, "agg-" + std::to_string(i),
        std::vector<std::string>{"--cluster", file, "--no-self-metrics"}));
  }
  std::string text = "replication = 2\n";
  for (size_t i = 0; i < aggs.size(); ++i) {
    text += "[[aggregator]]\nname = \"agg-" + std::to_string(i + 1) + "\"\nzone = \"z" +
            std::to_string(i + 1) + "\"\ningest = \"" + aggs[i]->ingest() + "\"\nquery = \"" +
            aggs[i]->query() + "\"\n";
  }
  WriteFile(file, text);
  Result<Cluster> cluster = LoadCluster(file);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  for (auto& a : aggs) a->Start();

  std::vector<Host> hosts;
  for (int i = 1; i <= 4; ++i) {
    Host h;
    h.name = "web-" + std::to_string(i);
    h.metric = "rep.h" + std::to_string(i) + ".latency";
    h.owners = cluster->Owners(h.name, 0);
    ASSERT_EQ(h.owners.size(), 2u);
    h.agent = std::make_unique<Agent>(
        dir, h.name, "",
        std::vector<std::string>{"--cluster", file, "--no-proc", "--no-self-metrics",
                                 "--ack-timeout-ms", "500"});
    ASSERT_NE(h.agent->Log().find("started:"), std::string::npos) << h.agent->Log();
    hosts.push_back(std::move(h));
  }
  auto owns = [](const Host& h, size_t a) {
    return std::find(h.owners.begin(), h.owners.end(), a) != h.owners.end();
  };

  // Every owner stores exactly what its host sent; the non-owner stores none of it.
  SendRound(hosts, 0);
  for (const Host& h : hosts) {
    for (size_t a : h.owners) {
      EXPECT_EQ(WaitForStored(*aggs[a], h.metric, h.sent, 20s), h.sent)
          << h.name << " on " << aggs[a]->query() << "\n" << h.agent->Log();
    }
  }
  for (const Host& h : hosts) {
    for (size_t a = 0; a < aggs.size(); ++a) {
      EXPECT_EQ(StoredEvents(aggs[a]->query(), h.metric, kWindow), owns(h, a) ? h.sent : 0)
          << h.name << " on agg-" << a + 1;
    }
    // One spool segment per owner, named after it, and none for the non-owner.
    for (size_t a = 0; a < aggs.size(); ++a) {
      EXPECT_EQ(std::filesystem::is_directory(h.agent->spool_dir() + "/agg-" +
                                              std::to_string(a + 1)),
                owns(h, a))
          << h.name << " agg-" << a + 1;
    }
  }

  // Kill the aggregator that owns the most hosts; the hosts' other owners keep receiving.
  size_t victim = 0, most = 0;
  for (size_t a = 0; a < aggs.size(); ++a) {
    const size_t n = static_cast<size_t>(
        std::count_if(hosts.begin(), hosts.end(), [&](const Host& h) { return owns(h, a); }));
    if (n > most) most = n, victim = a;
  }
  aggs[victim]->KillHard();
  for (size_t round = 1; round <= 4; ++round) SendRound(hosts, round);
  for (const Host& h : hosts) {
    for (size_t a : h.owners) {
      if (a == victim) continue;
      EXPECT_EQ(WaitForStored(*aggs[a], h.metric, h.sent, 20s), h.sent)
          << h.name << " on agg-" << a + 1 << " with agg-" << victim + 1 << " down\n"
          << h.agent->Log();
    }
  }

  // Back on the same data directory: its segments replay, and each replica alone holds the
  // same totals.
  aggs[victim]->Start();
  for (const Host& h : hosts) {
    if (!owns(h, victim)) continue;
    EXPECT_EQ(WaitForStored(*aggs[victim], h.metric, h.sent, 30s), h.sent)
        << h.name << " on the returned agg-" << victim + 1 << "\n" << h.agent->Log();
  }
  for (const Host& h : hosts) {
    for (size_t a = 0; a < aggs.size(); ++a) {
      EXPECT_EQ(StoredEvents(aggs[a]->query(), h.metric, kWindow), owns(h, a) ? h.sent : 0)
          << h.name << " on agg-" << a + 1 << " after the return";
    }
  }

  // Each agent's counters line names each of its owners, and nothing went missing.
  for (Host& h : hosts) {
    h.agent->process().Kill(SIGTERM);
    ASSERT_EQ(h.agent->process().Wait(), 0);
    const std::string log = h.agent->Log();
    for (size_t a = 0; a < aggs.size(); ++a) {
      EXPECT_EQ(log.find("; owner agg-" + std::to_string(a + 1) + " sent=") != std::string::npos,
                owns(h, a))
          << log;
    }
    EXPECT_EQ(LoggedCounter(log, "dropped_events"), 0) << log;
  }
}

}  // namespace
}  // namespace trailmap::test
