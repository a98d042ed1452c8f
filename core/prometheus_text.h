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
// "ns" -> "_seconds" with the value divided by 1e9, "s" -> "_seconds" — then "_total" for a
// counter; a suffix the name already ends with is not repeated ("rocksdb.memtable_bytes" ->
// "..._memtable_bytes"). A counter is exposed as its running total (what the reading holds), not as
// the per-second gain trailmap stores: Prometheus takes rate() itself. Other units ("packets/s",
// "fds") name what is counted and go into the HELP text, not the name.
//
// Labels: the reading's canonical fields, each key sanitized like a name (a leading digit gets a
// '_'), each value escaped ('\\', '"', newline). All series of one metric are written together
// under one HELP and TYPE, metrics in the order they first appear.
//
// Latency histograms (the aggregator's trailmap.aggregator.query.latency{kind}) go out as
// classic histograms — NAME_seconds_bucket{le}, NAME_seconds_sum, NAME_seconds_count — whose
// bounds are the powers of two from 2^-13 s (122 us) to 2^5 s (32 s), then +Inf:
//
//   trailmap_aggregator_query_latency_seconds_bucket{kind="histograms",le="0.0001220703125"} 0
//   ...
//   trailmap_aggregator_query_latency_seconds_bucket{kind="histograms",le="+Inf"} 12
//   trailmap_aggregator_query_latency_seconds_sum{kind="histograms"} 0.84
//   trailmap_aggregator_query_latency_seconds_count{kind="histograms"} 12
//
// Why buckets and not a summary: buckets add up. sum by (le) over every aggregator is the
// cluster's distribution, and histogram_quantile() works on any rate() window the operator
// picks; a summary's quantiles are fixed at the source over its own window and cannot be
// combined — averaging percentiles is what trailmap exists to avoid. Why powers of two: they are
// the bucket boundaries of a native histogram of schema 0, so these buckets are exactly a
// coarsening of a native histogram (a Prometheus that converts classic histograms to native ones
// loses nothing to misaligned bounds). 20 buckets a series keep a scrape small; the fine
// distribution (1/64 of a power of two) is trailmap's own, in the store as query.latency.
// Counts are exact: each event is counted in the first bucket whose bound is >= its value.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/self_metrics.h"

namespace trailmap {

// Running totals of latencies (ns) in the classic buckets above. A value type; not thread-safe.
class LatencyBuckets {
 public:
  static constexpr int kMinExponent = -13;  // the first bound: 2^-13 s
  static constexpr int kMaxExponent = 5;    // the last finite bound: 2^5 s
  static constexpr size_t kBounds = kMaxExponent - kMinExponent + 1;

  void Record(uint64_t ns);

  // Events at or below bound i's seconds and above the one before (not cumulative); the last
  // element counts those above every finite bound (+Inf).
  const std::array<uint64_t, kBounds + 1>& buckets() const { return buckets_; }
  uint64_t count() const { return count_; }
  double sum_ns() const { return sum_ns_; }
  // Bound i (< kBounds) in seconds: 2^(kMinExponent + i).
  static double BoundSeconds(size_t i);

 private:
  std::array<uint64_t, kBounds + 1> buckets_{};
  uint64_t count_ = 0;
  double sum_ns_ = 0;
};

// One latency histogram series: metric (unit ns), its canonical fields and description.
struct LatencyReading {
  std::string metric;
  std::string fields;
  std::string description;
  LatencyBuckets buckets;
};
using LatencyReadings = std::vector<LatencyReading>;

// The exposition text of `readings`, then of `latencies` (ends with a newline; "" when there
// are none). A latency metric's series go together under one HELP and TYPE like the rest.
std::string FormatPrometheusText(const SelfReadings& readings,
                                 const LatencyReadings& latencies = {});

// A metric or label name made valid: characters outside [a-zA-Z0-9_] (and ':' for metric names)
// become '_', and a leading digit gets a '_' before it. "" -> "_".
std::string PrometheusName(std::string_view name, bool metric);

}  // namespace trailmap
