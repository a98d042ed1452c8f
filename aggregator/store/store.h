// Store: one aggregator's RocksDB — per-second histograms and scalars of the hosts it owns, the id
// catalog, and each agent's sequence watermark — with exactly-once ingest and partial-aggregate
// queries.
//
// Column families (key and value grammar in aggregator/store/keys.h; the list is kFamilies in store.cc):
//   hist      metric_id | second | host_id | series_id -> histogram, merged by "trailmap.histogram"
//   hist_10s  the same key with second = its 10 s bucket's start: the merge of the bucket's `hist`
//   hist_60s  the same over 60 s buckets
//   hist_600s the same over 600 s buckets: the merge of the block's ten `hist_60s` keys
//   scalar    metric_id | second | host_id | series_id -> double (last write wins)
//   meta      id maps both ways (metrics with kind and unit and description, hosts with labels,
//             series, stacks), agent -> watermark (the last sequence applied), minutes pending a
//             rollup
//   stacks    metric_id | second | host_id | series_id -> (global stack id, count) list,
//             merged by "trailmap.stacks" (aggregator/store/stack_merge_operator.h)
//   stacks_60s  the same per minute (second = the minute's start), merged at ingest from the
//             same operands; a stack query reads it for the whole minutes of its range
//
// Rollups (aggregator/store/rollup.h): ApplyBatches writes `hist` and marks each minute it touches as
// pending, in the same WriteBatch; RollUp (a background thread every rollup_interval_ms, or the
// caller) reads pending minutes back from `hist` and writes their 10 s and 60 s buckets, marking
// each minute's 10-minute block pending in the same write; then it reads pending blocks back from
// `hist_60s` and writes their 600 s buckets. A query reads the coarsest family that fits its
// columns (aggregator/scan/histogram_query.h) except in pending minutes, which it reads from `hist`,
// and pending blocks, which it reads from the finer families, so answers are exact whether or not
// the rollups have caught up. Seconds older than the 1 s retention (less an hour) are merged
// straight into the rollups at ingest, since their seconds will not be kept to roll up (and into
// `hist_600s` alone once older than the 60 s retention less an hour). A database made before the
// rollups (or `hist_600s`) existed has every minute (block) marked pending when Open first sees
// it.
//
// Retention: every data family (hist, hist_10s, hist_60s, hist_600s, scalar, stacks, stacks_60s)
// drops keys older than its own retention as RocksDB compacts (aggregator/store/retention_filter.h); a
// family's retention of 0 keeps it forever. Past the 1 s retention a query gets the rollup
// buckets that lie wholly in its columns and nothing for the finer edges, since those seconds
// are gone. In meta, a pending-rollup marker goes once its minute's 1 s data may have aged out
// (rollup.h), and the watermark of an agent not heard from for agent_idle_seconds is deleted by
// the maintenance thread (PruneIdleAgents). Catalog entries (ids) stay forever.
//
// An agent that comes back after its watermark was pruned is a new agent to the store (watermark
// 0): its next batch is answered outOfOrder, expected 1, and its shipper (ingest/shipper.h) takes
// a new incarnation and renumbers every batch it still holds from 1. Nothing it holds is lost,
// and nothing acknowledged is sent again. Only a batch that was applied but whose ack never
// reached the agent before it went silent for agent_idle_seconds would count twice, which is
// why the default idle time (30 days) is far longer than any spool holds batches.
//
// Background errors (aggregator/store/store_health.h): RocksDB's are logged, counted and reported in
// Health(); while one holds, writes fail (IOError, nothing acked) and the maintenance thread
// calls DB::Resume with a backoff until RocksDB takes writes again.
//
// Stacks arrive interned per agent (schemas/ingest.capnp); the store keeps each agent's
// definitions in memory (aggregator/store/stack_dictionary.h) and gives every distinct folded stack a
// global id in the catalog, written in the same WriteBatch as the counts that use it. A batch to
// apply that uses a stack the store has no definition of is not applied: kNeedDictionary.
//
// Exactly-once: ApplyBatch applies a batch only when its sequence is the agent's watermark + 1,
// and writes every histogram merge, scalar, new catalog entry and the new watermark in ONE
// WriteBatch (WAL on), so after a crash either all of it is there, watermark included, or none
// of it is and the agent's resend is applied. A new agent id starts at watermark 0.
//
// Thread safety: a Store may be used from any number of threads. Writers (ApplyBatch,
// SkipRejected, and each write of the rollup pass and of PruneIdleAgents) are serialized by a
// lock inside (write_mu_); queries (QueryHistograms, Metrics) run concurrently with them and with
// each other, reading a consistent RocksDB snapshot. RollUp runs on the Store's own maintenance
// thread (stopped by the destructor) or the caller's; it computes outside the lock and takes it
// only to write (rollup.h says why that keeps every late write).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "aggregator/store/aggregates.h"
#include "aggregator/store/aggregates_backfill.h"
#include "aggregator/store/catalog.h"
#include "aggregator/store/keys.h"
#include "aggregator/store/rollup.h"
#include "aggregator/store/stack_dictionary.h"
#include "aggregator/store/store_health.h"
#include "core/batch.h"
#include "core/query_wire.h"
#include "core/status.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
class WriteBatch;
class Snapshot;
class Status;
struct WriteOptions;
}  // namespace rocksdb

