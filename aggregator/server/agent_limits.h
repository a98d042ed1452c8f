// AgentLimiter: the per-agent rates an aggregator admits (docs/limits.md), so one
// agent — broken or hostile — cannot take the ingest path from everyone else.
//
// Each agent id has one token bucket per rate: batches, bytes, values (histogram deltas, scalars
// and stack counts), definitions (frames and stacks) per second, and new series per minute
// (catalog growth: series definitions the store's catalog does not hold yet). A bucket holds at
// most `burst_seconds` of its rate and starts full. A batch is admitted when every bucket it
// draws on is above zero, and then charged its whole cost: a bucket may go below zero (debt), so
// a batch bigger than a bucket still passes when the bucket is full, and over time an agent gets
// its rate and no more. A batch not admitted is charged nothing and answered `retryLater` with
// the time until the emptiest bucket it needs is back above zero (schemas/ingest.capnp,
// "Limits"); the agent resends it then, so the limit slows an agent down and never loses its
// data.
//
// A rate of 0 is no limit. The defaults are far above what a real agent sends (one batch a
// second, four at --flush-ms 250); a long spool replay or trailmap-loadgen (a whole simulated
// fleet under one agent id) may meet the batch rate, and is slowed down, nothing lost.
//
// Per-agent state is bounded: past `max_agents` ids, those idle longest (their buckets full
// again) are forgotten first; a forgotten agent starts with full buckets. An agent id is only a
// name the sender chose, so a hostile sender with many ids gets many buckets: what bounds the
// whole ingest path is the server's byte budget (ingest_server.h), not these.
//
// Not thread-safe: the ingest server's applying thread owns it. Value type otherwise.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace trailmap::aggregator {

// The rates one agent id may use. 0 = unlimited.
struct AgentLimits {
  double batches_per_second = 10'000;
  double bytes_per_second = 256.0 * (1 << 20);  // 256 MiB/s
  double values_per_second = 4'000'000;         // histogram deltas + scalars + stack counts
  double definitions_per_second = 2'000'000;    // frame + stack definitions
  double new_series_per_minute = 200'000;       // series new to the catalog
  double burst_seconds = 2;                     // a bucket holds this many seconds of its rate
  size_t max_agents = 100'000;                  // agent ids tracked at once
  // Whether any rate is limited (else nothing need be checked at all).
  bool any() const {
    return batches_per_second > 0 || bytes_per_second > 0 || values_per_second > 0 ||
           definitions_per_second > 0 || new_series_per_minute > 0;
  }
  bool operator==(const AgentLimits&) const = default;
};

// The limits, in AgentLimiter's order; their names appear in acks, logs and counters.
enum class AgentLimit : uint8_t { kBatches, kBytes, kValues, kDefinitions, kNewSeries };
inline constexpr size_t kAgentLimitCount = 5;
// "batches", "bytes", "values", "definitions", "new_series".
const char* AgentLimitName(AgentLimit limit);

// What one batch costs. A bucket it costs nothing is not checked, so a batch may be charged in
// parts: its envelope (batches, bytes) before it is decoded, its content after.
struct BatchCost {
  double batches = 0;
  double bytes = 0;
  double values = 0;
  double definitions = 0;
  double new_series = 0;
};

// A batch not admitted.
struct LimitRefusal {
  AgentLimit limit = AgentLimit::kBatches;
  uint32_t retry_after_ms = 0;
  std::string reason;  // "rate-limited: agent web-1/ab over 50 batches/s; resend after 20 ms"
};

// Batches refused, by limit, of one agent id (or in total).
struct AgentRefusals {
  std::array<uint64_t, kAgentLimitCount> by_limit{};
  uint64_t total() const;
  bool operator==(const AgentRefusals&) const = default;
};

class AgentLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit AgentLimiter(AgentLimits limits = {});

  // nullopt: admitted and charged. Otherwise why not and when to resend; counted.
  std::optional<LimitRefusal> Admit(const std::string& agent, const BatchCost& cost,
                                    Clock::time_point now);

  // Refusals since construction: all agents, and the `n` agents refused most (most first).
  AgentRefusals total() const { return total_; }
  std::vector<std::pair<std::string, AgentRefusals>> TopRefused(size_t n) const;
  size_t tracked() const { return agents_.size(); }
  const AgentLimits& limits() const { return limits_; }

 private:
  struct Agent {
    std::array<double, kAgentLimitCount> tokens{};
    Clock::time_point last;
  };
  double Rate(size_t limit) const;  // per second
  void Forget(Clock::time_point now);

  AgentLimits limits_;
  std::unordered_map<std::string, Agent> agents_;
  // Refusals by agent, kept for the agents refused most (at most kKeptRefused, the least
  // refused dropped first) so `trailmap cluster` can name the offenders.
  std::unordered_map<std::string, AgentRefusals> refused_;
  AgentRefusals total_;
};

}  // namespace trailmap::aggregator
