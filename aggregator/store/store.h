// Store: one aggregator's RocksDB — per-second histograms, scalars and stacks of the hosts it
// owns, the id catalog, and each agent's sequence watermark — with exactly-once ingest, rollups,
// retention and the fleet pre-aggregates. Queries are answered from it by the scans
// (aggregator/scan/store_query.h).
//
// A Store is the parts below, each in its own file with its own lock and, where it has one, its
// own thread; the Store opens the database, loads what meta holds into each part, starts their
// threads and stops them before the database closes:
//   Database       the RocksDB, its column families (their list and grammar: database.h, keys.h),
//                  the write path with its disk guard and background-error hold, the write and
//                  view locks, properties
//   BatchApplier   the exactly-once apply of agents' batches, watermarks, stack dictionaries,
//                  how far each host is applied (batch_applier.h)
//   RollupDriver   the pending minutes and blocks and the pass that rolls them up (its thread;
//                  rollup_driver.h, rollup.h)
//   BackfillDriver the pre-aggregates' backfill for data held before they were configured (its
//                  thread while one is pending; backfill_driver.h)
//   CacheWarmer    the newest minutes read into the block cache after Open (its thread;
//                  cache_warmer.h)
// and the Store's own maintenance thread: DB::Resume after a background error (with a backoff,
// store_health.h) and the pruning of idle agents' watermarks.
//
// Retention: every data family drops keys older than its own retention as RocksDB compacts
// (retention_filter.h); a family's retention of 0 keeps it forever. Past the 1 s retention a
// query gets the rollup buckets that lie wholly in its columns and nothing for the finer edges.
// In meta, a pending-rollup marker goes once its minute's 1 s data may have aged out (rollup.h),
// and the watermark of an agent not heard from for agent_idle_seconds is deleted
// (batch_applier.h says what happens when it comes back). Catalog entries (ids) stay forever.
//
// Background errors (store_health.h): RocksDB's are logged, counted and reported in Health();
// while one holds, writes fail (IOError, nothing acked) and the maintenance thread calls
// DB::Resume with a backoff until RocksDB takes writes again.
//
// Thread safety: a Store may be used from any number of threads. Writers are serialized by the
// database's write lock; queries run concurrently with them and with each other, each reading a
// consistent RocksDB snapshot.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "aggregator/store/aggregates.h"
#include "aggregator/store/batch_applier.h"
#include "aggregator/store/catalog.h"
#include "aggregator/store/periodic_thread.h"
#include "aggregator/store/store_health.h"
#include "aggregator/store/store_options.h"
#include "core/batch.h"
#include "core/query_wire.h"
#include "core/status.h"

namespace trailmap::aggregator {

class BackfillDriver;
class CacheWarmer;
class Database;
class RollupDriver;

class Store {
 public:
  // Opens (creating if missing) the database in `dir`, loads the catalog, watermarks and pending
  // rollups, and starts the threads. Corruption if the meta column family does not hold
  // together; IOError if RocksDB cannot open.
  static Result<std::unique_ptr<Store>> Open(const std::string& dir,
                                             const StoreOptions& options = {});
  ~Store();  // stops every thread, then closes the database
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Ingest (batch_applier.h has the rules): ApplyBatch is ApplyBatches of one.
  Result<ApplyOutcome> ApplyBatch(const Batch& batch);
  std::vector<Result<ApplyOutcome>> ApplyBatches(const std::vector<const Batch*>& batches);
  Result<ApplyOutcome> SkipRejected(std::string_view agent, uint64_t sequence);
  // The last sequence applied for `agent`; 0 for an agent never seen.
  uint64_t Watermark(std::string_view agent) const;
  // Every agent id with a watermark (IngestServer rebuilds its key bindings from them).
  std::vector<std::string> Agents() const;
  // How far hosts are applied, for a replicated query's choice of replica (core/cluster.h
  // "Replicas by completeness"): a host's newest second that any applied batch held, kept in
  // meta ('T') by the batch's WriteBatch, so it survives restarts. The hosts `query` names that
  // this store holds a second of, or with none named every such host whose newest second is
  // before query.before; in host id order. Any thread.
  std::vector<HostThrough> HostsThrough(const CompletenessQuery& query) const;
  // The cluster file read again (SIGHUP, core/cluster.h ReloadCluster): the owner groups of the
  // pre-aggregates are taken from `cluster` for every batch applied from now on.
  void SetCluster(Cluster cluster);
  // Deletes the watermark of every agent idle for agent_idle_seconds (0: none); returns how many.
  Result<size_t> PruneIdleAgents();

