// AggregatorSelfMetrics: the aggregator measures itself. Once a second its own thread reads the
// ingest server's counters, the query server's counts and each query's latency
// (aggregator/server/query_latencies.h), RocksDB's properties, the pending rollups and this process's
// memory, descriptors and CPU (core/self_metrics.h), and stores them as metrics of its own host
// through the store's exactly-once path, like any agent's data: one Batch a second, applied with
// Store::ApplyBatch under the agent id "<host>/aggregator", its sequences continuing from the
// watermark the store holds for that id, so a restart neither collides with nor repeats what
// the previous run wrote.
//
// The metrics (trailmap.aggregator.*, each with the field shard=<the aggregator's name>, so
// several aggregators on one host stay apart; the list with units is in docs/ and in
// aggregator/server/self_metrics.cc):
//   ingest.{batches,duplicate,out_of_order,rejected,failed,need_dictionary,refused_by_key,
//   rate_limited,busy},
//   ingest.bytes, ingest.histograms, ingest.stack_values           counters: what agents sent, per
//   second query.answered, query.errors, query.over_budget                      counters
//   query.latency{kind} a latency histogram, one event per query
//   rocksdb.{pending_compaction_bytes,running_compactions,running_flushes,memtable_bytes,
//   live_sst_bytes,block_cache_bytes,table_reader_bytes}   gauges; rocksdb.background_errors
//   rollups.pending, rollups.pending_blocks           gauges: minutes, 10-minute blocks behind
//   aggregates.backfill_pending                       gauge: minutes of pre-aggregates to backfill
//   connections{socket=ingest|query}                  gauge: CURVE connections admitted now
//   connections.refused{reason=unlisted|cap}          counter: handshakes refused by ZAP
//   process.rss, process.fds, process.cpu{mode}       the process
// Counters store their gain since the previous second; the self-metrics' own batches are not
// counted in ingest.*. Scalars go into the second just ended; query latencies into the second
// each answer was ready in.
//
// Host labels: the batch carries the labels the store holds for the host (an agent on the same
// host sets them), so the aggregator never rewrites them.
//
// A failed write (disk full) keeps the unapplied seconds and sends them with the next second's
// batch; beyond `max_unapplied_seconds` the oldest are dropped (counted in `dropped_seconds` and
// logged once per episode).
//
// Thread safety: Start/Stop from the owning thread; Publish is for tests (not alongside the
// thread). The store, servers and recorder must outlive this.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "aggregator/server/ingest_server.h"
#include "aggregator/server/query_latencies.h"
#include "aggregator/server/query_server.h"
#include "aggregator/store/store.h"
#include "aggregator/server/zap_handler.h"
#include "core/self_metrics.h"

namespace trailmap::aggregator {

struct AggregatorSelfMetricsOptions {
  // The host the metrics belong to (trailmap-aggregator --host; default this machine's name).
  std::string host;
  // The aggregator's name: field shard=NAME on every series ("" or not a valid field value:
  // no field).
  std::string shard;
  // Seconds kept for the next batch while writes fail; older ones are dropped.
  size_t max_unapplied_seconds = 60;
  // The thread samples this long after each second begins.
  std::chrono::milliseconds offset{100};
  // Unix seconds now; empty = the system clock.
  std::function<int64_t()> clock;
};

// The ZAP handler's connection counts (CURVE only).
struct ConnectionCounts {
  uint64_t ingest = 0, query = 0;  // admitted now
  uint64_t refused_unlisted = 0;   // handshakes of keys not listed (totals since start)
  uint64_t refused_at_cap = 0;     // of listed keys, past [limits] max_connections
  uint64_t failed_handshakes = 0;  // closed before the handshake completed (ZapCounters)
  uint64_t reloads_refused = 0;    // clients files refused on SIGHUP (ZapHandler::ReloadKeysFrom)
};

// What is read each second; absent parts are not published.
struct AggregatorCounters {
  std::optional<IngestCounters> ingest;
  std::optional<uint64_t> queries_answered, query_errors;
  std::optional<uint64_t> queries_over_budget;  // of the errors: past a deadline or cost limit
  std::optional<RocksDbStats> rocksdb;
  size_t pending_rollups = 0;
  size_t pending_blocks = 0;      // Store::PendingBlocks
  uint64_t backfill_pending = 0;  // Store::BackfillMinutesLeft
  uint64_t saturated_merges = 0;  // Store::SaturatedMerges
  // Exceptions caught at a thread's boundary: the store's, the servers', ZAP's, the self-metrics'.
  uint64_t thread_failures = 0;
  std::optional<StoreHealth> health;
  std::optional<ProcessStats> process;
  std::optional<ConnectionCounts> connections;
};

// Every trailmap.aggregator.* scalar reading of `counters`, with `fields` on each (pure).
SelfReadings AggregatorReadings(const AggregatorCounters& counters, const std::string& fields);

// The parts read; nullptr = not running (tests). Not owned.
struct AggregatorParts {
  Store* store = nullptr;  // required
  const IngestServer* ingest = nullptr;
  const QueryServer* query = nullptr;
  QueryLatencies* latencies = nullptr;
  const ZapHandler* zap = nullptr;  // CURVE's connection counts
};

// Every part's counters now (what AggregatorSelfMetrics publishes each second).
AggregatorCounters ReadAggregatorCounters(const AggregatorParts& parts);

// The exposition text the aggregator's --metrics serves (core/metrics_http.h): AggregatorReadings
// of the parts now and, from `parts.latencies`, trailmap.aggregator.query.latency{kind} since the
// start in classic buckets (core/prometheus_text.h), every series with the field shard=`shard`.
// Thread-safe as the parts' counters are (any thread).
std::string AggregatorPrometheusText(const AggregatorParts& parts, const std::string& shard);

class AggregatorSelfMetrics {
 public:
  AggregatorSelfMetrics(AggregatorParts parts, AggregatorSelfMetricsOptions options);
  ~AggregatorSelfMetrics();  // Stop()
  AggregatorSelfMetrics(const AggregatorSelfMetrics&) = delete;
  AggregatorSelfMetrics& operator=(const AggregatorSelfMetrics&) = delete;

  void Start();
  void Stop();

  // Reads everything now and applies one batch: the scalars as second `second`, the query
  // latencies of every second before `second + 1` (and whatever earlier writes left unapplied).
  Result<ApplyOutcome> Publish(int64_t second);
  // The same with `counters` instead of reading them.
  Result<ApplyOutcome> Publish(int64_t second, const AggregatorCounters& counters);

  const std::string& agent_id() const { return agent_id_; }
  uint64_t dropped_seconds() const { return dropped_seconds_; }

 private:
  // The batch being built: seconds not yet applied, with their series table.
  struct Pending {
    std::vector<SeriesDef> series;
    std::unordered_map<std::string, uint32_t> index;  // metric '\0' fields -> series
    std::map<int64_t, SecondDelta> seconds;
    uint32_t SeriesOf(const SeriesDef& def);
  };
  void Run();

  const AggregatorParts parts_;
  const AggregatorSelfMetricsOptions options_;
  const std::string agent_id_;
  const std::string fields_;  // "shard=NAME" or ""
  CounterDeltas deltas_;
  Pending pending_;
  uint64_t next_sequence_ = 1;
  uint64_t dropped_seconds_ = 0;
  bool failing_ = false;  // the last write failed (logged once per episode)
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by stop_mu_
  std::atomic<uint64_t> thread_failures_{0};  // Run's, added to what it publishes
  std::thread thread_;
};

}  // namespace trailmap::aggregator
