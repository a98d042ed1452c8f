// Store: one aggregator's RocksDB — per-second histograms and scalars of the hosts it owns, the id
// catalog, and each agent's sequence watermark — with exactly-once ingest and partial-aggregate
// queries.
//
// Column families (key and value grammar in aggregator/keys.h; the list is kFamilies in store.cc):
//   hist      metric_id | second | host_id | series_id -> histogram, merged by "trailmap.histogram"
//   hist_10s  the same key with second = its 10 s bucket's start: the merge of the bucket's `hist`
//   hist_60s  the same over 60 s buckets
//   scalar    metric_id | second | host_id | series_id -> double (last write wins)
//   meta      id maps both ways (metrics with kind and unit and description, hosts with labels,
//             series, stacks), agent -> watermark (the last sequence applied), minutes pending a
//             rollup
//   stacks    metric_id | second | host_id | series_id -> (global stack id, count) list,
//             merged by "trailmap.stacks" (aggregator/stack_merge_operator.h)
//   stacks_60s  the same per minute (second = the minute's start), merged at ingest from the
//             same operands; a stack query reads it for the whole minutes of its range
//
// Rollups (aggregator/rollup.h): ApplyBatches writes `hist` and marks each minute it touches as
// pending, in the same WriteBatch; RollUp (a background thread every rollup_interval_ms, or the
// caller) reads pending minutes back from `hist` and writes their 10 s and 60 s buckets. A query
// reads the coarsest family that fits its columns (aggregator/histogram_query.h) except in pending
// minutes, which it reads from `hist`, so answers are exact whether or not the rollups have caught
// up. Seconds older than the 1 s retention (less an hour) are merged straight into the rollups at
// ingest, since their seconds will not be kept to roll up. A database made before the rollups
// existed has every minute marked pending when Open first sees it.
//
// Retention: each histogram family drops keys older than its retention as RocksDB compacts
// (aggregator/retention_filter.h); a family's retention of 0 keeps it forever. Past the 1 s
// retention a query gets the rollup buckets that lie wholly in its columns and nothing for the
// finer edges, since those seconds are gone.
//
// Stacks arrive interned per agent (schemas/ingest.capnp); the store keeps each agent's
// definitions in memory (aggregator/stack_dictionary.h) and gives every distinct folded stack a
// global id in the catalog, written in the same WriteBatch as the counts that use it. A batch to
// apply that uses a stack the store has no definition of is not applied: kNeedDictionary.
//
// Exactly-once: ApplyBatch applies a batch only when its sequence is the agent's watermark + 1,
// and writes every histogram merge, scalar, new catalog entry and the new watermark in ONE
// WriteBatch (WAL on), so after a crash either all of it is there, watermark included, or none
// of it is and the agent's resend is applied. A new agent id starts at watermark 0.
//
// Thread safety: a Store may be used from any number of threads. Writers (ApplyBatch,
// SkipRejected) are serialized by a lock inside; queries (QueryHistograms, Metrics) run
// concurrently with them and with each other, reading a consistent RocksDB snapshot. RollUp runs
// on the Store's own thread (stopped by the destructor) or the caller's, alongside both.
#pragma once

#include <array>
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

#include "aggregator/catalog.h"
#include "aggregator/stack_dictionary.h"
#include "aggregator/keys.h"
#include "aggregator/rollup.h"
#include "core/batch.h"
#include "core/query_wire.h"
#include "core/status.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
class WriteBatch;
}  // namespace rocksdb

namespace trailmap::aggregator {

struct MergeCounters;  // aggregator/encoding_merge_operator.h

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
  size_t block_cache_mb = 256;
  // Memtable size of the `hist` column family, MiB (the others use a quarter of it).
  size_t write_buffer_mb = 32;
  // Flushes plus compactions at once: sized for a 2-core box.
  int background_jobs = 2;
  // Threads one histogram query scans with (time slices of a long range in parallel); 1 = the
  // caller's thread only.
  int query_threads = 2;
  // Bounds on the agents' stack dictionaries held in memory.
  StackDictionaryOptions dictionaries;
  // Seconds each histogram family keeps its data, in kHistogramResolutions order (hist, hist_10s,
  // hist_60s); 0 = forever. A key goes when all of its bucket is older than now - retention.
  // A Store keeps everything unless told; trailmap-aggregator's config starts from
  // kDefaultRetention (aggregator_config.h).
  std::array<int64_t, kHistogramResolutionCount> retention_seconds = {0, 0, 0};
  // Unix seconds now, for retention; empty = the system clock. Tests hand down a fixed clock.
  std::function<int64_t()> clock;
  // A background thread rolls up pending minutes this often; 0 = no thread (the caller runs
  // RollUp, as tests do).
  int rollup_interval_ms = 1000;
  // A minute is rolled up once nothing has been written to it for this long (a minute that is
  // still being written would be rolled up again and again).
  int rollup_quiet_ms = 2000;
};

