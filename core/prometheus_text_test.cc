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
            "# HELP trailmap_agent_process_cpu_seconds_total CPU time\n"
            "# TYPE trailmap_agent_process_cpu_seconds_total counter\n"
            "trailmap_agent_process_cpu_seconds_total{mode=\"user\"} 1.5\n"
            "# HELP trailmap_agent_exec_x a \\\\ back\\nslash (%)\n"
            "# TYPE trailmap_agent_exec_x gauge\n"
            "trailmap_agent_exec_x{_9k=\"a\\\"b\\\\c\"} 0.5\n");
  EXPECT_EQ(FormatPrometheusText({}), "");
}

TEST(PrometheusText, Names) {
  EXPECT_EQ(PrometheusName("a.b-c:d", true), "a_b_c:d");
  EXPECT_EQ(PrometheusName("a.b-c:d", false), "a_b_c_d");
  EXPECT_EQ(PrometheusName("9x", false), "_9x");
  EXPECT_EQ(PrometheusName("", true), "_");
}

}  // namespace
}  // namespace trailmap
