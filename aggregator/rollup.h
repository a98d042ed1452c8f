// Rollups: how `hist_10s` and `hist_60s` are filled from `hist` (key grammar in keys.h).
//
// Ingest writes only `hist`, and in the same WriteBatch a meta marker "minute m of metric x has
// new seconds" (keys.h, 'r'). A background pass (Store::RollUp) later reads each marked minute
// from `hist` once and PUTS its six 10 s buckets and its 60 s bucket for every (host, series),
// deleting the marker in the same WriteBatch. A rollup is thus a pure function of `hist`: redoing
// it (after a crash, or because more seconds came) overwrites it with the same or a larger answer,
// never counts anything twice. Until a minute's rollup is written, PendingMinutes lists it and
// the query plan reads that minute from `hist`, so answers are exact at every moment.
//
// Why not merge every delta into all three families at ingest (the first version did): that
// writes, flushes and compacts three times the operands, and on a 2-core box compaction of the
// rollup operands fell behind (L0 stalls), cutting acknowledged ingest from ~136k to ~45k
// histogram-seconds/s. Reading a minute back once costs one decode per stored histogram and a
// write of 7 keys per (host, series) per minute instead of 120 operands.
//
// Thread safety: PendingMinutes is internally locked; ComputeMinuteRollup only reads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "aggregator/keys.h"
#include "core/status.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
class Snapshot;
}  // namespace rocksdb

namespace trailmap::aggregator {

inline constexpr uint32_t kRollupMinute = 60;

// The minutes (metric, start second) whose rollups are behind `hist`. Each carries a generation
// that every new write to it bumps, so a rollup computed from an older snapshot can tell that it
// is already out of date.
class PendingMinutes {
 public:
  struct Minute {
    uint32_t metric = 0;
    int64_t start = 0;
    uint64_t generation = 0;
  };

  // Marks a minute (a write to it is about to be made). Returns whether it was clean before.
  bool Touch(uint32_t metric, int64_t start);
  // Minutes not touched for `quiet` (all of them when quiet is zero), oldest first, at most
  // `limit`.
  std::vector<Minute> Ready(std::chrono::steady_clock::duration quiet, size_t limit) const;
  // Removes the minute if its generation is still `generation`; returns whether it did.
  bool Clear(uint32_t metric, int64_t start, uint64_t generation);
  // The pending minute starts of `metric` in [lo, hi), sorted.
  std::vector<int64_t> Of(uint32_t metric, int64_t lo, int64_t hi) const;
  size_t size() const;

 private:
  struct State {
    uint64_t generation = 0;
    std::chrono::steady_clock::time_point touched;
  };
  mutable std::mutex mu_;
  std::map<std::pair<uint32_t, int64_t>, State> minutes_;
  uint64_t next_generation_ = 1;
};

// Reads minute [start, start + 60) of `metric` from `hist` at `snapshot` and calls
// emit(resolution index, key, encoded histogram) for every non-empty 10 s bucket (index 1) and
// 60 s bucket (index 2) of every (host, series). Memory stays small however many hosts there
// are: one iterator per second, merged in (host, series) order. Corruption if a stored histogram
// does not decode; a Status emit returns that is not Ok stops the walk and is returned.
Status ComputeMinuteRollup(rocksdb::DB* db, const rocksdb::Snapshot* snapshot,
                           rocksdb::ColumnFamilyHandle* hist, uint32_t metric, int64_t start,
                           const std::function<Status(size_t resolution, const DataKey& key,
                                                      const std::string& value)>& emit);

}  // namespace trailmap::aggregator
