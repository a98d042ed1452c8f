// StoreHealth and BackgroundErrors: what an aggregator's store can say about its own state, and
// how it notices and recovers from RocksDB background errors (a full disk, an I/O error).
//
// RocksDB stops accepting writes after a background error it cannot ignore (a flush, compaction
// or WAL write that failed). BackgroundErrors is the EventListener that hears of it: it logs the
// reason once per episode ("rocksdb: background error in flush: IO error: No space left on
// device; writes fail until it recovers"), counts it, and holds it for the store's health until
// RocksDB recovers. RocksDB recovers some errors by itself (a full disk once space returns, with
// its SstFileManager); for every other one the store's maintenance thread calls DB::Resume while
// ResumeDue says so: at once, then with a backoff doubling from 1 s to kMaxResumeBackoff. While
// the error holds, every ApplyBatches fails with it, and the ingest server neither acks nor
// forgets those batches (agents resend them); a write never fails silently.
//
// Thread safety: every method may be called from any thread (RocksDB calls the listener from its
// background threads); callbacks catch every exception (none may cross into RocksDB).
#pragma once

#include <rocksdb/listener.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "core/query_wire.h"

namespace trailmap::aggregator {

// A snapshot of a store's health (Store::Health), as the query side's status answer carries it.
using StoreHealth = ShardStatus;

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

class BackgroundErrors : public rocksdb::EventListener {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kMaxResumeBackoff{60};

  void OnBackgroundError(rocksdb::BackgroundErrorReason reason, rocksdb::Status* error) override;
  void OnErrorRecoveryEnd(const rocksdb::BackgroundErrorRecoveryInfo& info) override;
  const char* Name() const override { return "trailmap.background_errors"; }

  // The error held now ("" = none), how many were reported, how many recovered.
  std::string Current() const;
  uint64_t errors() const;
  uint64_t recoveries() const;
  // Whether the store should call DB::Resume now: an error is held and its backoff has passed.
  bool ResumeDue(Clock::time_point now) const;
  // What DB::Resume returned: ok clears the error (and logs the recovery); otherwise the next
  // try waits twice as long as the last (logged on the first failure and at the cap).
  void ResumeDone(const rocksdb::Status& status, Clock::time_point now);
  // Records an error as RocksDB would (tests).
  void Set(const std::string& reason, const std::string& error);

 private:
  void ClearLocked(const std::string& how);

  mutable std::mutex mu_;
  std::string current_;
  uint64_t errors_ = 0;
  uint64_t recoveries_ = 0;
  Clock::time_point resume_after_{};
  Clock::duration backoff_{};
};

}  // namespace trailmap::aggregator
