// MetricQuota: how many metric names new to the catalog each client key may create, so that one
// agent (broken, or making names up) cannot grow the catalog every query lists without bound.
//
// Each key has a token bucket of `new_metrics_per_day` names, full at first and refilled evenly
// over a day. A batch's metric names the catalog does not hold yet are charged one each (a name
// twice in one batch once); while the bucket holds a token a name is taken, past that the batch
// is applied without it: its series definitions are refused as items (schemas/ingest.capnp,
// "Items"), with every histogram, scalar and stack count that refers to them, and counted. The
// rest of the batch applies as usual: a quota never costs data of metrics that exist. Unlike the
// per-agent rates (agent_limits.h) the batch is not held back: a name over the quota would be
// over it again at any resend.
//
// Keys: with CURVE the connection's key name (all agents of one key share its quota); in
// plaintext the batch's host. Per-key state is in memory, bounded by `max_keys` (the keys whose
// buckets are fullest are forgotten first: a forgotten key starts full again), and starts full
// at every restart.
//
// Not thread-safe: the ingest server's applying thread owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/batch.h"

namespace trailmap::aggregator {

struct MetricQuotaOptions {
  double new_metrics_per_day = 10'000;  // per key; 0 = no quota
  size_t max_keys = 100'000;            // keys tracked at once
};

class MetricQuota {
 public:
  using Clock = std::chrono::steady_clock;
  explicit MetricQuota(MetricQuotaOptions options = {}) : options_(options) {}

  // Takes what `key` may create of `new_names` (distinct names the catalog lacks, in the order
  // they first appear in the batch) now: the names over the quota, in that order (empty when all
  // are taken).
  std::vector<std::string> Take(const std::string& key, const std::vector<std::string>& new_names,
                                Clock::time_point now);
  const MetricQuotaOptions& options() const { return options_; }

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point at;
  };
  MetricQuotaOptions options_;
  std::unordered_map<std::string, Bucket> buckets_;
};

// Leaves the series of the metrics named in `refused` out of `batch`, with every item that
// refers to them (series renumbered), each added to `*refusals` with reason(its metric) (the
// index of an item is its index in `batch` as it was handed in). Returns the series definitions
// left out.
size_t DropMetrics(Batch* batch, const std::vector<std::string>& refused,
                   const std::function<std::string(std::string_view metric)>& reason,
                   Refusals* refusals);

}  // namespace trailmap::aggregator