namespace trailmap::aggregator {

struct MergeCounters;  // aggregator/store/encoding_merge_operator.h
class QueryBudget;     // aggregator/scan/query_budget.h

struct StoreOptions {
  // fsync the WAL before ApplyBatch returns. An ack is a promise: with false, a power loss can
  // lose acknowledged batches (a process crash cannot).
  bool sync = true;
  // Merge operands of one key kept in a memtable before RocksDB merges them on write (bounds read
  // cost for hot keys; 0 would leave it unbounded).
  size_t max_successive_merges = 16;
  // Shared block cache over all column families, MiB. A heat map of 100 hosts x 1 h at 1 s reads
  // 720,000 keys (~100 bytes each): with 64 MiB each repeat read and decompressed its blocks
  // again (470 ms of aggregator CPU, against 370 ms with 256 MiB, on bench/cluster-bench data).
  // A region -> flame query of 1,000 hosts x 10 min reads ~320 MB of blocks (histograms and
  // stacks, as the cache holds them): with 256 MiB every repeat decompressed them all again
  // (1.6-2.1 s of aggregator CPU), with 1,024 MiB 0.9-1.0 s (docs/benchmarks-log.md, "The web page and trailmap-query").
  // An LRU bound, not an allocation: an aggregator that is not read from stays small.
  size_t block_cache_mb = 1024;
  // Memtable size of the `hist` column family, MiB (the others use a quarter of it).
  size_t write_buffer_mb = 32;
  // Free space, MiB, that the data directory's file system must keep: below it a write is
  // refused (not written, so not acked; the agents resend) until space returns. RocksDB must
  // never meet ENOSPC itself: Debian's RocksDB 7.8 is built with assertions, and the first WAL
  // append that fails with ENOSPC aborts the process (WritableFileWriter,
  // `sync_without_flush_called_`). The reserve leaves room for flushes and compactions of what is
  // already written. 0 = no check.
  size_t min_free_mb = 256;
  // After Open, a background thread (niced) reads the newest this many seconds of each metric's
  // 1 s histograms and stacks into the block cache, so the first query after a start does not
  // read and decompress them itself: a region -> flame query of 1,000 hosts x 10 min took
  // 0.89-1.27 s first against ~0.5 s warm (docs/benchmarks-log.md, "The web page and trailmap-query"). It stops at half the
  // block cache, and when the store closes. 0 = off.
  size_t warm_cache_seconds = 600;
  // Flushes plus compactions at once: sized for a 2-core box.
  int background_jobs = 2;
  // Threads one histogram query scans with (time slices of a long range in parallel); 1 = the
  // caller's thread only.
  int query_threads = 2;
  // Bounds on the agents' stack dictionaries held in memory.
  StackDictionaryOptions dictionaries;
  // Seconds each histogram family keeps its data, in kHistogramResolutions order (hist, hist_10s,
  // hist_60s, hist_600s); 0 = forever. A key goes when all of its bucket is older than now -
  // retention. A Store keeps everything unless told; trailmap-aggregator's config starts from
  // kDefaultRetention (aggregator_config.h).
  std::array<int64_t, kHistogramResolutionCount> retention_seconds = {0, 0, 0, 0};
  // Seconds `scalar`, `stacks` (per second) and `stacks_60s` (per minute) keep their data; 0 =
  // forever. trailmap-aggregator's defaults are in aggregator_config.h.
  int64_t scalar_retention_seconds = 0;
  int64_t stacks_retention_seconds = 0;
  int64_t stacks_60s_retention_seconds = 0;
  // The watermark of an agent that has sent nothing for this long is deleted (see the header:
  // what happens if it comes back); 0 = never.
  int64_t agent_idle_seconds = 0;
  // Unix seconds now, for retention; empty = the system clock. Tests hand down a fixed clock.
  std::function<int64_t()> clock;
  // A background thread rolls up pending minutes this often; 0 = no thread (the caller runs
  // RollUp, as tests do).
  int rollup_interval_ms = 1000;
  // A minute is rolled up once nothing has been written to it for this long (a minute that is
  // still being written would be rolled up again and again).
  int rollup_quiet_ms = 2000;
  // Tests: called by the rollup pass after it has computed a minute, before its last write.
  std::function<void(uint32_t metric, int64_t minute)> before_rollup_write;
  // Tests: the same for a 10-minute block (its start second).
  std::function<void(uint32_t metric, int64_t block)> before_block_write;
  // Tests: called by the aggregate backfill after it has computed a minute, before its write.
  std::function<void(uint32_t metric, int64_t minute)> before_backfill_write;
  // Pre-aggregates written at ingest (aggregator/store/aggregates.h): the fleet always, these fields
  // too; the cluster file gives each host's owner group.
  AggregateOptions aggregates;
};

// Which histogram families a query may read.
enum class QueryPlan {
  kCoarsest,    // the coarsest resolution that gives the asked columns exactly (the default)
  kFinestOnly,  // `hist` alone, every stored second (tests and tools compare the two)
  kHosts,       // as kCoarsest, but from the hosts' keys even where an aggregate could answer
  kUpToMinutes,  // the coarsest up to `hist_60s`, not `hist_600s` (bench/storage_bench compares)
};

// What ApplyBatch did.
struct ApplyOutcome {
  Ack::Status status = Ack::Status::kApplied;  // kApplied, kDuplicate, kOutOfOrder,
                                               // kNeedDictionary (kRejected: SkipRejected)
  uint64_t watermark = 0;                      // the agent's watermark after the call
  uint64_t expected = 0;                       // the sequence applied next: watermark + 1
  size_t histograms = 0;                       // histogram deltas written (when applied)
  size_t scalars = 0;                          // scalar values written (when applied)
  size_t new_ids = 0;                          // catalog entries created (when applied)
  size_t stack_values = 0;                     // (second, series) stack lists written
  std::string reason;                          // kNeedDictionary: which id is unknown
};

// What RocksDB says of its own state (read for the aggregator's self-metrics). A number kept per
// column family is the sum over all of them.
struct RocksDbStats {
  uint64_t pending_compaction_bytes = 0;  // rocksdb.estimate-pending-compaction-bytes
  uint64_t running_compactions = 0;       // rocksdb.num-running-compactions
  uint64_t running_flushes = 0;           // rocksdb.num-running-flushes
  uint64_t memtable_bytes = 0;            // rocksdb.cur-size-all-mem-tables
  uint64_t live_sst_bytes = 0;            // rocksdb.live-sst-files-size
  uint64_t block_cache_bytes = 0;         // rocksdb.block-cache-usage (the shared cache)
  uint64_t table_reader_bytes = 0;        // rocksdb.estimate-table-readers-mem (index, filters)
  uint64_t background_errors = 0;         // rocksdb.background-errors: since the DB was opened
};

class Store {
 public:
  // Opens (creating if missing) the database in `dir` and loads the catalog and watermarks.
  // Corruption if the meta column family does not hold together; IOError if RocksDB cannot open.
  static Result<std::unique_ptr<Store>> Open(const std::string& dir,
                                             const StoreOptions& options = {});
  ~Store();  // closes the database (flushes nothing beyond what the WAL already holds)
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Applies `batch` exactly once (see the header). InvalidArgument for a batch that refers past
  // its series list or has no agent; IOError when the write fails (nothing was written, the
  // catalog is as before, and a resend will be applied).
  Result<ApplyOutcome> ApplyBatch(const Batch& batch);
  // Group commit: applies several batches with ONE write (one WAL fsync when `sync`), each judged
  // against the watermarks as the batches before it in the group left them (so an agent's
  // sequences 5, 6, 7 in one group all apply). Results are in the order given. If the write
  // fails, every batch that would have been applied gets the IOError and nothing is changed.
  std::vector<Result<ApplyOutcome>> ApplyBatches(const std::vector<const Batch*>& batches);
  // Judges a batch of `agent` (not empty) with `sequence` (>= 1) that cannot be read, by the
  // rules of schemas/ingest.capnp ("Rejection"): kRejected when it is the one expected next (the
  // watermark moves to it, written alone so the agent's stream continues) or at or below the
  // watermark (nothing moves); kOutOfOrder with `expected` when it is past a gap (nothing moves:
  // it is judged in its turn). IOError if the watermark could not be written (nothing moved).
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

