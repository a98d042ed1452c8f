// Database: the aggregator's RocksDB, its column families, and the one way every part of the
// store writes to it.
//
// Column families (key and value grammar in aggregator/store/keys.h; the list is kFamilies in
// database.cc, one line each):
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
// Every data family drops keys older than its retention as RocksDB compacts
// (aggregator/store/retention_filter.h).
//
// Writes: Write refuses, writing nothing, while RocksDB holds a background error (a write on a
// WAL that failed aborts the process in RocksDB builds with assertions on; store_health.h) or
// while the data directory's file system is below its reserve (disk_guard.h). A refused write is
// an error to the caller, who acks nothing, so agents resend.
//
// Locks, each held only around a short critical section:
//   LockWrites  one writer at a time: the batch applier, the rollup and backfill passes' writes,
//               the idle-agent pruning. A rollup or backfill writes a span only if no write came
//               to it since its snapshot, which needs no write in flight (rollup.h).
//   LockView    held while a query takes its snapshot and the spans pending a rollup, and while
//               a pass writes a span and marks it clean: a query sees a span clean only with its
//               rollups in its snapshot. Taken after LockWrites when both are held.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <rocksdb/db.h>

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "aggregator/store/disk_guard.h"
#include "aggregator/store/keys.h"
#include "aggregator/store/store_health.h"
#include "aggregator/store/store_options.h"
#include "core/status.h"

namespace trailmap::aggregator {

struct MergeCounters;  // aggregator/store/encoding_merge_operator.h

class Database {
 public:
  // Opens (creating if missing) the database in `dir` with every column family, RocksDB's log in
  // dir/LOG (rocksdb_log.h). IOError if the directory cannot be made or RocksDB cannot open.
  static Result<std::unique_ptr<Database>> Open(const std::string& dir,
                                                const StoreOptions& options);
  ~Database();  // closes the database (flushes nothing beyond what the WAL already holds)
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  rocksdb::DB* db() const { return db_.get(); }
  // By resolution, in kHistogramResolutions order: hist, hist_10s, hist_60s, hist_600s.
  rocksdb::ColumnFamilyHandle* hist(size_t resolution) const { return hist_[resolution]; }
  const std::array<rocksdb::ColumnFamilyHandle*, kHistogramResolutionCount>& hist_families() const {
    return hist_;
  }
  rocksdb::ColumnFamilyHandle* scalar() const { return scalar_; }
  rocksdb::ColumnFamilyHandle* meta() const { return meta_; }
  rocksdb::ColumnFamilyHandle* stacks() const { return stacks_; }
  rocksdb::ColumnFamilyHandle* stacks_60s() const { return stacks_60s_; }
  const std::string& dir() const { return dir_; }

  // db->Write unless a background error holds or the disk is below its reserve (see above).
  rocksdb::Status Write(const rocksdb::WriteOptions& options, rocksdb::WriteBatch* wb);
  [[nodiscard]] std::unique_lock<std::mutex> LockWrites() const {
    return std::unique_lock(write_mu_);
  }
  [[nodiscard]] std::unique_lock<std::mutex> LockView() const { return std::unique_lock(view_mu_); }

  // Calls DB::Resume if a background error holds and its backoff has passed; returns whether
  // the database takes writes now.
  bool ResumeIfDue();
  // The background error held now, or the disk's shortage; "" when writes are taken.
  std::string WriteRefusal() const;
  const BackgroundErrors& background_errors() const { return *background_errors_; }
  BackgroundErrors& background_errors() { return *background_errors_; }  // tests: Set
  // The last write, rollup or backfill error any part noted (Health's last_error).
  void NoteError(const std::string& error);
  std::string LastError() const;

  // Merges that cut a count at kMaxTotalCount (core/counts.h) instead of failing, since Open; the
  // rollup pass and queries add theirs.
  uint64_t SaturatedMerges() const;
  void CountSaturated(uint64_t merges) const;
  // A RocksDB integer property summed over every column family; NotFound if RocksDB has none.
  Result<uint64_t> IntProperty(const std::string& name) const;
  // RocksDB's properties now; a property RocksDB does not report reads as 0.
  RocksDbStats Properties() const;
  // Bytes of the files in the data directory.
  uint64_t DiskBytes() const;
  // Flushes every memtable to disk / compacts every column family fully.
  Status Flush();
  Status Compact();

 private:
  Database(const std::string& dir, const StoreOptions& options);
  rocksdb::ColumnFamilyHandle* Named(std::string_view name) const;

  const std::string dir_;
  DiskGuard disk_;
  std::shared_ptr<BackgroundErrors> background_errors_;
  std::shared_ptr<MergeCounters> merges_;  // shared with the merge operators
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> all_;  // owned: destroyed before the DB closes
  std::array<rocksdb::ColumnFamilyHandle*, kHistogramResolutionCount> hist_{};
  rocksdb::ColumnFamilyHandle* scalar_ = nullptr;
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;
  rocksdb::ColumnFamilyHandle* stacks_ = nullptr;
  rocksdb::ColumnFamilyHandle* stacks_60s_ = nullptr;
  mutable std::mutex write_mu_;
  mutable std::mutex view_mu_;
  mutable std::mutex error_mu_;
  std::string last_error_;
};

inline rocksdb::Slice AsSlice(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view View(const rocksdb::Slice& s) { return {s.data(), s.size()}; }

inline Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  return Status::IOError(std::string(what) + ": " + s.ToString());
}

}  // namespace trailmap::aggregator
