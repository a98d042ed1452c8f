// Rollups: how `hist_10s` and `hist_60s` are filled from `hist`, and `hist_600s` from `hist_60s`
// (key grammar in keys.h).
//
// Ingest writes only `hist`, and in the same WriteBatch a meta marker "minute m of metric x has
// new seconds" (keys.h, 'r'). A background pass (RollupDriver::RollUp, rollup_driver.h) later reads
// each marked minute from `hist` once and PUTS its six 10 s buckets and its 60 s bucket for every
// (host, series), deleting the marker in the same WriteBatch. A rollup is thus a pure function of
// `hist`: redoing it (after a crash, or because more seconds came) overwrites it with the same or a
// larger answer, never counts anything twice. Until a minute's rollup is written, PendingMinutes
// lists it and the query plan reads that minute from `hist`, so answers are exact at every moment.
//
// Every write that lands in a rollup minute is accounted for:
//   - Late seconds (older than the 1 s retention less an hour, so `hist` will not keep them long
//     enough to be rolled up) are merged at ingest into `hist` AND, as operands, into the rollup
//     families. If their minute is pending they also bump its generation (TouchIfPending).
//   - The pass computes a minute from a snapshot, then writes each part of it under the store's
//     write lock, after checking that the minute's generation is the one it read. So no ingest
//     write can fall between the snapshot and a Put that would overwrite it: a write in between
//     changes the generation, the pass drops what it computed, and the minute stays pending to
//     be done again from a newer snapshot (a late operand that lands after a Put adds to it).
//     Why the lock and not rollups written as merge operands: a Put is idempotent, so a pass
//     that dies half way or is redone never counts twice; deltas would need a record of what was
//     rolled up already. The lock is held only for the write of a part (at most 16,384 keys, the
//     compute runs outside it); docs/benchmarks-log.md, "Rollups serialized with ingest", measures
//     ingest before and after.
//   - A pending minute some of whose `hist` seconds may have aged out (its start is past the 1 s
//     retention) is not rolled up from what is left: its rollups stand as they are, the marker
//     goes (Store counts these as `rollup_aged_out`).
//   - A minute whose rollup fails (a histogram that does not decode, a write error) is skipped,
//     logged with its metric and minute, counted, and retried after a backoff that doubles from
//     1 s to 5 min (PendingMinutes::Failed); the pass goes on with the other minutes.
//
// Why not merge every delta into all three families at ingest (the first version did): that
// writes, flushes and compacts three times the operands, and on a 2-core box compaction of the
// rollup operands fell behind (L0 stalls), cutting acknowledged ingest from ~136k to ~45k
// histogram-seconds/s. Reading a minute back once costs one decode per stored histogram and a
// write of 7 keys per (host, series) per minute instead of 120 operands.
//
// The 10-minute rollup (`hist_600s`, 2 years by default) is a second stage on the same rules,
// one level up: a 10-minute block is to `hist_60s` what a minute is to `hist`.
//   - When a minute's rollup is written, the same WriteBatch marks its block pending (keys.h,
//     'b'; PendingMinutes with a span of 600). A pass (after the minutes in RollupDriver::RollUp)
//     reads the block's ten minutes from `hist_60s` at a snapshot and PUTS its 600 s value per
//     (host, series) under the same generation check, deleting the marker in the last write.
//   - Why from `hist_60s` and not `hist`: once its minutes are rolled up, `hist_60s` holds their
//     exact merges, so the block reads 10 keys per (host, series) instead of 600, and it can be
//     redone for as long as `hist_60s` keeps it (90 days), not only while `hist` does (2 days): a
//     late second that re-rolls a minute re-rolls its block from the same data. The price is a
//     second read (10 keys per block and series); to pay it about once per block, a block is
//     computed only once its end has passed and none of its minutes is pending (else it would be
//     redone as each minute lands). RollupDriver::RollUp(all) does every pending block regardless.
//   - Every write to a block's `hist_60s` keys bumps its generation if it is pending: a minute's
//     last rollup write (which marks it), a late second merged at ingest (TouchIfPending), and a
//     pending minute dropped as aged out (its rollups may have been written in part). A minute's
//     earlier parts (16,384 keys each) do not, but its last write or its drop always follows.
//   - Late seconds are merged at ingest into `hist_600s` too: with the other rollups when older
//     than the 1 s retention less an hour, and into `hist_600s` alone when older than the 60 s
//     retention less an hour (then `hist_60s` will not keep them to be rolled up from).
//   - A pending block that starts past the 60 s retention is not rolled up from what is left of
//     it: its `hist_600s` key stands and the marker goes (counted as `rollup_aged_out`, as minutes
//     are). Failures are skipped, logged, counted as `rollup_failures` and retried with the same
//     backoff as minutes.
//   - Until a block is rolled up, or while any minute in it is pending, queries read it from the
//     finer families (its rolled minutes from `hist_60s`, pending minutes from `hist`), so answers
//     are exact at every moment (aggregator/scan/histogram_query.h).
//
// Thread safety: PendingMinutes is internally locked; ComputeMinuteRollup and ComputeBlockRollup
// only read.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "aggregator/store/keys.h"
#include "core/status.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
class Snapshot;
}  // namespace rocksdb

