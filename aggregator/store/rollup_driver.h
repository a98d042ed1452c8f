// RollupDriver: the background pass that keeps `hist_10s`, `hist_60s` and `hist_600s` caught up
// with `hist` (what a rollup is, and why every late write is accounted for: rollup.h).
//
// The batch applier writes `hist` and marks each minute it touches pending (minutes()), in the
// same WriteBatch; RollUp (its thread every rollup_interval_ms, or the caller) reads pending
// minutes back from `hist` at a snapshot and writes their 10 s and 60 s buckets, marking each
// minute's 10-minute block pending (blocks()) in the same write; then it reads pending blocks
// back from `hist_60s` and writes their 600 s buckets. A query reads pending minutes from `hist`
// and pending blocks from the finer families, so answers are exact whether or not the pass has
// caught up. A database made before the rollups (or `hist_600s`) existed has every minute
// (block) marked pending at Open (MarkUnrolled).
//
// A span whose source data may have aged out is not rewritten from what is left: its rollups
// stand and the marker goes. A span that fails is skipped, logged, counted (failures(), Health)
// and retried after a backoff; it never stops the pass.
//
// Locks: one RollUp at a time (its own lock); it computes outside the database's write lock and
// takes it only to write each part, and the view lock with it for the last part (database.h).
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "aggregator/store/periodic_thread.h"
#include "aggregator/store/rollup.h"
#include "aggregator/store/store_options.h"
#include "core/status.h"

namespace rocksdb {
class Snapshot;
class WriteBatch;
}  // namespace rocksdb

namespace trailmap::aggregator {

class Catalog;
class Database;

// The name of a metric id for the log, an aggregate's too ("disk.latency (aggregate)").
std::string MetricName(const Catalog& catalog, uint32_t metric);

class RollupDriver {
 public:
  // `db` and `catalog` outlive the driver (the Store owns them).
  RollupDriver(const StoreOptions& options, Database& db, const Catalog& catalog);
  ~RollupDriver() { Stop(); }
  RollupDriver(const RollupDriver&) = delete;
  RollupDriver& operator=(const RollupDriver&) = delete;

  // Takes a pending-rollup marker from meta ('r' minute, 'b' block) while the store loads: true
  // when it was one, Corruption when it does not decode.
  Result<bool> Restore(std::string_view key, std::string_view value);
  // Marks every minute of `hist` and every block of `hist_60s` pending unless meta records that
  // this was done (a database from before the rollups or `hist_600s`).
  Status MarkUnrolled();
  // Starts the thread (rollup_interval_ms > 0); Stop ends it (the destructor too).
  void Start();
  void Stop();

  // Rolls up pending minutes: those quiet for rollup_quiet_ms and not waiting out a failure's
  // backoff, or all of them with `all` (then until none is left but those that failed in this
  // call). Then the same for pending 10-minute blocks, of which, without `all`, only those whose
  // end has passed and none of whose minutes is pending (rollup.h). Returns how many minutes it
  // wrote, and sets *blocks (if given) to how many blocks. Safe alongside ingest and queries; a
  // span written to meanwhile stays pending and is done again.
  Result<size_t> RollUp(bool all = false, size_t* blocks = nullptr);

  // The pending minutes and 10-minute blocks: the applier marks them, queries read them.
  PendingMinutes& minutes() { return pending_; }
  PendingMinutes& blocks() { return pending_blocks_; }
  const PendingMinutes& minutes() const { return pending_; }
  const PendingMinutes& blocks() const { return pending_blocks_; }

  uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }
  uint64_t aged_out() const { return aged_out_.load(std::memory_order_relaxed); }
  // Passes of the thread that threw (periodic_thread.h).
  uint64_t thread_failures() const { return thread_.failures(); }

 private:
  // Both markings: every `span` of kHistogramResolutions[source] into `pending` and meta
  // (pending_key) unless meta holds `marker_key`, which it then writes.
  Status MarkUnrolledIfNeeded(const std::string& marker_key, size_t source, uint32_t span,
                              PendingMinutes* pending,
                              std::string (*pending_key)(uint32_t, int64_t),
                              const std::string& what);
  // One stage of RollUp: the pending minutes, or (blocks) the pending 10-minute blocks.
  Result<size_t> RollUpStage(bool blocks, bool all);
  // Rolls up one minute (or block) read at `snapshot`: true when written and clean, false when a
  // write to it came meanwhile (it stays pending); an error leaves it pending.
  Result<bool> RollUpSpan(const PendingMinutes::Minute& m, const rocksdb::Snapshot* snapshot,
                          bool block);
  // Removes the pending marker of a minute (block) whose 1 s (60 s) data may have aged out
  // (rollup.h); a minute's block is marked pending.
  Status DropAged(const PendingMinutes::Minute& m, bool block);
  // Marks the block of `second` pending, in memory and in `wb` (write lock held).
  void MarkBlockLocked(uint32_t metric, int64_t second, rocksdb::WriteBatch* wb);

  const StoreOptions& options_;
  Database& db_;
  const Catalog& catalog_;
  PendingMinutes pending_;
  PendingMinutes pending_blocks_{kRollupBlock};
  std::mutex rollup_mu_;  // one RollUp at a time
  std::atomic<uint64_t> failures_{0}, aged_out_{0};
  PeriodicThread thread_;
};

}  // namespace trailmap::aggregator
