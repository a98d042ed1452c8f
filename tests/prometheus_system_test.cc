// Prometheus scrapes of all three daemons: a real aggregator with --metrics, a real
// agent with --metrics and a real trailmap-query with bearer tokens, each scraped over HTTP on
// loopback as Prometheus does. Every body passes `promtool check metrics` (Debian's prometheus
// package), and holds exact counts of what the test did: the statsd lines the agent accepted,
// one query-latency event per catalog query the aggregator answered, the agent's one ingest
// connection, and trailmap-query's replies and 401s.
#include <gtest/gtest.h>

#include <chrono>

#include "core/testing_promtool.h"
#include "core/sha256.h"
#include "tests/cluster.h"
#include "tests/fault_load.h"
#include "tests/http_client.h"
#include "tests/prometheus_sample.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

constexpr char kExposition[] = "text/plain; version=0.0.4; charset=utf-8";

double Sample(const std::string& text, const std::string& series) {
  return PrometheusSample(text, series);
}

TEST(PrometheusSystem, EveryDaemonServesExactCountsThatPromtoolAccepts) {
  TempDir dir;
  const int agg_port = FreePort();
  const int agent_port = FreePort();
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(
      dir, "agg-1",
      std::vector<std::string>{"--metrics", "127.0.0.1:" + std::to_string(agg_port)}));
  aggs[0]->Start();
  ASSERT_TRUE(WaitFor([&] { return aggs[0]->Log().find("started") != std::string::npos; }, 20s));
  EXPECT_NE(aggs[0]->Log().find("Prometheus http://127.0.0.1:" + std::to_string(agg_port) +
                                "/metrics"),
            std::string::npos)
      << aggs[0]->Log();
  Agent agent(dir, "prom-1", IngestList(aggs),
              {"--no-proc", "--metrics", "127.0.0.1:" + std::to_string(agent_port)});

  // The agent: exactly kLines statsd lines accepted.
  constexpr int kLines = 200;
  SendEvents(agent.statsd_port(), "app.latency", kLines);
  HttpResult scraped;
  ASSERT_TRUE(WaitFor(
      [&] {
        scraped = HttpGet(agent_port, "/metrics");
        return Sample(scraped.body, "trailmap_agent_statsd_lines_total") >= kLines;
      },
      20s))
      << scraped.body << agent.Log();
  EXPECT_EQ(scraped.status, 200);
  EXPECT_EQ(scraped.content_type, kExposition);
  EXPECT_EQ(Sample(scraped.body, "trailmap_agent_statsd_lines_total"), kLines);
  EXPECT_EQ(Sample(scraped.body, "trailmap_agent_statsd_packets_total"), kLines / 20);
  EXPECT_EQ(trailmap::testing::PromtoolCheck(scraped.body), "") << scraped.body;

  // The aggregator: kQueries catalog queries, each one latency event of kind "metrics"; the
  // agent's one CURVE connection on the ingest socket.
  constexpr int kQueries = 3;
  for (int i = 0; i < kQueries; ++i) {
    CommandResult r = Cli({"metrics", "--format", "json"}, QueryList(aggs));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const std::string count =
      "trailmap_aggregator_query_latency_seconds_count{kind=\"metrics\",shard=\"agg-1\"}";
  ASSERT_TRUE(WaitFor(
      [&] {
        scraped = HttpGet(agg_port, "/metrics");
        return Sample(scraped.body, count) >= kQueries;
      },
      20s))
      << scraped.body << aggs[0]->Log();
  EXPECT_EQ(scraped.status, 200);
  EXPECT_EQ(scraped.content_type, kExposition);
  EXPECT_EQ(Sample(scraped.body, count), kQueries) << scraped.body;
  EXPECT_EQ(Sample(scraped.body,
                   "trailmap_aggregator_query_latency_seconds_bucket{kind=\"metrics\",shard="
                   "\"agg-1\",le=\"+Inf\"}"),
            kQueries);
  EXPECT_EQ(
      Sample(scraped.body, "trailmap_aggregator_connections{shard=\"agg-1\",socket=\"ingest\"}"), 1)
      << scraped.body;
  EXPECT_GT(Sample(scraped.body, "trailmap_aggregator_ingest_batches_total{shard=\"agg-1\"}"), 0);
  EXPECT_EQ(Sample(scraped.body, "trailmap_aggregator_ingest_rejected_total{shard=\"agg-1\"}"), 0);
  EXPECT_EQ(trailmap::testing::PromtoolCheck(scraped.body), "") << scraped.body;

  // trailmap-query: /metrics behind the bearer token like /api/self.
  const std::string token = "prometheus scrape token";
  WriteFile(dir / "tokens.txt", "prometheus " + Sha256Hex(token) + "\n");
  const int node_port = FreePort();
  Process node({Binary("trailmap-query"), "--listen", "127.0.0.1:" + std::to_string(node_port),
                "--aggregators", QueryList(aggs), "--tokens", dir / "tokens.txt"},
               dir.path(), "trailmap-query");
  ASSERT_TRUE(WaitFor([&] { return HttpGet(node_port, "/").status == 200; }, 10s))
      << node.Stderr();  // 1 reply (or more while it started: counted below from here)
  EXPECT_EQ(HttpGet(node_port, "/metrics").status, 401);
  EXPECT_EQ(HttpGet(node_port, "/metrics", "Bearer wrong").status, 401);
  const HttpResult first = HttpGet(node_port, "/metrics", "Bearer " + token);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.content_type, kExposition);
  EXPECT_EQ(Sample(first.body, "trailmap_query_http_unauthorized_total"), 2) << first.body;
  EXPECT_EQ(Sample(first.body, "trailmap_query_http_client_errors_total"), 2);
  EXPECT_EQ(Sample(first.body, "trailmap_query_http_server_errors_total"), 0);
  EXPECT_GE(Sample(first.body, "trailmap_query_uptime_seconds"), 0);
  EXPECT_GT(Sample(first.body, "trailmap_query_process_rss_bytes"), 0);
  EXPECT_EQ(trailmap::testing::PromtoolCheck(first.body), "") << first.body;
  EXPECT_EQ(HttpGet(node_port, "/api/nothing", "Bearer " + token).status, 404);
  const HttpResult second = HttpGet(node_port, "/metrics", "Bearer " + token);
  // Two replies since `first` (the 404 and this one), one more 4xx.
  EXPECT_EQ(Sample(second.body, "trailmap_query_http_requests_total") -
                Sample(first.body, "trailmap_query_http_requests_total"),
            2);
  EXPECT_EQ(Sample(second.body, "trailmap_query_http_client_errors_total"), 3);
}

}  // namespace
}  // namespace trailmap::test
