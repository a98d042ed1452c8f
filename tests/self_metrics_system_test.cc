// System test of the daemons' self-metrics: a real aggregator and a real agent publish their own
// counters as trailmap metrics, and the real CLI reads them back exactly: the statsd lines the
// agent accepted, the batches it had acked against the batches the aggregator applied, one
// latency event per query the aggregator answered, and plausible RSS and descriptor counts.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/cluster.h"
#include "tests/stats_json.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

int64_t NowSecond() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The values of every line of a `trailmap line --format json` document, nulls skipped.
std::vector<double> LineValues(const std::string& json) {
  std::vector<double> out;
  const nlohmann::json doc = nlohmann::json::parse(json);
  for (const auto& series : doc.at("series")) {
    for (const auto& v : series.at("values")) {
      if (!v.is_null()) out.push_back(v.get<double>());
    }
  }
  return out;
}

class SelfMetricsSystem : public ::testing::Test {
 protected:
  // Runs the CLI against the aggregator, counting every query it sends there (one per command).
  CommandResult Query(std::vector<std::string> args) {
    ++queries_;
    return Cli(std::move(args), QueryList(aggs_));
  }
  // The sum over all of a scalar metric's stored seconds, or -1 when the command failed.
  double Sum(const std::string& metric) {
    CommandResult r = Query({"line", "--metric", metric, "--stat", "sum", "--from", "-5m", "--to",
                             "+5m", "--format", "json"});
    if (r.exit_code != 0) return -1;
    double sum = 0;
    for (double v : LineValues(r.out)) sum += v;
    return sum;
  }

  TempDir dir_;
  std::vector<std::unique_ptr<Aggregator>> aggs_;
  uint64_t queries_ = 0;
};

TEST_F(SelfMetricsSystem, DaemonsPublishExactCountsOfThemselves) {
  aggs_.push_back(std::make_unique<Aggregator>(dir_, "agg-1"));
  aggs_[0]->Start();
  ASSERT_TRUE(WaitFor([&] { return aggs_[0]->Log().find("started") != std::string::npos; }, 20s));
  Agent agent(dir_, "self-1", IngestList(aggs_), {"--no-proc"});
  ASSERT_TRUE(
      WaitFor([&] { return agent.process().Stderr().find("started:") != std::string::npos; }, 20s));

  // Exactly kLines statsd lines, 20 a packet, gently (loopback UDP must not drop here).
  constexpr int kLines = 1000;
  std::string packet;
  for (int i = 0; i < kLines; ++i) {
    packet += "app.latency:" + std::to_string(1 + i % 50) + "|ms\n";
    if ((i + 1) % 20 == 0) {
      SendUdp(agent.statsd_port(), packet);
      packet.clear();
      std::this_thread::sleep_for(1ms);
    }
  }
  // The agent's own count of accepted lines reaches exactly kLines, and stays there.
  double lines = 0;
  ASSERT_TRUE(WaitFor([&] { return (lines = Sum("trailmap.agent.statsd.lines")) >= kLines; }, 20s))
      << "trailmap.agent.statsd.lines summed to " << lines << "\n"
      << agent.process().Stderr();
  EXPECT_EQ(lines, kLines);
  EXPECT_EQ(Sum("trailmap.agent.statsd.packets"), kLines / 20);

  // Stopped, the agent ships a last batch whose counters cover every earlier batch, each of them
  // acknowledged: so the aggregator applied exactly one batch more than the agent reports acked.
  agent.process().Kill(SIGTERM);
  ASSERT_EQ(agent.process().Wait(), 0) << agent.process().Stderr();
  double acked = 0, sent = 0, applied = 0;
  const bool settled = WaitFor(
      [&] {
        acked = Sum("trailmap.agent.batches.acked");
        sent = Sum("trailmap.agent.batches.sent");
        applied = Sum("trailmap.aggregator.ingest.batches");
        return acked > 0 && applied == acked + 1;
      },
      20s);
  EXPECT_TRUE(settled) << "agent acked " << acked << ", aggregator applied " << applied << "\n"
                       << agent.process().Stderr() << aggs_[0]->Log();
  EXPECT_EQ(sent, acked);
  EXPECT_EQ(Sum("trailmap.agent.batches.resent"), 0);
  EXPECT_EQ(Sum("trailmap.aggregator.ingest.rejected"), 0);

  // The catalog describes the self-metrics (one more query).
  CommandResult catalog = Query({"metrics", "--format", "json"});
  ASSERT_EQ(catalog.exit_code, 0) << catalog.err;
  bool described = false;
  const nlohmann::json listed = nlohmann::json::parse(catalog.out);
  for (const auto& m : listed.at("metrics")) {
    if (m.at("name") != "trailmap.agent.statsd.lines") continue;
    described = true;
    EXPECT_EQ(m.at("unit"), "lines/s");
    EXPECT_EQ(m.at("description"), "statsd lines accepted");
  }
  EXPECT_TRUE(described) << catalog.out;

  // Every query so far was answered before `end`: wait for the clock to pass it, so the reads
  // below are answered in seconds after the range they read.
  const uint64_t made = queries_;
  const int64_t end = NowSecond() + 1;
  while (NowSecond() < end) std::this_thread::sleep_for(20ms);
  uint64_t latencies = 0;
  const bool counted = WaitFor(
      [&] {
        CommandResult r = Cli({"stats", "--metric", "trailmap.aggregator.query.latency", "--from",
                               "-5m", "--to", std::to_string(end), "--format", "json"},
                              QueryList(aggs_));
        if (r.exit_code != 0) return false;
        latencies = 0;
        for (const auto& [group, s] : ParseStats(r.out)) latencies += s.count;
        return latencies >= made;
      },
      20s);
  EXPECT_TRUE(counted) << latencies << " latency events for " << made << " queries";
  EXPECT_EQ(latencies, made);

  // Resident memory and descriptors are plausible for both daemons (ASan inflates RSS).
  for (const std::string daemon : {"agent", "aggregator"}) {
    SCOPED_TRACE(daemon);
    for (const auto& [metric, low, high] :
         {std::tuple{"rss", 4.0 * (1 << 20), 8.0 * (1ull << 30)}, std::tuple{"fds", 4.0, 2000.0}}) {
      CommandResult r = Cli({"line", "--metric", "trailmap." + daemon + ".process." + metric,
                             "--stat", "max", "--from", "-5m", "--to", "+5m", "--format", "json"},
                            QueryList(aggs_));
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const std::vector<double> values = LineValues(r.out);
      ASSERT_FALSE(values.empty()) << metric;
      for (double v : values) {
        EXPECT_GT(v, low) << metric;
        EXPECT_LT(v, high) << metric;
      }
    }
    EXPECT_GT(Sum("trailmap." + daemon + ".process.cpu"), 0);
  }
}

}  // namespace
}  // namespace trailmap::test
