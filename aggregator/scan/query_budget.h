// QueryBudget: what one query may still spend, checked inside the scan loops (histogram, scalar
// and stack scans) so a query past its deadline or over a cost limit stops where it is instead of
// running to the end.
//
// The limits are QueryLimits (core/query_wire.h): the client's ask within the aggregator's own
// (QueryLimits::Within). A scan charges every key it visits (kept by its hosts and predicate or
// not: that is the work) and the cells it opens; the query
// server checks the groups and the answer bytes at the end. Past any limit, or once the
// aggregator is stopping, a charge returns an error:
//
//   ResourceExhausted  "query over budget: it read more than 1000 stored keys (max_keys); narrow
//                      it: a larger --step (coarser rollups) or a shorter range"
//   Unavailable        "the aggregator is stopping" (the stop flag; ask another replica)
//
// Every over-budget message starts with kOverBudget, names the limit as the aggregator config
// names it ([queries] in configs/aggregator.toml) and says how to narrow the query.
//
// Cost: a charge is a relaxed atomic add; the clock and the stop flag are read every
// kKeysPerCheck keys, so a scan pays a few nanoseconds per key. Thread-safe: the slices of one
// histogram query charge one budget from several threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "core/query_wire.h"
#include "core/status.h"

namespace trailmap::aggregator {

inline constexpr const char* kOverBudget = "query over budget: ";

// The limits an aggregator runs with unless configured ([queries] in configs/aggregator.toml).
// Sized so a fleet heat map of 1,000 hosts x 1 h at 1 s read from every host fits: 3,600 s x
// 1,000 hosts x a few series is ~15 M keys (4 s on a 2-core box, docs/BENCHMARKS.md), and by
// host it is 3.6 M cells. A year of 10,000 hosts at 32 s does not.
inline constexpr QueryLimits kDefaultQueryLimits = {
    .deadline_ms = 30'000,
    .max_keys = 100'000'000,
    .max_groups = 100'000,
    .max_cells = 4'000'000,
    .max_answer_bytes = 512u << 20,
};
// Threads that answer queries unless configured ([queries] workers).
inline constexpr size_t kDefaultQueryWorkers = 4;

class QueryBudget {
 public:
  using Clock = std::chrono::steady_clock;
  // How many keys a scan reads between looks at the clock and the stop flag.
  static constexpr uint64_t kKeysPerCheck = 256;

  // `limits` with 0 = no limit; the deadline counts from `start`. `stopping` (not owned, may be
  // null) is the aggregator's stop flag: set, every charge fails.
  QueryBudget(const QueryLimits& limits, Clock::time_point start,
              const std::atomic<bool>* stopping = nullptr);
  // Counts `keys` more keys read; an error once past max_keys, the deadline or a stop (the clock
  // is read on every call: charge in batches, KeyMeter).
  Status ChargeKeys(uint64_t keys);
  // Counts `cells` more cells opened; an error once past max_cells.
  Status ChargeCells(uint64_t cells);
  // The deadline and the stop flag alone.
  Status Check() const;
  // The answer's groups and encoded size, once known.
  Status CheckGroups(uint64_t groups) const;
  Status CheckAnswerBytes(uint64_t bytes) const;

  // A flame graph's scan has no --step: its advice names what it does have (a shorter range,
  // fewer hosts, no --by, or the client's own --max-keys / --max-cells).
  void set_stack_query() { stacks_ = true; }

  const QueryLimits& limits() const { return limits_; }
  uint64_t keys() const { return keys_.load(std::memory_order_relaxed); }

 private:
  const QueryLimits limits_;
  const Clock::time_point deadline_;  // time_point::max() when there is none
  const std::atomic<bool>* stopping_;
  bool stacks_ = false;
  std::atomic<uint64_t> keys_{0};
  std::atomic<uint64_t> cells_{0};
};

// Charges a scan's keys to a budget in batches: Add on every key is a counter increment, and
// every kKeysPerCheck keys the batch goes to the budget (and its deadline is looked at). A null
// budget is no limit. Not thread-safe: one per scanning thread.
class KeyMeter {
 public:
  explicit KeyMeter(QueryBudget* budget) : budget_(budget) {}
  ~KeyMeter() { Flush(); }
  KeyMeter(const KeyMeter&) = delete;
  KeyMeter& operator=(const KeyMeter&) = delete;

  Status Add() {
    if (++pending_ < QueryBudget::kKeysPerCheck) return Status::Ok();
    return Flush();
  }
  Status Flush() {
    const uint64_t n = pending_;
    pending_ = 0;
    return n == 0 || budget_ == nullptr ? Status::Ok() : budget_->ChargeKeys(n);
  }

 private:
  QueryBudget* budget_;
  uint64_t pending_ = 0;
};

}  // namespace trailmap::aggregator