  // A scalar metric is answered by RunScalarHistogramQuery (aggregator/scan/scalar_query.h): each
  // stored host-second value one sample, in fixed point.
  // Partial aggregates of one metric over [query.from, query.to): one merged histogram per
  // (column, group) that holds data, cells sorted by column then group, groups sorted by name.
  // group_by "" gives the one group ""; "host" a group per host; any other key a group per value
  // of that field, looked up in the series fields and then the host labels, and "(none)" for data
  // without it. `hosts` (if not empty) keeps only those hosts. An unknown metric is an empty
  // answer, not an error; Corruption if a stored histogram does not decode.
  // The answer is the same under either plan (the rollups hold exact merges).
  // `budget` (null: no limits) is charged inside the scans (aggregator/scan/query_budget.h): past
  // one of its limits, its deadline or a stop, the query stops with the budget's error. With
  // `pass_through`, a cell of one stored value keeps its encoding (QueryCell::encoded) for an
  // answer that is only sent on (the query server); without, every cell is decoded.
  Result<HistogramAnswer> QueryHistograms(const HistogramQuery& query,
                                          QueryPlan plan = QueryPlan::kCoarsest,
                                          QueryBudget* budget = nullptr,
                                          bool pass_through = false) const;
  // Stack samples of one metric merged over [query.from, query.to), query.hosts and
  // query.where: every distinct stack with its count, sorted by stack text. Whole minutes of the
  // range are read from `stacks_60s`. An unknown metric is an empty answer; InvalidArgument for a
  // predicate that compares values; Corruption if a stored value does not decode.
  Result<StackAnswer> QueryStacks(const StackQuery& query, QueryBudget* budget = nullptr) const;
  // Backfills aggregates configured on a store that held data before them
  // (aggregator/store/aggregates_backfill.h): up to `max_minutes` minutes, or until `budget` has passed
  // (0: no limit) or the store stops. When the last minute is written the aggregates are marked
  // complete and read from then on. Returns how many minutes it wrote; an error (a histogram that
  // does not decode, a write error) stops this call, and the next call retries the minute. The
  // maintenance thread calls it after each rollup pass; safe alongside ingest and queries.
  Result<size_t> BackfillAggregates(size_t max_minutes = SIZE_MAX,
                                    std::chrono::milliseconds budget = {});
  // Minutes the backfill has still to write (0 when none runs).
  uint64_t BackfillMinutesLeft() const { return backfill_left_.load(std::memory_order_relaxed); }
  // Histogram queries answered from an aggregate (aggregator/store/aggregates.h) since Open.
  uint64_t AggregateQueries() const { return aggregate_queries_.load(std::memory_order_relaxed); }
  // Rolls up pending minutes (see the header): those quiet for rollup_quiet_ms and not waiting
  // out a failure's backoff, or all of them with `all` (then until none is left but those that
  // failed in this call). Then the same for pending 10-minute blocks, of which, without `all`,
  // only those whose end has passed and none of whose minutes is pending (rollup.h). Returns how
  // many minutes it wrote, and sets *blocks (if given) to how many blocks. Safe alongside ingest
  // and queries; a span written to meanwhile stays pending and is done again. A span that fails is
  // skipped, logged, counted (Health) and retried after a backoff; it never stops the pass.
  Result<size_t> RollUp(bool all = false, size_t* blocks = nullptr);
  // Minutes whose rollups are behind `hist` (Health().pending_rollups).
  size_t PendingRollups() const { return pending_.size(); }
  // 10-minute blocks whose `hist_600s` keys are behind `hist_60s`.
  size_t PendingBlocks() const { return pending_blocks_.size(); }
  // Deletes the watermark of every agent idle for agent_idle_seconds (0: none); returns how many.
  Result<size_t> PruneIdleAgents();
  // Calls DB::Resume if a background error holds and its backoff has passed (the maintenance
  // thread does this every rollup_interval_ms); returns whether the store takes writes now.
  bool ResumeIfDue();

