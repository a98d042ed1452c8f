#include "aggregator/store/rollup_driver.h"

#include <rocksdb/write_batch.h>

#include <climits>
#include <set>
#include <utility>
#include <vector>

#include "aggregator/store/catalog.h"
#include "aggregator/store/database.h"
#include "core/clock.h"
#include "core/failpoint.h"
#include "core/log.h"

namespace trailmap::aggregator {
namespace {

// meta: the rollup families hold every `hist` key (written when Open created or backfilled them).
const std::string kRollupMarkerKey = "Rollups";
// meta: `hist_600s` holds every block of `hist_60s`, or the block is marked (the same for blocks).
const std::string kBlockMarkerKey = "Rollups600";

}  // namespace

std::string MetricName(const Catalog& catalog, uint32_t metric) {
  if (metric & kAggregateMetricBit) {
    return catalog.Metric(metric & ~kAggregateMetricBit).name + " (aggregate)";
  }
  return catalog.Metric(metric).name;
}

RollupDriver::RollupDriver(const StoreOptions& options, Database& db, const Catalog& catalog)
    : options_(options), db_(db), catalog_(catalog) {}

Result<bool> RollupDriver::Restore(std::string_view key, std::string_view value) {
  const char tag = key.empty() ? '\0' : key[0];
  if (tag != 'r' && tag != 'b') return false;
  uint32_t metric = 0;
  int64_t start = 0;
  if (tag == 'r' ? DecodePendingRollupKey(key, &metric, &start)
                 : DecodePendingBlockKey(key, &metric, &start)) {
    (tag == 'r' ? pending_ : pending_blocks_).Touch(metric, start);
    return true;
  }
  return Status::Corruption("pending rollup key of " + std::to_string(key.size()) + " bytes");
}

void RollupDriver::Start() {
  if (options_.rollup_interval_ms <= 0) return;
  thread_.Start("rollup", std::chrono::milliseconds(options_.rollup_interval_ms), [this] {
    Result<size_t> r = RollUp(false);
    if (!r.ok()) Log("rollup: " + r.status().ToString());
    return true;
  });
}

void RollupDriver::Stop() { thread_.Stop(); }

Status RollupDriver::MarkUnrolled() {
  if (Status s =
          MarkUnrolledIfNeeded(kRollupMarkerKey, kMinuteSource, kRollupMinute, &pending_,
                               PendingRollupKey, "minutes written before the rollups existed");
      !s.ok()) {
    return s;
  }
  return MarkUnrolledIfNeeded(kBlockMarkerKey, kBlockSource, kRollupBlock, &pending_blocks_,
                              PendingBlockKey, "10-minute blocks written before hist_600s existed");
}

Status RollupDriver::MarkUnrolledIfNeeded(const std::string& marker_key, size_t source,
                                          uint32_t span, PendingMinutes* pending,
                                          std::string (*pending_key)(uint32_t, int64_t),
                                          const std::string& what) {
  std::string marker;
  rocksdb::Status s = db_.db()->Get(rocksdb::ReadOptions(), db_.meta(), marker_key, &marker);
  if (s.ok()) return Status::Ok();
  if (!s.IsNotFound()) return FromRocks(s, "reading the rollup marker " + marker_key);

  // One seek per span of each metric: the spans the source family holds, marked pending.
  const std::string family = kHistogramResolutions[source].family;
  std::unique_ptr<rocksdb::Iterator> it(
      db_.db()->NewIterator(rocksdb::ReadOptions(), db_.hist(source)));
  rocksdb::WriteBatch wb;
  size_t spans = 0;
  DataKey key;
  for (it->SeekToFirst(); it->Valid();) {
    if (!DecodeDataKey(View(it->key()), &key)) {
      return Status::Corruption(family + ": key of " + std::to_string(it->key().size()) + " bytes");
    }
    const int64_t start = BucketStart(key.second, span);
    pending->Touch(key.metric, start);
    wb.Put(db_.meta(), pending_key(key.metric, start), "");
    ++spans;
    it->Seek(DataKeyPrefix(key.metric, start + span));
  }
  if (!it->status().ok()) return FromRocks(it->status(), "reading " + family + " for the rollups");
  wb.Put(db_.meta(), marker_key, "");
  rocksdb::WriteOptions synced;
  synced.sync = true;
  if (s = db_.Write(synced, &wb); !s.ok()) return FromRocks(s, "marking " + what + " to roll up");
  if (spans > 0) Log(std::to_string(spans) + " " + what + " will be rolled up");
  return Status::Ok();
}

Result<size_t> RollupDriver::RollUp(bool all, size_t* blocks) {
  std::lock_guard one_at_a_time(rollup_mu_);
  Result<size_t> minutes = RollUpStage(/*blocks=*/false, all);
  if (!minutes.ok()) return minutes;
  // Then the blocks, so that those whose minutes were just rolled up are done in this call.
  Result<size_t> block_count = RollUpStage(/*blocks=*/true, all);
  if (!block_count.ok()) return block_count.status();
  if (blocks) *blocks = *block_count;
  return minutes;
}

Result<size_t> RollupDriver::RollUpStage(bool blocks, bool all) {
  PendingMinutes& pending = blocks ? pending_blocks_ : pending_;
  const size_t source = blocks ? kBlockSource : kMinuteSource;
  const char* const what = blocks ? "block" : "minute";
  const auto quiet =
      all ? std::chrono::milliseconds(0) : std::chrono::milliseconds(options_.rollup_quiet_ms);
  size_t done = 0;
  // Spans that failed in this call: tried once per call (and by the thread after a backoff).
  std::set<std::pair<uint32_t, int64_t>> failed;
  // A block is done once, when its end has passed and no minute of it is pending (rollup.h).
  const int64_t now = trailmap::NowSeconds(options_.clock);
  const auto skip = [this, &failed, blocks, all, now](const PendingMinutes::Minute& m) {
    if (failed.count({m.metric, m.start}) > 0) return true;
    if (!blocks || all) return false;
    return m.start + int64_t{kRollupBlock} > now ||
           !pending_.Of(m.metric, m.start, m.start + kRollupBlock).empty();
  };
  for (;;) {
    if (!all && thread_.stopping()) return done;
    std::vector<PendingMinutes::Minute> ready;
    const rocksdb::Snapshot* snapshot = nullptr;
    {
      // No write is in flight: the snapshot holds every write of the generations read here.
      auto lock = db_.LockWrites();
      ready = pending.Ready(quiet, 16, std::chrono::steady_clock::now(), all, skip);
      if (ready.empty()) return done;
      snapshot = db_.db()->GetSnapshot();
    }
    // A span that starts before this may have lost data to its source family's retention.
    const int64_t aged_before =
        options_.retention_seconds[source] > 0
            ? trailmap::NowSeconds(options_.clock) - options_.retention_seconds[source]
            : INT64_MIN;
    for (const PendingMinutes::Minute& m : ready) {
      Result<bool> r = false;  // dropped, not written
      if (m.start < aged_before) {
        if (Status d = DropAged(m, blocks); !d.ok()) r = d;
      } else {
        r = RollUpSpan(m, snapshot, blocks);
      }
      if (r.ok()) {
        if (*r) ++done;
        continue;
      }
      failed.insert({m.metric, m.start});
      ++failures_;
      db_.NoteError(std::string("rollup of ") + what + " " + std::to_string(m.start) + " of " +
                    MetricName(catalog_, m.metric) + ": " + r.status().ToString());
      const uint32_t times = pending.Failed(m.metric, m.start, std::chrono::steady_clock::now());
      Log(std::string("rollup: ") + what + " " + std::to_string(m.start) + " of " +
          MetricName(catalog_, m.metric) + " failed (" + std::to_string(times) +
          " in a row), skipped and retried later: " + r.status().ToString());
    }
    db_.db()->ReleaseSnapshot(snapshot);
  }
}

Result<bool> RollupDriver::RollUpSpan(const PendingMinutes::Minute& m,
                                      const rocksdb::Snapshot* snapshot, bool block) {
  if (TRAILMAP_FAILPOINT("rollup.minute")) return Status::IOError("failpoint rollup.minute");
  PendingMinutes& pending = block ? pending_blocks_ : pending_;
  rocksdb::WriteBatch wb;
  rocksdb::WriteOptions unsynced;  // lost with the marker, so redone
  bool changed = false;            // a write to the span came after the snapshot
  // Each part is written under the write lock, and only if no write to the span came since
  // the snapshot: a Put never overwrites a write it did not read (rollup.h).
  const auto write_part = [&]() -> Status {
    auto lock = db_.LockWrites();
    if (!pending.Unchanged(m.metric, m.start, m.generation)) {
      changed = true;
      return Status::Unavailable("written meanwhile");
    }
    rocksdb::Status w = db_.Write(unsynced, &wb);
    wb.Clear();
    return w.ok() ? Status::Ok() : FromRocks(w, "writing rollups");
  };
  char key[kDataKeySize];
  // The span stays pending until its last part and the marker go in one write.
  const auto put = [&](size_t resolution, const DataKey& k, const std::string& value) {
    EncodeDataKey(k, key);
    wb.Put(db_.hist(resolution), rocksdb::Slice(key, kDataKeySize), value);
    return wb.Count() < 16384 ? Status::Ok() : write_part();
  };
  uint64_t rollup_saturated = 0;
  Status status =
      block
          ? ComputeBlockRollup(
                db_.db(), snapshot, db_.hist(kBlockSource), m.metric, m.start,
                [&put](const DataKey& k, const std::string& v) { return put(kBlockFamily, k, v); },
                &rollup_saturated)
          : ComputeMinuteRollup(db_.db(), snapshot, db_.hist(kMinuteSource), m.metric, m.start, put,
                                &rollup_saturated);
  if (changed) return false;
  if (!status.ok()) return status;
  const std::string where = std::string(block ? "block " : "minute ") + std::to_string(m.start) +
                            " of " + MetricName(catalog_, m.metric);
  if (rollup_saturated > 0) {
    // Counted with the merges that saturated (self-metric trailmap.aggregator.merges.saturated).
    db_.CountSaturated(rollup_saturated);
    Log("rollup: " + where + ": " + std::to_string(rollup_saturated) +
        " sum(s) passed 2^62 and were saturated");
  }
  const auto& hook = block ? options_.before_block_write : options_.before_rollup_write;
  if (hook) hook(m.metric, m.start);
  auto lock = db_.LockWrites();
  auto view = db_.LockView();
  if (!pending.Unchanged(m.metric, m.start, m.generation)) return false;
  wb.Delete(db_.meta(),
            block ? PendingBlockKey(m.metric, m.start) : PendingRollupKey(m.metric, m.start));
  // A minute's new rollup changes its block's `hist_60s` keys: marked in the same write.
  if (!block) MarkBlockLocked(m.metric, m.start, &wb);
  if (rocksdb::Status w = db_.Write(unsynced, &wb); !w.ok()) {
    return FromRocks(w, "writing rollups");
  }
  pending.Clear(m.metric, m.start, m.generation);
  return true;
}

void RollupDriver::MarkBlockLocked(uint32_t metric, int64_t second, rocksdb::WriteBatch* wb) {
  const int64_t block = BucketStart(second, kRollupBlock);
  pending_blocks_.Touch(metric, block);
  wb->Put(db_.meta(), PendingBlockKey(metric, block), "");
}

Status RollupDriver::DropAged(const PendingMinutes::Minute& m, bool block) {
  auto lock = db_.LockWrites();
  auto view = db_.LockView();
  rocksdb::WriteOptions unsynced;  // a marker that comes back is dropped again
  rocksdb::WriteBatch wb;
  wb.Delete(db_.meta(),
            block ? PendingBlockKey(m.metric, m.start) : PendingRollupKey(m.metric, m.start));
  // Parts of the minute's rollup may have been written before it aged: its block is redone.
  if (!block) MarkBlockLocked(m.metric, m.start, &wb);
  rocksdb::Status w = db_.Write(unsynced, &wb);
  if (!w.ok()) return FromRocks(w, "deleting the rollup marker");
  (block ? pending_blocks_ : pending_).Drop(m.metric, m.start);
  ++aged_out_;
  Log(std::string("rollup: ") + (block ? "block " : "minute ") + std::to_string(m.start) + " of " +
      MetricName(catalog_, m.metric) + " is past the " + (block ? "60 s" : "1 s") +
      " retention: its rollups stay as they are");
  return Status::Ok();
}

}  // namespace trailmap::aggregator
