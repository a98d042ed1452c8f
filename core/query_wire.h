// Query and Answer: the C++ side of schemas/query.capnp, shared by the aggregators (which decode
// queries and encode answers) and the query layer (which does the reverse).
//
// A histogram query asks one shard for partial aggregates: for every time column and group, the
// merged histogram of what that shard holds. DecodeQuery checks the query is answerable (a
// metric name, from < to, a step, a bounded number of columns) and says what to fix otherwise.
// A stack query asks for the shard's merged stacks: every distinct folded stack with its count
// over the range, hosts and predicate (never per-second rows).
// Value types; no shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/batch.h"
#include "core/cluster.h"
#include "core/histogram.h"
#include "core/stack_collapse.h"
#include "core/status.h"

namespace trailmap {

inline constexpr uint64_t kMaxQueryColumns = 1'000'000;

// A replicated query's cluster and this round's selection (core/cluster.h, "Replicas in
// queries"): the shard answers only for the host-seconds
// ReplicaAnswers gives selection.member. Endpoints are not sent.
struct ReplicaScope {
  Cluster cluster;
  ReplicaSelection selection;
};


struct HistogramQuery {
  std::string metric;
  int64_t from = 0;   // unix seconds, inclusive
  int64_t to = 0;     // unix seconds, exclusive
  uint32_t step = 1;  // seconds per column; column c covers [from + c*step, from + (c+1)*step)
  std::string group_by;            // "" = one group, "host", or a field key
  std::vector<std::string> hosts;  // only these hosts; empty = all
  std::string where = "";          // predicate (core/predicate.h); "" = everything
  bool summaries = false;  // answer with CellSummary per cell instead of histograms
  std::optional<ReplicaScope> replicas;  // absent: every host the shard holds

  uint32_t columns() const { return static_cast<uint32_t>((to - from + step - 1) / step); }
};

// Region -> code in one query (docs/region-flame.md): a StackQuery with a region draws the
// stacks of the host-seconds that hold events of `metric` which `where` keeps, each counted once
// per such event. The aggregator finds those host-seconds itself, in the same pass and under the
// same snapshot as the stacks, so no per-second list ever travels.
struct RegionBand {
  std::string metric;  // the latency or size metric whose events select (a heat map's)
  // A predicate on its value (the band: "value >= LOW and value <= HIGH") and on the host,
  // labels and the metric's fields; it must compare the value.
  std::string where;
  // Also answer the baseline (StackAnswer::baseline): the selected hosts' other seconds of
  // [baseline_from, baseline_to), which holds the query's [from, to), each counted once.
  bool baseline = false;
  int64_t baseline_from = 0;
  int64_t baseline_to = 0;
  bool operator==(const RegionBand&) const = default;
};

// Stack samples of a `stacks` metric merged over a time range, hosts and a predicate on host,
// labels and fields (no value comparisons: stacks have no value axis).
struct StackQuery {
  std::string metric = "cpu.stacks";
  int64_t from = 0;                // unix seconds, inclusive
  int64_t to = 0;                  // unix seconds, exclusive
  std::vector<std::string> hosts;  // only these hosts; empty = all
  std::string where;               // predicate (core/predicate.h); "" = everything
  std::string group_by;            // "" = none; "host", a label or a field: a first frame each
  // Set: region -> code. [from, to) are the region's seconds and `where` and `group_by` must be
  // empty; only the 1 s values of the selected host-seconds are read.
  std::optional<RegionBand> region;
  std::optional<ReplicaScope> replicas;  // absent: every host the shard holds
};

// A query's deadline and cost budget (schemas/query.capnp QueryLimits). A client may ask for
// less than an aggregator allows; 0 = no ask. The aggregator answers within the smaller of each
// (Within) and, past one, stops the scan and answers with an error that names the limit and how
// to narrow the query (aggregator/scan/query_budget.h).
struct QueryLimits {
  uint64_t deadline_ms = 0;       // answer within this long of the query's arrival
  uint64_t max_keys = 0;          // stored keys read (every key a scan visits, kept or not)
  uint64_t max_groups = 0;        // groups in the answer
  uint64_t max_cells = 0;         // cells (column x group) in the answer
  uint64_t max_answer_bytes = 0;  // bytes of the encoded answer
  // Each limit the smaller of this one's and `cap`'s, 0 counting as none.
  QueryLimits Within(const QueryLimits& cap) const;
  bool operator==(const QueryLimits&) const = default;
};

// How far a shard has applied hosts (schemas/query.capnp CompletenessQuery): the hosts named
// (any second), or with none named every host held whose newest applied second is before `before`.
struct CompletenessQuery {
  std::vector<std::string> hosts;
  int64_t before = INT64_MAX;
  bool operator==(const CompletenessQuery&) const = default;
};

// A host's newest second applied on one shard.
struct HostThrough {
  std::string host;
  int64_t through = 0;
  bool operator==(const HostThrough&) const = default;
};

struct Query {
  enum class Kind : uint8_t { kHistograms, kMetrics, kStacks, kStatus, kCompleteness };
  uint64_t id = 0;
  Kind kind = Kind::kHistograms;
  HistogramQuery histograms;  // when kind == kHistograms
  StackQuery stacks;          // when kind == kStacks
  CompletenessQuery completeness;  // when kind == kCompleteness
  QueryLimits limits;         // what the client allows; all 0 = the aggregator's own
};

// One shard's merge of a StackQuery: each distinct stack ("main;foo;bar") once with its count.
// A region's selected events on one shard: per host, the events and the host-seconds holding any.
struct RegionHost {
  std::string host;
  uint64_t events = 0;
  uint64_t host_seconds = 0;
  bool operator==(const RegionHost&) const = default;
};

struct StackAnswer {
  FoldedStacks stacks;
  // A region query's: the baseline when it asked for one, and the selection by host (name order).
  std::optional<FoldedStacks> baseline;
  std::vector<RegionHost> region_hosts;
};

struct QueryCell {
  uint32_t column = 0;
  uint32_t group = 0;  // index into HistogramAnswer::groups
  Histogram histogram;
  // The aggregator's pass-through: a cell made of exactly one stored value keeps that value's
  // encoding here, undecoded, and `histogram` stays empty; EncodeAnswer copies it as is. A fleet
  // heat map at 1 s reads one pre-aggregate key per cell, and decoding and re-encoding them was
  // two thirds of the aggregator's time. Never set by DecodeAnswer. Materialize() before reading
  // `histogram` of a cell that may hold one.
  std::string encoded;

