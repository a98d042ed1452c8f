// QueryLatencies: how long this aggregator took to answer each query, by the second the answer
// was ready and by kind of query, for its self-metric trailmap.aggregator.query.latency
// (aggregator/server/self_metrics.h). The query server records every query it answers (from the
// message's arrival to its encoded answer); the self-metrics thread takes the complete seconds.
// Every query is also added to running totals by kind in Prometheus' classic buckets
// (core/prometheus_text.h), which the aggregator's --metrics serves.
//
// Kinds: "histograms" (heat maps, columns, trails, stats, lines), "metrics" (the catalog),
// "stacks" (flame graphs), "status" (`trailmap` health checks), "completeness" (a replicated
// query's choice of replica) and "invalid" (a message that did not decode as a query).
//
// Thread safety: every method may be called from any thread (a mutex inside).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/histogram.h"
#include "core/prometheus_text.h"
#include "core/query_wire.h"

namespace trailmap::aggregator {

// How the query server's answer to a query that does not decode begins.
inline constexpr std::string_view kBadQuery = "bad query: ";

class QueryLatencies {
 public:
  // `clock`: unix seconds now; empty = the system clock (tests hand down a fixed one).
  // `by_second` false: keep the totals only (nobody takes the seconds: --no-self-metrics).
  explicit QueryLatencies(std::function<int64_t()> clock = {}, bool by_second = true);
  QueryLatencies(const QueryLatencies&) = delete;
  QueryLatencies& operator=(const QueryLatencies&) = delete;

  // One answered query of `kind` that took `latency`, in the second it is now.
  void Record(const char* kind, std::chrono::nanoseconds latency);

  struct Second {
    int64_t time = 0;
    std::string kind;
    Histogram latencies;  // ns, one event per query
  };
  // Removes and returns what was recorded in the seconds before `second`, by time then kind.
  std::vector<Second> TakeBefore(int64_t second);

  // "histograms", "metrics", "stacks", "status" or "completeness" for an answer to a query of
  // that kind, "invalid" when the query did not decode (an error beginning with kBadQuery).
  static const char* KindOf(const Answer& answer);

  // Every query recorded since the start, by kind.
  std::map<std::string, LatencyBuckets> Totals() const;

 private:
  const std::function<int64_t()> clock_;
  const bool by_second_;
  mutable std::mutex mu_;
  std::map<std::pair<int64_t, std::string>, Histogram> held_;  // guarded by mu_
  std::map<std::string, LatencyBuckets> totals_;               // guarded by mu_
};

}  // namespace trailmap::aggregator
