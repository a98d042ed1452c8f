#include "aggregator/server/query_latencies.h"

#include "core/clock.h"

namespace trailmap::aggregator {

QueryLatencies::QueryLatencies(std::function<int64_t()> clock, bool by_second)
    : clock_(std::move(clock)), by_second_(by_second) {}

void QueryLatencies::Record(const char* kind, std::chrono::nanoseconds latency) {
  const int64_t now = NowSeconds(clock_);
  const uint64_t ns = latency.count() > 0 ? static_cast<uint64_t>(latency.count()) : 0;
  std::lock_guard<std::mutex> lock(mu_);
  if (by_second_) held_[{now, kind}].Record(ns);
  totals_[kind].Record(ns);
}

std::map<std::string, LatencyBuckets> QueryLatencies::Totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return totals_;
}

std::vector<QueryLatencies::Second> QueryLatencies::TakeBefore(int64_t second) {
  std::vector<Second> out;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = held_.begin();
  for (; it != held_.end() && it->first.first < second; ++it) {
    out.push_back(Second{it->first.first, it->first.second, std::move(it->second)});
  }
  held_.erase(held_.begin(), it);
  return out;
}

const char* QueryLatencies::KindOf(const Answer& answer) {
  // A query that did not decode: its answer carries its id when one read, so the prefix tells.
  if (answer.error.starts_with(kBadQuery)) return "invalid";
  switch (answer.kind) {
    case Query::Kind::kHistograms:
      return "histograms";
    case Query::Kind::kMetrics:
      return "metrics";
    case Query::Kind::kStacks:
      return "stacks";
    case Query::Kind::kStatus:
      return "status";
    case Query::Kind::kCompleteness:
      return "completeness";
  }
  return "invalid";
}

}  // namespace trailmap::aggregator
