#include "core/prometheus_text.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(PrometheusText, CountersGaugesUnitsAndLabels) {
  SelfReadings r;
  AddCounter(&r, "trailmap.agent.statsd.lines", "lines/s", "statsd lines accepted", 1000);
  AddCounter(&r, "trailmap.agent.statsd.rejected", "lines/s", "statsd lines refused", 2,
             "reason=syntax");
  AddGauge(&r, "trailmap.agent.process.rss", "B", "resident memory", 12'000'000);
  AddCounter(&r, "trailmap.x.read_bytes", "B/s", "bytes read", 7);
  AddGauge(&r, "trailmap.x.uptime", "s", "since the start", 12);
  AddCounter(&r, "trailmap.agent.statsd.rejected", "lines/s", "statsd lines refused", 3,
             "reason=tag");
  AddCounter(&r, "trailmap.agent.process.cpu", "ns", "CPU time", 1'500'000'000, "mode=user");
  AddGauge(&r, "trailmap.agent.exec.x", "%", "a \\ back\nslash", 0.5, "9k=a\"b\\c");
  EXPECT_EQ(FormatPrometheusText(r),
            "# HELP trailmap_agent_statsd_lines_total statsd lines accepted (lines)\n"
            "# TYPE trailmap_agent_statsd_lines_total counter\n"
            "trailmap_agent_statsd_lines_total 1000\n"
            "# HELP trailmap_agent_statsd_rejected_total statsd lines refused (lines)\n"
            "# TYPE trailmap_agent_statsd_rejected_total counter\n"
            "trailmap_agent_statsd_rejected_total{reason=\"syntax\"} 2\n"
            "trailmap_agent_statsd_rejected_total{reason=\"tag\"} 3\n"
            "# HELP trailmap_agent_process_rss_bytes resident memory\n"
            "# TYPE trailmap_agent_process_rss_bytes gauge\n"
            "trailmap_agent_process_rss_bytes 12000000\n"
            "# HELP trailmap_x_read_bytes_total bytes read\n"
            "# TYPE trailmap_x_read_bytes_total counter\n"
            "trailmap_x_read_bytes_total 7\n"
            "# HELP trailmap_x_uptime_seconds since the start\n"
            "# TYPE trailmap_x_uptime_seconds gauge\n"
            "trailmap_x_uptime_seconds 12\n"
            "# HELP trailmap_agent_process_cpu_seconds_total CPU time\n"
            "# TYPE trailmap_agent_process_cpu_seconds_total counter\n"
            "trailmap_agent_process_cpu_seconds_total{mode=\"user\"} 1.5\n"
            "# HELP trailmap_agent_exec_x a \\\\ back\\nslash (%)\n"
            "# TYPE trailmap_agent_exec_x gauge\n"
            "trailmap_agent_exec_x{_9k=\"a\\\"b\\\\c\"} 0.5\n");
  EXPECT_EQ(FormatPrometheusText({}), "");
}

// Each latency in the first bucket whose bound (a power of two seconds) holds it; exposed as a
// classic histogram with cumulative counts, _sum in seconds and _count.
TEST(PrometheusText, LatencyHistogramsAsClassicBuckets) {
  EXPECT_EQ(LatencyBuckets::kBounds, 19u);
  EXPECT_EQ(LatencyBuckets::BoundSeconds(0), 0.0001220703125);
  EXPECT_EQ(LatencyBuckets::BoundSeconds(18), 32.0);
  LatencyReading a{
      "trailmap.aggregator.query.latency", "kind=status,shard=agg-1", "query latency", {}};
  a.buckets.Record(0);               // le 2^-13
  a.buckets.Record(122'070);         // le 2^-13 (122,070.3125 ns)
  a.buckets.Record(122'071);         // le 2^-12
  a.buckets.Record(1'000'000);       // 1 ms: le 2^-9 (1.953125 ms)
  a.buckets.Record(32'000'000'000);  // 32 s: the last finite bound
  a.buckets.Record(32'000'000'001);  // +Inf
  EXPECT_EQ(a.buckets.count(), 6u);
  EXPECT_EQ(a.buckets.buckets()[0], 2u);
  EXPECT_EQ(a.buckets.buckets()[1], 1u);
  EXPECT_EQ(a.buckets.buckets()[4], 1u);
  EXPECT_EQ(a.buckets.buckets()[18], 1u);
  EXPECT_EQ(a.buckets.buckets()[19], 1u);
  LatencyReading b{"trailmap.aggregator.query.latency", "", "query latency", {}};
  b.buckets.Record(500'000'000);  // 0.5 s
  SelfReadings gauges;
  AddGauge(&gauges, "trailmap.x", "", "x", 1);
  const std::string text = FormatPrometheusText(gauges, {a, b});
  std::string expected =
      "# HELP trailmap_x x\n"
      "# TYPE trailmap_x gauge\n"
      "trailmap_x 1\n"
      "# HELP trailmap_aggregator_query_latency_seconds query latency\n"
      "# TYPE trailmap_aggregator_query_latency_seconds histogram\n";
  const uint64_t cumulative_a[] = {2, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5};
  const char* const bounds[] = {"0.0001220703125",
                                "0.000244140625",
                                "0.00048828125",
                                "0.0009765625",
                                "0.001953125",
                                "0.00390625",
                                "0.0078125",
                                "0.015625",
                                "0.03125",
                                "0.0625",
                                "0.125",
                                "0.25",
                                "0.5",
                                "1",
                                "2",
                                "4",
                                "8",
                                "16",
                                "32"};
  for (size_t i = 0; i < 19; ++i) {
    expected +=
        "trailmap_aggregator_query_latency_seconds_bucket{kind=\"status\",shard=\"agg-1\","
        "le=\"" +
        std::string(bounds[i]) + "\"} " + std::to_string(cumulative_a[i]) + "\n";
  }
  expected +=
      "trailmap_aggregator_query_latency_seconds_bucket{kind=\"status\",shard=\"agg-1\","
      "le=\"+Inf\"} 6\n"
      "trailmap_aggregator_query_latency_seconds_sum{kind=\"status\",shard=\"agg-1\"} "
      "64.001244142\n"
      "trailmap_aggregator_query_latency_seconds_count{kind=\"status\",shard=\"agg-1\"} 6\n";
  for (size_t i = 0; i < 19; ++i) {
    expected += "trailmap_aggregator_query_latency_seconds_bucket{le=\"" + std::string(bounds[i]) +
                "\"} " + (i >= 12 ? "1" : "0") + "\n";
  }
  expected +=
      "trailmap_aggregator_query_latency_seconds_bucket{le=\"+Inf\"} 1\n"
      "trailmap_aggregator_query_latency_seconds_sum 0.5\n"
      "trailmap_aggregator_query_latency_seconds_count 1\n";
  EXPECT_EQ(text, expected);
}

TEST(PrometheusText, Names) {
  EXPECT_EQ(PrometheusName("a.b-c:d", true), "a_b_c:d");
  EXPECT_EQ(PrometheusName("a.b-c:d", false), "a_b_c_d");
  EXPECT_EQ(PrometheusName("9x", false), "_9x");
  EXPECT_EQ(PrometheusName("", true), "_");
}

}  // namespace
}  // namespace trailmap
