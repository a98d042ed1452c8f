// Self-metrics (core/self_metrics.h) in the Prometheus text exposition format (version 0.0.4,
// "text/plain; version=0.0.4"), so a Prometheus server can scrape a daemon directly.
//
//   # HELP trailmap_agent_statsd_lines_total statsd lines accepted
//   # TYPE trailmap_agent_statsd_lines_total counter
//   trailmap_agent_statsd_lines_total 1000
//   # HELP trailmap_agent_process_rss_bytes resident memory
//   # TYPE trailmap_agent_process_rss_bytes gauge
//   trailmap_agent_process_rss_bytes 1.2e+07
//
// Names: the metric with every character outside [a-zA-Z0-9_:] made '_' ("trailmap.agent.x" ->
// "trailmap_agent_x"), then the unit's suffix in Prometheus' base units — "B" -> "_bytes",
// "ns" -> "_seconds" with the value divided by 1e9 — then "_total" for a counter. A counter is
// exposed as its running total (what the reading holds), not as the per-second gain trailmap
// stores: Prometheus takes rate() itself. Other units ("packets/s", "fds") name what is
// counted and go into the HELP text, not the name.
//
// Labels: the reading's canonical fields, each key sanitized like a name (a leading digit gets a
// '_'), each value escaped ('\\', '"', newline). All series of one metric are written together
// under one HELP and TYPE, metrics in the order they first appear.
//
// No histograms: the daemons' self-metrics are counters and gauges only (the latency
// histograms trailmap stores for users are data, not self-metrics).
#pragma once

#include <string>

#include "core/self_metrics.h"

namespace trailmap {

// The exposition text of `readings` (ends with a newline; "" when there are none).
std::string FormatPrometheusText(const SelfReadings& readings);

// A metric or label name made valid: characters outside [a-zA-Z0-9_] (and ':' for metric names)
// become '_', and a leading digit gets a '_' before it. "" -> "_".
std::string PrometheusName(std::string_view name, bool metric);

}  // namespace trailmap
