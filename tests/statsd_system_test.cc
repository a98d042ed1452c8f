// System tests of the statsd path: real agents receive real UDP packets, ship real batches over
// ZeroMQ to real aggregators writing real RocksDB directories, and the real CLI reads them back.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "tests/cluster.h"
#include "tests/stats_json.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

// Sends `values_us` as statsd timings in ms with three decimals (so the agent's ns are exact),
// 20 lines a packet.
void SendTimings(int port, const std::string& metric, const std::vector<uint64_t>& values_us,
                 const std::string& tags = "") {
  std::string packet;
  for (size_t i = 0; i < values_us.size(); ++i) {
    char line[128];
    snprintf(line, sizeof line, "%s:%llu.%03llu|ms%s\n", metric.c_str(),
             static_cast<unsigned long long>(values_us[i] / 1000),
             static_cast<unsigned long long>(values_us[i] % 1000), tags.c_str());
    packet += line;
    if ((i + 1) % 20 == 0 || i + 1 == values_us.size()) {
      SendUdp(port, packet);
      packet.clear();
      std::this_thread::sleep_for(1ms);  // a gentle sender: loopback UDP must not drop here
    }
  }
}

// The nearest-rank percentile of exact values, as the histogram defines it.
double ExactPercentile(std::vector<uint64_t> v, double p) {
  std::sort(v.begin(), v.end());
  const auto n = static_cast<uint64_t>(v.size());
  const uint64_t rank = std::clamp<uint64_t>(static_cast<uint64_t>(std::ceil(p / 100 * n)), 1, n);
  return static_cast<double>(v[rank - 1]);
}

// (a) Several agents, each with its own host name, sharded over two aggregators: exact counts,
// exact min and max, and percentiles within 0.8% per host.
TEST(StatsdSystem, SeveralAgentsGiveExactCountsAndPercentiles) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-2"));
  for (auto& a : aggs) a->Start();
  const std::vector<std::string> hosts = {"web-1", "web-2", "db-1"};
  std::vector<std::unique_ptr<Agent>> agents;
  for (const auto& h : hosts) agents.push_back(std::make_unique<Agent>(dir, h, IngestList(aggs)));
  std::this_thread::sleep_for(500ms);  // let the agents bind their statsd ports

  std::map<std::string, std::vector<uint64_t>> sent_ns;
  std::mt19937_64 rng(11);
  for (size_t i = 0; i < hosts.size(); ++i) {
    // Each host its own distribution: a cache band and a disk band, host i slower by (i+1).
    std::lognormal_distribution<double> fast(std::log(50.0), 0.3),
        slow(std::log(3000.0 * (i + 1)), 0.5);
    std::vector<uint64_t> us(600);
    for (size_t k = 0; k < us.size(); ++k)
      us[k] = 1 + static_cast<uint64_t>(k % 3 ? fast(rng) : slow(rng));
    SendTimings(agents[i]->statsd_port(), "disk.latency", us, "|#op:read");
    for (uint64_t v : us) sent_ns[hosts[i]].push_back(v * 1000);
  }

  std::map<std::string, GroupStats> got;
  const bool arrived = WaitFor(
      [&] {
        CommandResult r = Cli({"stats", "--metric", "disk.latency", "--by", "host", "--from", "-5m",
                               "--format", "json"},
                              QueryList(aggs));
        if (r.exit_code != 0) return false;
        got = ParseStats(r.out);
        size_t total = 0;
        for (const auto& [h, s] : got) total += s.count;
        return total == 3 * 600;
      },
      20s);
  ASSERT_TRUE(arrived) << "stats never showed 1800 events; last answer had " << got.size()
                       << " hosts\n"
                       << aggs[0]->Log() << aggs[1]->Log();
  for (const auto& h : hosts) {
    SCOPED_TRACE(h);
    ASSERT_EQ(got.count(h), 1u);
    const GroupStats& s = got[h];
    const auto& v = sent_ns[h];
    EXPECT_EQ(s.count, v.size());
    EXPECT_EQ(s.min, *std::min_element(v.begin(), v.end()));
    EXPECT_EQ(s.max, *std::max_element(v.begin(), v.end()));
    for (const auto& [p, value] : s.percentiles) {
      const double exact = ExactPercentile(v, p);
      EXPECT_LE(std::abs(value - exact), 0.008 * exact) << "p" << p;
    }
    EXPECT_EQ(s.percentiles.size(), 4u);  // p50 p90 p99 p99.9
  }
}

// (c) kill -9 the aggregator in the middle of a stream while the agent keeps receiving and
// sending: after the restart the totals are exact, nothing lost and nothing counted twice.
TEST(StatsdSystem, AggregatorKilledMidStreamLosesNothingAndCountsNothingTwice) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs[0]->Start();
  Agent agent(dir, "web-1", IngestList(aggs));
  std::this_thread::sleep_for(500ms);

  size_t sent = 0;
  const auto start = std::chrono::steady_clock::now();
  bool killed = false, restarted = false;
  while (std::chrono::steady_clock::now() - start < 8s) {
    const auto t = std::chrono::steady_clock::now() - start;
    if (!killed && t > 2500ms) {
      aggs[0]->KillHard();
      killed = true;
    }
    if (!restarted && t > 4500ms) {
      aggs[0]->Start();
      restarted = true;
    }
    std::vector<uint64_t> us(10);
    for (size_t k = 0; k < us.size(); ++k) us[k] = 100 + (sent + k) % 5000;
    SendTimings(agent.statsd_port(), "disk.latency", us);
    sent += us.size();
    std::this_thread::sleep_for(25ms);
  }
  ASSERT_TRUE(killed && restarted);
  ASSERT_GT(sent, 2000u);

  size_t total = 0;
  auto count_now = [&] {
    CommandResult r =
        Cli({"stats", "--metric", "disk.latency", "--from", "-5m", "--format", "json"},
            QueryList(aggs));
    if (r.exit_code != 0) return false;
    total = 0;
    for (const auto& [g, s] : ParseStats(r.out)) total += s.count;
    return total == sent;
  };
  EXPECT_TRUE(WaitFor(count_now, 20s)) << "sent " << sent << ", stored " << total << "\n"
                                       << aggs[0]->Log() << agent.process().Stderr();
  // Resends that are still in flight must not add anything later.
  std::this_thread::sleep_for(3s);
  count_now();
  EXPECT_EQ(total, sent);
  EXPECT_TRUE(agent.process().Running());
}

// An agent told to stop ships everything it holds, the second still filling included: a client
// that sent before the signal loses nothing.
TEST(StatsdSystem, AStoppingAgentShipsTheSecondStillFilling) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs[0]->Start();
  Agent agent(dir, "web-1", IngestList(aggs));
  std::this_thread::sleep_for(500ms);
  std::vector<uint64_t> us(100);
  for (size_t k = 0; k < us.size(); ++k) us[k] = 200 + k;
  SendTimings(agent.statsd_port(), "disk.latency", us);
  std::this_thread::sleep_for(100ms);  // received, and (most likely) still in the current second
  agent.process().Kill(SIGTERM);
  ASSERT_EQ(agent.process().Wait(), 0) << agent.process().Stderr();
  const int64_t later = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count() +
                        2;
  CommandResult r = Cli({"stats", "--metric", "disk.latency", "--from", "-5m", "--to",
                         std::to_string(later), "--format", "json"},
                        QueryList(aggs));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  uint64_t total = 0;
  for (const auto& [g, s] : ParseStats(r.out)) total += s.count;
  EXPECT_EQ(total, us.size()) << agent.process().Stderr();
}

}  // namespace
}  // namespace trailmap::test