// Which histogram families a query may read.
enum class QueryPlan {
  kCoarsest,    // the coarsest resolution that gives the asked columns exactly (the default)
  kFinestOnly,  // `hist` alone, every stored second (tests and tools compare the two)
};

// What ApplyBatch did.
struct ApplyOutcome {
  Ack::Status status = Ack::Status::kApplied;  // kApplied, kDuplicate, kOutOfOrder or
                                               // kNeedDictionary
  uint64_t watermark = 0;                      // the agent's watermark after the call
  uint64_t expected = 0;                       // the sequence applied next: watermark + 1
  size_t histograms = 0;                       // histogram deltas written (when applied)
  size_t scalars = 0;                          // scalar values written (when applied)
  size_t new_ids = 0;                          // catalog entries created (when applied)
  size_t stack_values = 0;                     // (second, series) stack lists written
  std::string reason;                          // kNeedDictionary: which id is unknown
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
  // Records that the batch `sequence` of `agent` was rejected as malformed: if it is the one
  // expected next, the watermark moves past it (and nothing else is written) so the agent's stream
  // continues. Returns whether the watermark moved.
  Result<bool> SkipRejected(std::string_view agent, uint64_t sequence);
  // The last sequence applied for `agent`; 0 for an agent never seen.
  uint64_t Watermark(std::string_view agent) const;

  // A scalar metric is answered by RunScalarHistogramQuery (aggregator/scalar_query.h): each
  // stored host-second value one sample, in fixed point.
  // Partial aggregates of one metric over [query.from, query.to): one merged histogram per
  // (column, group) that holds data, cells sorted by column then group, groups sorted by name.
  // group_by "" gives the one group ""; "host" a group per host; any other key a group per value
  // of that field, looked up in the series fields and then the host labels, and "(none)" for data
  // without it. `hosts` (if not empty) keeps only those hosts. An unknown metric is an empty
  // answer, not an error; Corruption if a stored histogram does not decode.
  // The answer is the same under either plan (the rollups hold exact merges).
  Result<HistogramAnswer> QueryHistograms(const HistogramQuery& query,
                                          QueryPlan plan = QueryPlan::kCoarsest) const;
  // Stack samples of one metric merged over [query.from, query.to), query.hosts and
  // query.where: every distinct stack with its count, sorted by stack text. Whole minutes of the
  // range are read from `stacks_60s`. An unknown metric is an empty answer; InvalidArgument for a
  // predicate that compares values; Corruption if a stored value does not decode.
  Result<StackAnswer> QueryStacks(const StackQuery& query) const;
  // Rolls up pending minutes (see the header): those quiet for rollup_quiet_ms, or all of them
  // with `all` (then until none is left). Returns how many minutes it wrote. Safe alongside
  // ingest and queries; a minute written to meanwhile stays pending and is done again.
  Result<size_t> RollUp(bool all = false);
  // Minutes whose rollups are behind `hist`.
  size_t PendingRollups() const { return pending_.size(); }
  // Merges (in RocksDB's merge operators, since Open) that cut a count at kMaxTotalCount
  // (core/counts.h) instead of failing.
  uint64_t SaturatedMerges() const;

  // The metric catalog, by name.
  std::vector<MetricInfo> Metrics() const;
  // One stored scalar, for tools and tests; nullopt when absent.
  std::optional<double> ScalarAt(std::string_view metric, std::string_view host,
                                 std::string_view fields, int64_t second) const;

  // Flushes every memtable to disk / compacts every column family fully (tests, tools, shutdown).
  Status Flush();
  Status Compact();

 private:
  struct Handles;
  Store(const StoreOptions& options, std::unique_ptr<Handles> handles);
  Status Load();
  // Marks every minute of `hist` pending unless the meta marker says that was done.
  Status MarkOldMinutesIfNeeded();
  void RollupLoop();
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

  const StoreOptions options_;
  std::shared_ptr<MergeCounters> merges_;  // shared with the merge operators
  std::unique_ptr<Handles> db_;  // the DB and its column families
  Catalog catalog_;
  mutable std::mutex write_mu_;  // serializes writers; guards watermarks_ and dictionaries_
  std::unordered_map<std::string, uint64_t> watermarks_;
  StackDictionaries dictionaries_;
  // Descriptions written by the WriteBatch being built, for the catalog after it succeeds.
  std::vector<std::pair<uint32_t, std::string>> pending_descriptions_;
  PendingMinutes pending_;
  // Held while a query takes its snapshot and pending minutes, and while RollUp writes a minute
  // and clears it: a query sees a minute clean only with its rollups in its snapshot.
  mutable std::mutex view_mu_;
  std::mutex rollup_mu_;  // one RollUp at a time
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread rollup_thread_;
};

}  // namespace trailmap::aggregator