  // Background errors, rollup failures and the rest of aggregator/store/store_health.h.
  StoreHealth Health() const;
  // A RocksDB integer property summed over every column family, e.g.
  // "rocksdb.estimate-pending-compaction-bytes" (for self-metrics); NotFound if RocksDB has no
  // such property.
  Result<uint64_t> IntProperty(const std::string& name) const;
  // Merges that cut a count at kMaxTotalCount (core/counts.h) instead of failing, since Open: in
  // RocksDB's merge operators, in rollups (each 10 s or 60 s value) and in histogram queries
  // (each answered cell).
  uint64_t SaturatedMerges() const;
  // The cache warming after Open (StoreOptions::warm_cache_seconds): keys read so far, and
  // whether it has ended (done, stopped at its bound, or off).
  uint64_t WarmedKeys() const { return warmed_keys_.load(std::memory_order_relaxed); }
  bool CacheWarmed() const { return cache_warmed_.load(std::memory_order_acquire); }

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

  // RocksDB's properties now; a property RocksDB does not report reads as 0. Any thread.
  RocksDbStats RocksDbProperties() const;
  // The canonical labels `host` was last written with; nullopt for a host never seen.
  std::optional<std::string> HostLabels(std::string_view host) const;

  // Flushes every memtable to disk / compacts every column family fully (tests, tools, shutdown).
  Status Flush();
  Status Compact();

