// Store: one aggregator's RocksDB — per-second histograms and scalars of the hosts it owns, the id
// catalog, and each agent's sequence watermark — with exactly-once ingest and partial-aggregate
// queries.
//
// Column families (key and value grammar in aggregator/keys.h):
//   hist    metric_id | second | host_id | series_id -> histogram, merged by "trailmap.histogram"
//   scalar  metric_id | second | host_id | series_id -> double (last write wins)
//   meta    id maps both ways (metrics with kind and unit, hosts with labels, series, stacks)
//           and agent -> watermark (the last sequence applied)
//   stacks      metric_id | second | host_id | series_id -> (global stack id, count) list,
//               merged by "trailmap.stacks" (aggregator/stack_merge_operator.h)
//   stacks_60s  the same per minute (second = the minute's start), merged at ingest from the
//               same operands; a stack query reads it for the whole minutes of its range
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
// concurrently with them and with each other, reading a consistent RocksDB snapshot.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "aggregator/catalog.h"
#include "aggregator/stack_dictionary.h"
#include "core/batch.h"
#include "core/query_wire.h"
#include "core/status.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
class WriteBatch;
}  // namespace rocksdb

namespace trailmap::aggregator {

struct StoreOptions {
  // fsync the WAL before ApplyBatch returns. An ack is a promise: with false, a power loss can
  // lose acknowledged batches (a process crash cannot).
  bool sync = true;
  // Merge operands of one key kept in a memtable before RocksDB merges them on write (bounds read
  // cost for hot keys; 0 would leave it unbounded).
  size_t max_successive_merges = 16;
  // Shared block cache over all column families, MiB.
  size_t block_cache_mb = 64;
  // Memtable size of the `hist` column family, MiB (the others use a quarter of it).
  size_t write_buffer_mb = 32;
  // Flushes plus compactions at once: sized for a 2-core box.
  int background_jobs = 2;
  // Threads one histogram query scans with (time slices of a long range in parallel); 1 = the
  // caller's thread only.
  int query_threads = 2;
  // Bounds on the agents' stack dictionaries held in memory.
  StackDictionaryOptions dictionaries;
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
  Result<HistogramAnswer> QueryHistograms(const HistogramQuery& query) const;
  // Stack samples of one metric merged over [query.from, query.to), query.hosts and
  // query.where: every distinct stack with its count, sorted by stack text. Whole minutes of the
  // range are read from `stacks_60s`. An unknown metric is an empty answer; InvalidArgument for a
  // predicate that compares values; Corruption if a stored value does not decode.
  Result<StackAnswer> QueryStacks(const StackQuery& query) const;
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
  uint64_t WatermarkLocked(std::string_view agent) const;
  // Adds one batch's catalog entries, data and watermark to `wb` (write_mu_ held).
  void AppendBatchLocked(const Batch& batch, const std::string& labels, rocksdb::WriteBatch* wb,
                         ApplyOutcome* out,
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
  std::unique_ptr<Handles> db_;  // the DB and its column families
  Catalog catalog_;
  mutable std::mutex write_mu_;  // serializes writers; guards watermarks_ and dictionaries_
  std::unordered_map<std::string, uint64_t> watermarks_;
  StackDictionaries dictionaries_;
  // Descriptions written by the WriteBatch being built, for the catalog after it succeeds.
  std::vector<std::pair<uint32_t, std::string>> pending_descriptions_;
};

}  // namespace trailmap::aggregator