  // Rollups (rollup_driver.h RollUp): what the thread does every rollup_interval_ms.
  Result<size_t> RollUp(bool all = false, size_t* blocks = nullptr);
  // Minutes whose rollups are behind `hist` (Health().pending_rollups).
  size_t PendingRollups() const;
  // 10-minute blocks whose `hist_600s` keys are behind `hist_60s`.
  size_t PendingBlocks() const;
  // The aggregate backfill (backfill_driver.h Backfill): what its thread does while one runs.
  Result<size_t> BackfillAggregates(size_t max_minutes = SIZE_MAX,
                                    std::chrono::milliseconds budget = {});
  // Minutes the backfill has still to write (0 when none runs).
  uint64_t BackfillMinutesLeft() const;
  // Calls DB::Resume if a background error holds and its backoff has passed (the maintenance
  // thread does this every rollup_interval_ms); returns whether the store takes writes now.
  bool ResumeIfDue();

  // Background errors, rollup failures and the rest of aggregator/store/store_health.h.
  StoreHealth Health() const;
  // A RocksDB integer property summed over every column family, e.g.
  // "rocksdb.estimate-pending-compaction-bytes" (for self-metrics); NotFound if RocksDB has no
  // such property.
  Result<uint64_t> IntProperty(const std::string& name) const;
  // RocksDB's properties now; a property RocksDB does not report reads as 0. Any thread.
  RocksDbStats RocksDbProperties() const;
  // Merges that cut a count at kMaxTotalCount (core/counts.h) instead of failing, since Open: in
  // RocksDB's merge operators, in rollups (each 10 s or 60 s value) and in histogram queries
  // (each answered cell).
  uint64_t SaturatedMerges() const;
  // Histogram queries answered from an aggregate (aggregator/store/aggregates.h) since Open.
  uint64_t AggregateQueries() const { return aggregate_queries_.load(std::memory_order_relaxed); }
  void CountAggregateQuery() const { aggregate_queries_.fetch_add(1, std::memory_order_relaxed); }
  // The cache warming after Open (cache_warmer.h): keys read so far, and whether it has ended.
  uint64_t WarmedKeys() const;
  bool CacheWarmed() const;
  // Passes of the store's threads that ended in an exception (caught, logged, counted), since
  // Open: the self-metric trailmap.aggregator.threads.failed.
  uint64_t ThreadFailures() const;

  // The metric catalog, by name.
  std::vector<MetricInfo> Metrics() const;
  // How many of `batch`'s series definitions the catalog does not hold yet (catalog growth, for
  // the per-agent limits). Any thread.
  size_t NewSeriesIn(const Batch& batch) const;
  // Whether the catalog holds metric `name` (the per-key metric quota). Any thread.
  bool HasMetric(std::string_view name) const;
  // One stored scalar, for tools and tests; nullopt when absent.
  std::optional<double> ScalarAt(std::string_view metric, std::string_view host,
                                 std::string_view fields, int64_t second) const;
  // The canonical labels `host` was last written with; nullopt for a host never seen.
  std::optional<std::string> HostLabels(std::string_view host) const;

  // Flushes every memtable to disk / compacts every column family fully (tests, tools, shutdown).
  Status Flush();
  Status Compact();

  // What the scans read (aggregator/scan/store_query.h): the database, the catalog, the
  // pre-aggregates, the spans pending a rollup, and the options the store was opened with.
  const Database& database() const { return *db_; }
  const Catalog& catalog() const { return catalog_; }
  const Aggregates& aggregates() const { return aggregates_; }
  const RollupDriver& rollups() const { return *rollups_; }
  const StoreOptions& options() const { return options_; }

 private:
  Store(const StoreOptions& options, std::unique_ptr<Database> db);
  // Reads meta into the catalog, the aggregates and the parts.
  Status Load();
  // Every part's first steps after Load, then the threads.
  Status Start();

  const StoreOptions options_;
  std::unique_ptr<Database> db_;
  Catalog catalog_;
  Aggregates aggregates_;
  std::unique_ptr<RollupDriver> rollups_;
  std::unique_ptr<BackfillDriver> backfill_;
  std::unique_ptr<BatchApplier> applier_;
  std::unique_ptr<CacheWarmer> warmer_;
  mutable std::atomic<uint64_t> aggregate_queries_{0};
  // DB::Resume after a background error, and the idle agents' pruning once a minute.
  std::chrono::steady_clock::time_point next_prune_{};
  PeriodicThread maintenance_;
};

}  // namespace trailmap::aggregator
