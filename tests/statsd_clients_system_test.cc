// statsd as real applications send it. Two statsd clients from npm that no one here
// wrote (hot-shots, statsd-client; tests/statsd_clients/clients.mjs) send timings, counters
// with sample rates, gauges with deltas, sets, histograms and distributions with tags to a real
// trailmap-agent on loopback UDP, shipping to a real aggregator; the real CLI reads back exactly
// what they sent; the agent's own line count, scraped from its Prometheus /metrics, is exact too
// and passes promtool. The expected values are written out here from the workload the script
// states, not read back from it.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "tests/cli_reads.h"
#include "tests/cluster.h"
#include "tests/http_client.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kMs = 1'000'000;  // ns

TEST(StatsdClientsSystem, HotShotsAndStatsdClientTotalsAreExact) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs[0]->Start();
  const std::string config = dir / "agent.toml";
  std::ofstream(config) << "[[statsd_unit]]\nmatch = \"hs.resp.*\"\nunit = \"B\"\n";
  const int metrics_port = FreePort();
  Agent agent(dir, "app-1", IngestList(aggs),
              {"--config", config, "--metrics", "127.0.0.1:" + std::to_string(metrics_port)});
  const std::string q = QueryList(aggs);

  CommandResult sent =
      RunProgram({std::string(TRAILMAP_SOURCE_DIR) + "/tests/statsd_clients/run.sh", "clients.mjs",
                  std::to_string(agent.statsd_port())},
                 120s);
  ASSERT_EQ(sent.exit_code, 0) << sent.out << sent.err;
  EXPECT_EQ(sent.out, "{\"hot_shots_calls\":279,\"statsd_client_calls\":80}\n");

  // The last thing each client sent must have arrived before anything is compared.
  std::map<std::string, GroupStats> timing;
  const bool arrived = WaitFor(
      [&] {
        timing = ReadStats("hs.timing", "op", q);
        return timing["read"].count + timing["write"].count == 40 &&
               ReadStats("sc.dist", "", q).size() == 1 && ReadLine("hs.users", q).sum() == 5 &&
               ReadLine("sc.temp", q).values.size() >= 1 &&
               ReadLine("sc.temp", q).values.back() == 16;
      },
      30s);
  ASSERT_TRUE(arrived) << agent.Log() << aggs[0]->Log();

  // hot-shots timings 1..40 ms, odd ones op:write (i even), even ones op:read.
  EXPECT_EQ(timing["write"].count, 20u);
  EXPECT_EQ(timing["write"].min, 1 * kMs);
  EXPECT_EQ(timing["write"].max, 39 * kMs);
  EXPECT_EQ(timing["read"].min, 2 * kMs);
  EXPECT_EQ(timing["read"].max, 40 * kMs);
  // Every hot-shots line carries the global tag.
  EXPECT_EQ(ReadStats("hs.timing", "env", q)["test"].count, 40u);

  // Distributions at rate 0.5: 40 lines of 0.5 .. 39.5 ms, each standing for 2 events.
  std::map<std::string, GroupStats> dist = ReadStats("hs.dist", "tier", q);
  EXPECT_EQ(dist["gold"].count, 80u);
  EXPECT_EQ(dist["gold"].min, kMs / 2);
  EXPECT_EQ(dist["gold"].max, 39 * kMs + kMs / 2);
  EXPECT_DOUBLE_EQ(dist["gold"].mean, 20 * kMs);

  // Histograms of bytes (the [[statsd_unit]] rule): 100 .. 4000 B.
  std::map<std::string, GroupStats> bytes = ReadStats("hs.resp.bytes", "", q);
  ASSERT_EQ(bytes.size(), 1u);
  EXPECT_EQ(bytes.begin()->second.count, 40u);
  EXPECT_EQ(bytes.begin()->second.min, 100u);
  EXPECT_EQ(bytes.begin()->second.max, 4000u);
  CommandResult metrics = Cli({"metrics", "--format", "json"}, q);
  EXPECT_NE(metrics.out.find(R"("hs.resp.bytes")"), std::string::npos) << metrics.out;

  // Counters: the per-second sums add up to what was counted (sampled lines scaled by 1/rate).
  const Line hits = ReadLine("hs.hits", q);
  EXPECT_EQ(hits.unit, "/s");
  EXPECT_DOUBLE_EQ(hits.sum(), 160 - 20);
  EXPECT_DOUBLE_EQ(ReadLine("sc.hits", q).sum(), 25 + 75 - 10);

  // Gauges: the last second's value is the last value set, deltas applied by the agent.
  const Line queue = ReadLine("hs.queue", q);
  EXPECT_EQ(queue.unit, "1");
  ASSERT_FALSE(queue.values.empty());
  EXPECT_DOUBLE_EQ(queue.values.back(), 17);
  EXPECT_DOUBLE_EQ(ReadLine("sc.temp", q).values.back(), 16);

  // A set of 5 distinct members sent 15 times in one datagram.
  const Line users = ReadLine("hs.users", q);
  EXPECT_EQ(users.unit, "distinct/s");
  EXPECT_EQ(users.values, std::vector<double>{5});

  // statsd-client: timings 10 .. 250 ms with two tags, one histogram, one distribution.
  std::map<std::string, GroupStats> sc = ReadStats("sc.timing", "route", q);
  EXPECT_EQ(sc["home"].count, 25u);
  EXPECT_EQ(sc["home"].min, 10 * kMs);
  EXPECT_EQ(sc["home"].max, 250 * kMs);
  EXPECT_EQ(ReadStats("sc.hist", "app", q)["demo"].max, 7 * kMs);
  EXPECT_EQ(ReadStats("sc.dist", "tier", q)["gold"].max, 9 * kMs);

  // Nothing refused: every line the clients sent is one the agent takes.
  EXPECT_EQ(agent.Log().find("statsd: rejected"), std::string::npos) << agent.Log();

  // The agent's own count of them, scraped as Prometheus would: hot-shots sent 199 lines (of its
  // 279 calls, 80 sampled out), statsd-client 80.
  const HttpResult scrape = HttpGet(metrics_port, "/metrics");
  ASSERT_EQ(scrape.status, 200) << agent.Log();
  EXPECT_EQ(scrape.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(scrape.body.find("\ntrailmap_agent_statsd_lines_total 279\n"), std::string::npos)
      << scrape.body;
  EXPECT_NE(scrape.body.find("\ntrailmap_agent_statsd_rejected_total{reason=\"syntax\"} 0\n"),
            std::string::npos)
      << scrape.body;
  const std::string scraped = dir / "scrape.txt";
  std::ofstream(scraped) << scrape.body;
  const CommandResult lint = RunProgram({"/bin/sh", "-c", "promtool check metrics < " + scraped});
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
}

}  // namespace
}  // namespace trailmap::test