 private:
  struct Handles;
  Store(const StoreOptions& options, std::unique_ptr<Handles> handles,
        std::shared_ptr<BackgroundErrors> background_errors);
  Status Load();
  // Marks every minute of `hist` pending unless the meta marker says that was done.
  Status MarkOldMinutesIfNeeded();
  // Marks the aggregates of a store without data complete; logs those that are not.
  Status MarkAggregates();
  // Resumes the aggregate backfill from meta, or begins it for the incomplete aggregates.
  Status StartBackfill();
  // The next minute to backfill from the state's cursor on; nullopt when none is left.
  Result<std::optional<std::pair<uint32_t, int64_t>>> NextBackfillMinute() const;
  // Backfills one minute: true when written, false when a write to it came meanwhile.
  Result<bool> BackfillMinute(uint32_t metric, int64_t minute);
  // Marks the backfilled aggregates complete and ends the backfill.
  Status FinishBackfill();
  // Keeps `error` as the last one (Health).
  void NoteError(const std::string& error);
  // The name of a metric id, an aggregate's too ("disk.latency (aggregate)"), for the log.
  std::string MetricName(uint32_t metric) const;
  // Marks every 10-minute block of `hist_60s` pending unless the meta marker says that was done.
  Status MarkOldBlocksIfNeeded();
  // Both: every `span` of kHistogramResolutions[source] into `pending` and meta (pending_key)
  // unless meta holds `marker_key`, which it then writes; `what` names them in the log.
  Status MarkUnrolledIfNeeded(const std::string& marker_key, size_t source, uint32_t span,
                              PendingMinutes* pending,
                              std::string (*pending_key)(uint32_t, int64_t),
                              const std::string& what);
  void RollupLoop();
  // Reads the newest warm_cache_seconds of each metric of `hist` and `stacks` into the block
  // cache (StoreOptions::warm_cache_seconds); on warm_thread_.
  void WarmCache();
  // db->Write unless a background error holds: then RocksDB must not be written until Resume (a
  // write on the WAL that failed aborts the process in RocksDB builds with assertions on).
  rocksdb::Status Write(const rocksdb::WriteOptions& options, rocksdb::WriteBatch* wb);
  // One stage of RollUp: the pending minutes, or (blocks) the pending 10-minute blocks.
  Result<size_t> RollUpStage(bool blocks, bool all);
  // Rolls up one minute (or block) read at `snapshot`: true when written and clean, false when a
  // write to it came meanwhile (it stays pending); an error leaves it pending.
  Result<bool> RollUpSpan(const PendingMinutes::Minute& m, const rocksdb::Snapshot* snapshot,
                          bool block);
  // Removes the pending marker of a minute (block) whose 1 s (60 s) data may have aged out
  // (rollup.h); a minute's block is marked pending.
  Status DropAged(const PendingMinutes::Minute& m, bool block);
  // Marks the block of `second` pending, in memory and in `wb` (write_mu_ held).
  void MarkBlockLocked(uint32_t metric, int64_t second, rocksdb::WriteBatch* wb);
  // Seconds before this are merged into `hist_600s` at ingest: the 60 s retention (less an hour)
  // will not keep them to be rolled up from.
  int64_t BlockDirectBefore() const;
  // Merges a late second's histogram into its `hist_600s` key (write_mu_ held).
  void AppendLateBlockLocked(const DataKey& second, std::string_view encoded,
                             rocksdb::WriteBatch* wb);
  uint64_t WatermarkLocked(std::string_view agent) const;
  // Adds one batch's catalog entries, data and watermark to `wb` (write_mu_ held).
  void AppendBatchLocked(const Batch& batch, const std::string& labels, int64_t direct_before,
                         rocksdb::WriteBatch* wb, ApplyOutcome* out,
                         std::vector<std::pair<uint32_t, std::string>>* label_changes);
  // Adds one second's stack counts (global ids resolved, new ones in the catalog and `wb`).
  void AppendStacksLocked(const Batch& batch, const SecondDelta& second, uint32_t host,
                          const std::vector<uint32_t>& metric_of,
                          const std::vector<uint32_t>& series_of, rocksdb::WriteBatch* wb,
                          ApplyOutcome* out);
  // Adds a metric's description to `wb` when it differs from the one held (write_mu_ held); the
  // catalog takes it once the write has succeeded.
  void AppendDescriptionLocked(uint32_t metric, const std::string& description,
                               rocksdb::WriteBatch* wb);

