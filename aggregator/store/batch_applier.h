// BatchApplier: agents' batches into the store, each exactly once.
//
// Exactly-once: a batch is applied only when its sequence is the agent's watermark + 1, and its
// histogram merges, scalars, stack counts, new catalog entries, pending-rollup markers and the
// new watermark go in ONE WriteBatch (WAL on), so after a crash either all of it is there,
// watermark included, or none of it is and the agent's resend is applied. A new agent id starts
// at watermark 0. Every rule of that lives in this file, under the database's write lock
// (database.h LockWrites), which also guards the watermarks and the stack dictionaries.
//
// Ids are published to the catalog as they are made, before the write (so a query never meets
// an id the catalog cannot name), and taken back with the watermarks if the write fails.
//
// Stacks arrive interned per agent (schemas/ingest.capnp); the applier keeps each agent's
// definitions (stack_dictionary.h) and gives every distinct folded stack a global id in the
// catalog, written in the same WriteBatch as the counts that use it. A batch that uses a stack
// with no definition is not applied: kNeedDictionary.
//
// Rollups (rollup.h): each minute a batch writes to `hist` is marked pending in the same
// WriteBatch; seconds older than the 1 s retention (less an hour) are merged straight into the
// rollups, and past the 60 s retention (less an hour) into `hist_600s` alone.
//
// Idle agents: the watermark of an agent not heard from for agent_idle_seconds is deleted
// (PruneIdleAgents). Back after that it is a new agent: its next batch is answered outOfOrder,
// expected 1, and its shipper (ingest/shipper.h) takes a new incarnation and renumbers every
// batch it still holds from 1. Only a batch applied whose ack never reached the agent before it
// went silent that long would count twice: the default idle time (30 days) is far longer than
// any spool holds batches.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "aggregator/store/keys.h"
#include "aggregator/store/stack_dictionary.h"
#include "aggregator/store/store_options.h"
#include "core/batch.h"
#include "core/query_wire.h"
#include "core/status.h"

namespace rocksdb {
class WriteBatch;
}  // namespace rocksdb

namespace trailmap::aggregator {

class Aggregates;
class BackfillDriver;
class Catalog;
class Database;
class RollupDriver;

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

class BatchApplier {
 public:
  // Every reference outlives the applier (the Store owns them all).
  BatchApplier(const StoreOptions& options, Database& db, Catalog& catalog, Aggregates& aggregates,
               RollupDriver& rollups, BackfillDriver& backfill);
  BatchApplier(const BatchApplier&) = delete;
  BatchApplier& operator=(const BatchApplier&) = delete;

  // Takes a meta entry this applier keeps in memory (a watermark 'w', a host's newest second
  // 'T') while the store loads: true when it was one, Corruption when it does not decode.
  Result<bool> Restore(std::string_view key, std::string_view value);

  // Group commit: applies several batches with ONE write (one WAL fsync when `sync`), each judged
  // against the watermarks as the batches before it in the group left them (so an agent's
  // sequences 5, 6, 7 in one group all apply). Results are in the order given. InvalidArgument
  // for a batch that refers past its series list or has no agent or host. If the write fails,
  // every batch that would have been applied gets the IOError and nothing is changed (the
  // catalog and watermarks are as before, and a resend will be applied).
  std::vector<Result<ApplyOutcome>> ApplyBatches(const std::vector<const Batch*>& batches);
  // Judges a batch of `agent` (not empty) with `sequence` (>= 1) that cannot be read, by the
  // rules of schemas/ingest.capnp ("Rejection"): kRejected when it is the one expected next (the
  // watermark moves to it, written alone so the agent's stream continues) or at or below the
  // watermark (nothing moves); kOutOfOrder with `expected` when it is past a gap (nothing moves:
  // it is judged in its turn). IOError if the watermark could not be written (nothing moved).
  Result<ApplyOutcome> SkipRejected(std::string_view agent, uint64_t sequence);
  // Deletes the watermark of every agent idle for agent_idle_seconds (0: none); returns how many.
  Result<size_t> PruneIdleAgents();

  // The last sequence applied for `agent`; 0 for an agent never seen.
  uint64_t Watermark(std::string_view agent) const;
  // Every agent id with a watermark.
  std::vector<std::string> Agents() const;
  // How far hosts are applied (store.h HostsThrough).
  std::vector<HostThrough> HostsThrough(const CompletenessQuery& query) const;
  // The newest second of any host applied so far (restored ones included); INT64_MIN for none.
  int64_t NewestThrough() const;
  // The newest second applied since Open (0 before the first batch).
  int64_t NewestSecond() const { return newest_second_.load(std::memory_order_relaxed); }
  // Agents with a watermark now.
  size_t AgentCount() const;
  uint64_t AgentsPruned() const { return agents_pruned_.load(std::memory_order_relaxed); }

 private:
  uint64_t WatermarkLocked(std::string_view agent) const;
  // Adds one batch's catalog entries, data and watermark to `wb`.
  void AppendBatchLocked(const Batch& batch, const std::string& labels, int64_t direct_before,
                         rocksdb::WriteBatch* wb, ApplyOutcome* out,
                         std::vector<std::pair<uint32_t, std::string>>* label_changes);
  // Adds one second's stack counts (global ids resolved, new ones in the catalog and `wb`).
  void AppendStacksLocked(const Batch& batch, const SecondDelta& second, uint32_t host,
                          const std::vector<uint32_t>& metric_of,
                          const std::vector<uint32_t>& series_of, rocksdb::WriteBatch* wb,
                          ApplyOutcome* out);
  // Adds a metric's description to `wb` when it differs from the one held; the catalog takes it
  // once the write has succeeded.
  void AppendDescriptionLocked(uint32_t metric, const std::string& description,
                               rocksdb::WriteBatch* wb);
  // Merges a late second's histogram into its `hist_600s` key.
  void AppendLateBlockLocked(const DataKey& second, std::string_view encoded,
                             rocksdb::WriteBatch* wb);
  // Seconds before this are merged into `hist_600s` at ingest: the 60 s retention (less an hour)
  // will not keep them to be rolled up from.
  int64_t BlockDirectBefore() const;
  // Takes what a successful write of `applied` made true into memory.
  void CommitLocked(const std::vector<const Batch*>& batches, const std::vector<size_t>& applied,
                    std::vector<std::pair<uint32_t, std::string>>* label_changes);

  const StoreOptions& options_;
  Database& db_;
  Catalog& catalog_;
  Aggregates& aggregates_;
  RollupDriver& rollups_;
  BackfillDriver& backfill_;
  // Under the database's write lock:
  std::unordered_map<std::string, uint64_t> watermarks_;
  // Unix seconds each agent with a watermark last sent a batch (for PruneIdleAgents).
  std::unordered_map<std::string, int64_t> last_seen_;
  StackDictionaries dictionaries_;
  // Descriptions written by the WriteBatch being built, for the catalog after it succeeds.
  std::vector<std::pair<uint32_t, std::string>> pending_descriptions_;
  // The newest seconds of hosts the WriteBatch being built moves, for through_ after it succeeds.
  std::unordered_map<uint32_t, int64_t> pending_through_;
  // Host id -> newest second applied; INT64_MIN = none (HostsThrough), under through_mu_.
  mutable std::mutex through_mu_;
  std::vector<int64_t> through_;
  std::atomic<int64_t> newest_second_{0};
  std::atomic<uint64_t> agents_pruned_{0};
};

}  // namespace trailmap::aggregator
