// OpenTelemetry metrics as real applications export them. The OpenTelemetry JS SDK
// from npm (@opentelemetry/sdk-metrics; tests/otlp_clients/export.mjs), which no one here wrote,
// records a fixed workload and exports it twice (cumulative temporality, so the agent must turn
// the second export into deltas) through its two OTLP/HTTP exporters — protobuf with gzip under
// the prefix "pb", JSON under "js" — to a real trailmap-agent on loopback, shipping to a real
// aggregator. The real CLI reads back exact counts, sums, min, max and totals, and percentiles
// within the bound agent/otlp_histogram.h states; the agent's own count of points, scraped from
// its /metrics, is exact and nothing was refused. The expected values are written out here from
// the workload the script states, not read back from it.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tests/cli_reads.h"
#include "tests/cluster.h"
#include "tests/http_client.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

constexpr double kMs = 1'000'000;  // ns

// trailmap's own bucket: a reported value is within 1/128 of any value in it.
constexpr double kTrailmapBound = 1.0 / 128;

// The percentile `p` of `stats`.
double Percentile(const GroupStats& stats, double p) {
  for (const auto& [q, value] : stats.percentiles) {
    if (q == p) return value;
  }
  return -1;
}

TEST(OtlpClientsSystem, ProtobufGzipAndJsonExportsAreExact) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs[0]->Start();
  const int otlp_port = FreePort();
  const int metrics_port = FreePort();
  Agent agent(dir, "app-1", IngestList(aggs),
              {"--otlp", "127.0.0.1:" + std::to_string(otlp_port), "--metrics",
               "127.0.0.1:" + std::to_string(metrics_port), "--no-proc"});
  const std::string q = QueryList(aggs);

  CommandResult sent = RunProgram({std::string(TRAILMAP_SOURCE_DIR) + "/tests/otlp_clients/run.sh",
                                   "export.mjs", "http://127.0.0.1:" + std::to_string(otlp_port)},
                                  120s);
  ASSERT_EQ(sent.exit_code, 0) << sent.out << sent.err << agent.Log();
  // Two forced exports and the one at shutdown (nothing new: deltas of 0), each a success.
  EXPECT_EQ(sent.out, "{\"pb\":[0,0,0],\"js\":[0,0,0]}\n") << sent.err;

  for (const std::string prefix : {"pb", "js"}) {
    SCOPED_TRACE(prefix);
    // The second export's deltas must have arrived before anything is compared.
    std::map<std::string, GroupStats> latency;
    const bool arrived = WaitFor(
        [&] {
          latency = ReadStats(prefix + ".latency", "service.name", q);
          return latency["otlp-test-" + prefix].count == 100 &&
                 ReadStats(prefix + ".size", "", q).begin()->second.count == 40 &&
                 ReadLine(prefix + ".requests", q, "route == \"/b\"").sum() == 12;
        },
        30s);
    ASSERT_TRUE(arrived) << agent.Log() << aggs[0]->Log();

    // Exponential histogram, 1..100 ms: count, min, max and mean (the sum) exact.
    const GroupStats& l = latency["otlp-test-" + prefix];
    EXPECT_EQ(l.min, 1 * kMs);
    EXPECT_EQ(l.max, 100 * kMs);
    EXPECT_DOUBLE_EQ(l.mean, 50.5 * kMs);
    // The SDK fits 1..100 into its 160 buckets at scale 4 (scale 5 would need 213): a bucket
    // spans 2^(1/16), so a percentile is within 2^(1/16) - 1 = 4.4% of the true one, plus
    // trailmap's own 0.8%.
    const double bound = std::exp2(1.0 / 16) - 1 + kTrailmapBound;
    for (const auto& [p, truth] : {std::pair{50.0, 50.0}, {90.0, 90.0}, {99.0, 99.0}}) {
      EXPECT_NEAR(Percentile(l, p) / (truth * kMs), 1.0, bound) << "p" << p;
    }

    // Explicit buckets (the SDK's defaults ..., 1000, 2500, 5000, ...), 100..4000 B by 100.
    const GroupStats size = ReadStats(prefix + ".size", "", q).begin()->second;
    EXPECT_EQ(size.min, 100u);
    EXPECT_EQ(size.max, 4000u);
    EXPECT_DOUBLE_EQ(size.mean, 2050);
    // p50 is 2000, in (1000, 2500]; p90 is 3600, in (2500, 5000] clipped to the max 4000.
    EXPECT_GE(Percentile(size, 50), 1000 * (1 - kTrailmapBound));
    EXPECT_LE(Percentile(size, 50), 2500 * (1 + kTrailmapBound));
    EXPECT_GE(Percentile(size, 90), 2500 * (1 - kTrailmapBound));
    EXPECT_LE(Percentile(size, 90), 4000 * (1 + kTrailmapBound));

    // The counter: per-second increases that add up to what was counted, per route.
    const Line requests = ReadLine(prefix + ".requests", q, "route == \"/a\"");
    EXPECT_EQ(requests.unit, "/s");
    EXPECT_DOUBLE_EQ(requests.sum(), 30);
    EXPECT_DOUBLE_EQ(ReadLine(prefix + ".requests", q, "route == \"/b\"").sum(), 12);

    // The up-down counter's value (+5, then -2) and the gauge's last value.
    const Line queue = ReadLine(prefix + ".queue", q);
    ASSERT_FALSE(queue.values.empty());
    EXPECT_DOUBLE_EQ(queue.values.back(), 3);
    const Line temperature = ReadLine(prefix + ".temperature", q);
    EXPECT_EQ(temperature.unit, "Cel");
    ASSERT_FALSE(temperature.values.empty());
    EXPECT_DOUBLE_EQ(temperature.values.back(), 23.25);
  }

  // Each export holds 6 points (latency, size, requests by 2 routes, queue, temperature): 3
  // exports of 2 exporters, 36 points, none refused, in 6 requests.
  const HttpResult scrape = HttpGet(metrics_port, "/metrics");
  ASSERT_EQ(scrape.status, 200) << agent.Log();
  for (const std::string line :
       {"trailmap_agent_otlp_points_total 36", "trailmap_agent_otlp_requests_total 6",
        "trailmap_agent_otlp_rejected_total{reason=\"value\"} 0",
        "trailmap_agent_otlp_refused_total{status=\"400\"} 0",
        "trailmap_agent_otlp_baselines_total 0"}) {
    EXPECT_NE(scrape.body.find("\n" + line + "\n"), std::string::npos) << line << scrape.body;
  }
}

}  // namespace
}  // namespace trailmap::test