namespace trailmap::aggregator {

inline constexpr uint32_t kRollupMinute = 60;
inline constexpr uint32_t kRollupBlock = 600;  // the 10-minute block of `hist_600s`

// The families one rollup stage reads and writes, as indexes of kHistogramResolutions: minutes
// are read from `hist`, blocks from `hist_60s` into `hist_600s`.
inline constexpr size_t kMinuteSource = 0, kBlockSource = 2, kBlockFamily = 3;
static_assert(kHistogramResolutions[kBlockSource].seconds == kRollupMinute);
static_assert(kHistogramResolutions[kBlockFamily].seconds == kRollupBlock);

// The minutes (metric, start second) whose rollups are behind `hist`. Each carries a generation
// that every new write to it bumps, so a rollup computed from an older snapshot can tell that it
// is already out of date. With a span of kRollupBlock, the same for 10-minute blocks (whose
// `hist_600s` keys are behind `hist_60s`); "minute" below means a span.
class PendingMinutes {
 public:
  explicit PendingMinutes(uint32_t span = kRollupMinute) : span_(span) {}

  struct Minute {
    uint32_t metric = 0;
    int64_t start = 0;
    uint64_t generation = 0;
  };

  using Clock = std::chrono::steady_clock;
  // Backoff of a failing minute: 1 s after its first failure, doubling up to this.
  static constexpr std::chrono::seconds kMaxBackoff{300};

  // Marks a minute (a write to it is about to be made). Returns whether it was clean before.
  bool Touch(uint32_t metric, int64_t start);
  // Bumps the generation of the minute if it is pending (a late write merged straight into the
  // rollups); returns whether it was pending.
  bool TouchIfPending(uint32_t metric, int64_t start);
  // Minutes not touched for `quiet` (all of them when quiet is zero) and not waiting out a
  // failure's backoff at `now` (unless `ignore_backoff`), oldest first, at most `limit`, skipping
  // those for which `skip` says true.
  std::vector<Minute> Ready(Clock::duration quiet, size_t limit, Clock::time_point now,
                            bool ignore_backoff = false,
                            const std::function<bool(const Minute&)>& skip = {}) const;
  std::vector<Minute> Ready(Clock::duration quiet, size_t limit) const {
    return Ready(quiet, limit, Clock::now());
  }
  // The minute's generation now; 0 if it is not pending.
  uint64_t Generation(uint32_t metric, int64_t start) const;
  // Whether the minute is still pending at `generation` (no write to it since it was read).
  bool Unchanged(uint32_t metric, int64_t start, uint64_t generation) const;
  // Removes the minute if its generation is still `generation`; returns whether it did.
  bool Clear(uint32_t metric, int64_t start, uint64_t generation);
  // Removes the minute whatever its generation (its `hist` data has aged out).
  bool Drop(uint32_t metric, int64_t start);
  // Records a failed rollup of the minute at `now`: it is not Ready again before the backoff
  // (1 s, 2 s, 4 s, ... kMaxBackoff) has passed. Returns the minute's failures in a row.
  uint32_t Failed(uint32_t metric, int64_t start, Clock::time_point now);
  // The pending minute starts of `metric` in [lo, hi), sorted.
  std::vector<int64_t> Of(uint32_t metric, int64_t lo, int64_t hi) const;
  size_t size() const;

 private:
  struct State {
    uint64_t generation = 0;
    Clock::time_point touched;
    uint32_t failures = 0;          // failed rollups in a row
    Clock::time_point retry_after;  // not Ready before this (after a failure)
  };
  mutable std::mutex mu_;
  const uint32_t span_;  // seconds per entry: kRollupMinute or kRollupBlock
  std::map<std::pair<uint32_t, int64_t>, State> minutes_;
  uint64_t next_generation_ = 1;
};

// Reads minute [start, start + 60) of `metric` from `hist` at `snapshot` and calls
// emit(resolution index, key, encoded histogram) for every non-empty 10 s bucket (index 1) and
// 60 s bucket (index 2) of every (host, series). Memory stays small however many hosts there
// are: one iterator per second, merged in (host, series) order. Corruption if a stored histogram
// does not decode; a Status emit returns that is not Ok stops the walk and is returned. A sum
// past kMaxTotalCount saturates (core/counts.h), never fails: each value emitted saturated adds
// one to *saturated (if non-null).
Status ComputeMinuteRollup(rocksdb::DB* db, const rocksdb::Snapshot* snapshot,
                           rocksdb::ColumnFamilyHandle* hist, uint32_t metric, int64_t start,
                           const std::function<Status(size_t resolution, const DataKey& key,
                                                      const std::string& value)>& emit,
                           uint64_t* saturated = nullptr);

// Reads block [start, start + 600) of `metric` from `hist_60s` (`minutes`) at `snapshot` and calls
// emit(key, encoded histogram) with the merge of the block's minutes for every (host, series)
// that has one, in (host, series) order. Errors and saturation as ComputeMinuteRollup.
Status ComputeBlockRollup(rocksdb::DB* db, const rocksdb::Snapshot* snapshot,
                          rocksdb::ColumnFamilyHandle* minutes, uint32_t metric, int64_t start,
                          const std::function<Status(const DataKey& key, const std::string& value)>&
                              emit,
                          uint64_t* saturated = nullptr);

}  // namespace trailmap::aggregator