  // Whether the data directory's file system has options_.min_free_mb free; logs once when it
  // falls below and once when it returns. Any thread.
  Status CheckFreeSpace();

  const StoreOptions options_;
  std::string dir_;              // the data directory (set by Open)
  std::atomic<bool> disk_low_{false};
  std::shared_ptr<MergeCounters> merges_;  // shared with the merge operators
  std::unique_ptr<Handles> db_;  // the DB and its column families
  Catalog catalog_;
  Aggregates aggregates_;
  mutable std::atomic<uint64_t> aggregate_queries_{0};
  mutable std::mutex write_mu_;  // serializes writers; guards watermarks_ and dictionaries_
  std::unordered_map<std::string, uint64_t> watermarks_;
  // Unix seconds each agent with a watermark last sent a batch (for PruneIdleAgents).
  std::unordered_map<std::string, int64_t> last_seen_;
  StackDictionaries dictionaries_;
  // Descriptions written by the WriteBatch being built, for the catalog after it succeeds.
  std::vector<std::pair<uint32_t, std::string>> pending_descriptions_;
  // The newest seconds of hosts the WriteBatch being built moves (write_mu_), for through_ after
  // it succeeds.
  std::unordered_map<uint32_t, int64_t> pending_through_;
  mutable std::mutex through_mu_;
  // Host id -> newest second applied; INT64_MIN = none (HostsThrough).
  std::vector<int64_t> through_;
  PendingMinutes pending_;
  PendingMinutes pending_blocks_{kRollupBlock};
  // The aggregate backfill (aggregates_backfill.h): its state (backfill_mu_), the minute being
  // done (every ingest write to it bumps its generation while `backfilling_`), minutes left.
  std::mutex backfill_mu_;
  std::optional<BackfillState> backfill_;
  std::atomic<bool> backfilling_{false};
  PendingMinutes backfill_minutes_;
  std::atomic<uint64_t> backfill_left_{0};
  // Held while a query takes its snapshot and pending minutes, and while RollUp writes a minute
  // and clears it: a query sees a minute clean only with its rollups in its snapshot.
  mutable std::mutex view_mu_;
  std::mutex rollup_mu_;  // one RollUp at a time
  std::shared_ptr<BackgroundErrors> background_errors_;
  std::atomic<uint64_t> rollup_failures_{0}, rollup_aged_out_{0}, agents_pruned_{0};
  std::atomic<int64_t> newest_second_{0};  // the newest second applied since Open
  mutable std::mutex error_mu_;
  std::string last_error_;  // the last write or rollup error (Health)
  std::chrono::steady_clock::time_point next_prune_{};
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread rollup_thread_;
  std::atomic<bool> stop_warming_{false};
  std::atomic<uint64_t> warmed_keys_{0};
  std::atomic<bool> cache_warmed_{false};
  std::thread warm_thread_;  // WarmCache
};

}  // namespace trailmap::aggregator