  // Decodes `encoded` into `histogram` (merged with what it holds) and clears it. Corruption
  // naming the cell's column if it does not decode.
  Status Materialize();
};

// A cell's count, sum, min and max: a line chart's partial aggregate, merged across shards by
// Add. For a scalar metric in the metric's own unit, exact; for histograms in the base unit.
struct CellSummary {
  uint32_t column = 0;
  uint32_t group = 0;
  uint64_t count = 0;
  double sum = 0;
  double min = 0;
  double max = 0;
  void Add(const CellSummary& other);
};

struct HistogramAnswer {
  MetricKind kind = MetricKind::kLatency;
  std::string unit;
  std::vector<std::string> groups;  // "" when not grouped
  std::vector<QueryCell> cells;     // non-empty cells only
  std::vector<CellSummary> summaries;  // instead of cells, when the query asked for summaries
};

struct MetricInfo {
  std::string name;
  MetricKind kind = MetricKind::kLatency;
  std::string unit;
  std::vector<std::string> fields;  // field keys its series carry, sorted
  std::string description;          // one line, "" = none
};

// Agents a status answer names (ShardStatus::limited_agents).
inline constexpr size_t kMaxLimitedAgents = 16;

// A shard's health (schemas/query.capnp ShardStatus; aggregator/store/store_health.h fills it).
struct ShardStatus {
  std::string background_error;    // RocksDB's background error now, "" = none
  uint64_t background_errors = 0;  // background errors RocksDB reported since start
  uint64_t recoveries = 0;         // times the store recovered from one (by itself or Resume)
  uint64_t rollup_failures = 0;    // minute rollups that failed (each retried after a backoff)
  uint64_t rollup_aged_out = 0;    // pending minutes dropped because their 1 s data aged out
  uint64_t pending_rollups = 0;    // minutes whose rollups are behind the 1 s data
  uint64_t agents = 0;             // agents with a watermark
  uint64_t agents_pruned = 0;      // watermarks of idle agents forgotten since start
  uint64_t hosts = 0;              // hosts it holds data of
  uint64_t disk_bytes = 0;         // bytes of its RocksDB files (SST and WAL)
  int64_t newest_second = 0;       // newest second of data applied since start; 0 = none
  std::string last_error;          // the last write or rollup error since start, "" = none
  uint64_t refused_batches = 0;    // batches of a key for a host or agent id not its own
  uint64_t refused_connections = 0;  // CURVE handshakes of unlisted keys (ZAP)
  uint64_t rate_limited = 0;         // batches answered retryLater: agent over its [limits]
  uint64_t busy = 0;                 // batches answered retryLater: too many unapplied bytes
  struct LimitedAgent {
    std::string agent;
    uint64_t batches = 0;
    std::string limit;  // the one met most
    bool operator==(const LimitedAgent&) const = default;
  };
  std::vector<LimitedAgent> limited_agents;  // the agents limited most, most first (at most 16)
  uint64_t ingest_connections = 0;  // CURVE connections admitted now on the ingest socket
  uint64_t query_connections = 0;   // and on the query socket
  uint64_t max_connections = 0;     // each socket's cap ([limits] max_connections; 0 = none)
  uint64_t refused_at_cap = 0;      // handshakes of listed keys refused at the cap
  bool operator==(const ShardStatus&) const = default;
};

struct Answer {
  uint64_t id = 0;
  std::string shard;     // which aggregator answered (its --name)
  std::string endpoint;  // where the fan-out asked it (set by query/fetch/fanout.h, not sent)
  std::string error;  // non-empty: this shard could not answer, and why
  bool over_budget = false;  // with error: past the query's deadline or a cost limit
  bool key_refused = false;  // with error: the client's key may not query this shard
  Query::Kind kind = Query::Kind::kHistograms;
  HistogramAnswer histograms;
  std::vector<MetricInfo> metrics;
  StackAnswer stacks;  // when kind == kStacks
  ShardStatus status;  // when kind == kStatus
  std::vector<HostThrough> completeness;  // when kind == kCompleteness
};

// The checks DecodeQuery makes of a stack query (also for callers that build one).
Status CheckStackQuery(const StackQuery& query);
// Replaces the answer's histogram cells by their summaries (count, exact sum, min and max, in the
// histogram's unit): how a shard answers a summaries query on a histogram metric.
void SummarizeCells(HistogramAnswer* answer);

std::string EncodeQuery(const Query& query);
Result<Query> DecodeQuery(std::string_view bytes);
// The id of a query message, read before anything is checked, so that an answer refusing it
// still carries its id (a fan-out waits only for its own ids); 0 when not even that reads.
uint64_t QueryIdOf(std::string_view bytes);
std::string EncodeAnswer(const Answer& answer);
// Decodes and checks an answer, including every cell's histogram.
Result<Answer> DecodeAnswer(std::string_view bytes);

}  // namespace trailmap
