#include "aggregator/store/backfill_driver.h"

#include <rocksdb/write_batch.h>

#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "aggregator/store/aggregates.h"
#include "aggregator/store/catalog.h"
#include "aggregator/store/database.h"
#include "aggregator/store/encoding_merge_operator.h"
#include "aggregator/store/rollup_driver.h"
#include "core/clock.h"
#include "core/failpoint.h"
#include "core/log.h"

namespace trailmap::aggregator {
namespace {

std::string FieldList(const std::vector<std::string>& fields) {
  std::string out;
  for (const std::string& f : fields)
    out += (out.empty() ? "" : ", ") + (f.empty() ? "(fleet)" : f);
  return out;
}

int64_t MinuteAfter(int64_t second) {
  if (second >= INT64_MAX - kRollupMinute) return INT64_MAX;
  if (second < INT64_MIN + kRollupMinute) return INT64_MIN;
  return BucketStart(second, kRollupMinute) + kRollupMinute;
}

}  // namespace

BackfillDriver::BackfillDriver(const StoreOptions& options, Database& db, const Catalog& catalog,
                               Aggregates& aggregates, RollupDriver& rollups)
    : options_(options), db_(db), catalog_(catalog), aggregates_(aggregates), rollups_(rollups) {}

Status BackfillDriver::Begin(int64_t newest_through) {
  if (Status a = MarkAggregates(); !a.ok()) return a;
  return StartBackfill(newest_through);
}

void BackfillDriver::Start() {
  if (options_.rollup_interval_ms <= 0 || !backfilling_) return;
  thread_.Start("aggregate backfill", std::chrono::milliseconds(options_.rollup_interval_ms),
                [this] {
                  // Half a second a pass, so the rollups keep their pace beside it.
                  Result<size_t> b = Backfill(SIZE_MAX, std::chrono::milliseconds(500));
                  if (!b.ok()) {
                    Log("aggregate backfill: " + b.status().ToString() + "; retried in a second");
                  }
                  return backfilling_.load(std::memory_order_relaxed);
                });
}

void BackfillDriver::Stop() { thread_.Stop(); }

Status BackfillDriver::MarkAggregates() {
  // A store with no host yet holds nothing an aggregate could lack: its aggregates are complete.
  rocksdb::WriteBatch wb;
  for (const std::string& key : aggregates_.CompleteMarkers(catalog_.host_count() == 0)) {
    wb.Put(db_.meta(), key, "");
  }
  if (wb.Count() > 0) {
    if (rocksdb::Status s = db_.db()->Write(rocksdb::WriteOptions(), &wb); !s.ok()) {
      return FromRocks(s, "marking the aggregates complete");
    }
  }
  for (const std::string& field : aggregates_.Incomplete()) {
    Log("aggregate " + field +
        " is written from now on but not read until what this store held before it was "
        "configured is backfilled" +
        (options_.aggregates.backfill ? "" : " (not while started with --no-backfill)") +
        " (aggregator/store/aggregates_backfill.h)");
  }
  return Status::Ok();
}

Status BackfillDriver::StartBackfill(int64_t newest_through) {
  const std::vector<std::string> fields = aggregates_.IncompleteFields();
  std::string held;
  rocksdb::Status got = db_.db()->Get(rocksdb::ReadOptions(), db_.meta(), kBackfillKey, &held);
  if (!got.ok() && !got.IsNotFound()) return FromRocks(got, "reading the aggregate backfill");
  if (fields.empty() || !options_.aggregates.backfill) return Status::Ok();
  if (got.ok()) {
    Result<BackfillState> state = DecodeBackfillState(held);
    if (!state.ok()) return Status::Corruption("meta: " + state.status().message());
    if (state->fields == fields) {
      state_ = std::move(state).value();
      left_ = state_->total - std::min(state_->done, state_->total);
      backfilling_ = true;
      Log("aggregate backfill of " + FieldList(fields) + ": resumed at minute " +
          std::to_string(state_->minute) + ", " + std::to_string(state_->done) + " of " +
          std::to_string(state_->total) + " minutes done");
      return Status::Ok();
    }
    // Other aggregates than when it began: begin again for these (a minute redone is harmless).
  }

  BackfillState state;
  state.fields = fields;
  state.through = newest_through;
  // Each metric's first second in each histogram family (aggregates excluded).
  std::array<std::map<uint32_t, int64_t>, kHistogramResolutionCount> first;
  DataKey key;
  for (size_t r = 0; r < kHistogramResolutionCount; ++r) {
    std::unique_ptr<rocksdb::Iterator> it(
        db_.db()->NewIterator(rocksdb::ReadOptions(), db_.hist(r)));
    for (it->SeekToFirst(); it->Valid();) {
      if (!DecodeDataKey(View(it->key()), &key)) {
        return Status::Corruption(std::string(kHistogramResolutions[r].family) + ": key of " +
                                  std::to_string(it->key().size()) + " bytes");
      }
      if (key.metric & kAggregateMetricBit) break;
      first[r][key.metric] = key.second;
      if (r == 0) {  // and the newest second in `hist` (a store older than 'T' has none)
        std::unique_ptr<rocksdb::Iterator> last(
            db_.db()->NewIterator(rocksdb::ReadOptions(), db_.hist(0)));
        last->SeekForPrev(DataKeyPrefix(key.metric + 1, INT64_MIN));
        DataKey newest;
        if (last->Valid() && DecodeDataKey(View(last->key()), &newest) &&
            newest.metric == key.metric) {
          state.through = std::max(state.through, newest.second);
        }
      }
      it->Seek(DataKeyPrefix(key.metric + 1, INT64_MIN));
    }
    if (!it->status().ok()) return FromRocks(it->status(), "reading the histogram families");
  }
  // From the beginning when `hist` holds every metric's whole history and none of it is near the
  // 1 s retention's edge; else from the first minute where that holds (aggregates_backfill.h).
  const int64_t retention = options_.retention_seconds[0];
  const int64_t edge =
      retention > 0 ? trailmap::NowSeconds(options_.clock) - retention + 3600 : INT64_MIN;
  bool covered = true;
  int64_t from = edge == INT64_MIN ? INT64_MIN : MinuteAfter(edge - 1);
  for (size_t r = 0; r < kHistogramResolutionCount; ++r) {
    for (const auto& [metric, second] : first[r]) {
      auto in_hist = first[0].find(metric);
      if (in_hist == first[0].end()) {  // only in the rollups: complete from after its data
        covered = false;
        from = std::max(from, MinuteAfter(state.through));
        continue;
      }
      const uint32_t span = kHistogramResolutions[r].seconds;
      if (second < BucketStart(in_hist->second, span) || in_hist->second < edge) covered = false;
      from = std::max(from, MinuteAfter(in_hist->second));
    }
  }
  state.complete_from = covered ? INT64_MIN : from;
  state.minute = state.complete_from;

  // Count the minutes to write, for the progress log and the self-metric.
  std::unique_ptr<rocksdb::Iterator> it(db_.db()->NewIterator(rocksdb::ReadOptions(), db_.hist(0)));
  for (const auto& [metric, second] : first[0]) {
    for (it->Seek(DataKeyPrefix(metric, state.minute)); it->Valid();) {
      if (!DecodeDataKey(View(it->key()), &key)) return Status::Corruption("hist: bad key");
      if (key.metric != metric || key.second > state.through) break;
      ++state.total;
      it->Seek(DataKeyPrefix(metric, MinuteAfter(key.second)));
    }
    if (!it->status().ok()) return FromRocks(it->status(), "reading hist");
  }

  rocksdb::WriteBatch wb;
  wb.Put(db_.meta(), kBackfillKey, EncodeBackfillState(state));
  rocksdb::WriteOptions synced;
  synced.sync = true;
  if (rocksdb::Status w = db_.Write(synced, &wb); !w.ok()) {
    return FromRocks(w, "writing the aggregate backfill's state");
  }
  Log("aggregate backfill of " + FieldList(fields) + ": " + std::to_string(state.total) +
      " minutes of hist to read" +
      (covered ? std::string(", then read for any range")
               : ", then read for ranges from second " + std::to_string(state.complete_from) +
                     " (older seconds are only in the rollups or near the 1 s retention)"));
  left_ = state.total;
  state_ = std::move(state);
  backfilling_ = true;
  return Status::Ok();
}

Result<size_t> BackfillDriver::Backfill(size_t max_minutes, std::chrono::milliseconds budget) {
  std::lock_guard one_at_a_time(mu_);
  const auto deadline = std::chrono::steady_clock::now() + budget;
  size_t written = 0;
  while (state_ && written < max_minutes) {
    if (budget.count() > 0 && std::chrono::steady_clock::now() >= deadline) break;
    if (thread_.stopping()) break;
    Result<std::optional<std::pair<uint32_t, int64_t>>> next = NextMinute();
    if (!next.ok()) return next.status();
    if (!*next) {
      if (Status f = Finish(); !f.ok()) return f;
      break;
    }
    Result<bool> done = BackfillMinute((*next)->first, (*next)->second);
    if (!done.ok()) {
      db_.NoteError("aggregate backfill, minute " + std::to_string((*next)->second) + " of " +
                    MetricName(catalog_, (*next)->first) + ": " + done.status().ToString());
      return done.status();
    }
    if (*done) ++written;
  }
  return written;
}

Result<std::optional<std::pair<uint32_t, int64_t>>> BackfillDriver::NextMinute() const {
  const BackfillState& state = *state_;
  std::unique_ptr<rocksdb::Iterator> it(db_.db()->NewIterator(rocksdb::ReadOptions(), db_.hist(0)));
  uint32_t metric = state.metric;
  int64_t from = std::max(state.minute, state.complete_from);
  DataKey key;
  for (;;) {
    it->Seek(DataKeyPrefix(metric, from));
    if (!it->Valid()) break;
    if (!DecodeDataKey(View(it->key()), &key)) return Status::Corruption("hist: bad key");
    if (key.metric & kAggregateMetricBit) break;  // aggregates sort after every metric
    if (key.metric != metric) {
      metric = key.metric;
      from = state.complete_from;
      continue;
    }
    if (key.second > state.through) {
      ++metric;
      from = state.complete_from;
      continue;
    }
    return std::optional<std::pair<uint32_t, int64_t>>(
        std::pair{metric, BucketStart(key.second, kRollupMinute)});
  }
  if (!it->status().ok()) return FromRocks(it->status(), "reading hist");
  return std::optional<std::pair<uint32_t, int64_t>>();
}

Result<bool> BackfillDriver::BackfillMinute(uint32_t metric, int64_t minute) {
  const rocksdb::Snapshot* snapshot = nullptr;
  std::optional<Cluster> cluster;
  uint64_t generation = 0;
  {
    // No write is in flight: the snapshot holds every write before the generation read here.
    auto lock = db_.LockWrites();
    minutes_.Touch(metric, minute);
    generation = minutes_.Generation(metric, minute);
    cluster = aggregates_.cluster();
    snapshot = db_.db()->GetSnapshot();
  }
  const std::vector<std::string>& fields = state_->fields;
  // Per host its name and labels, per (host, epoch) its owner list, per (host, series) values.
  std::unordered_map<uint32_t, HostRecord> hosts;
  std::map<std::pair<uint32_t, size_t>, std::string> owners_of;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::string>> values_of;
  const auto classify = [&](const DataKey& k, std::string* owners,
                            std::vector<std::string>* values) {
    auto host = hosts.find(k.host);
    if (host == hosts.end()) host = hosts.emplace(k.host, catalog_.Host(k.host)).first;
    const size_t epoch =
        cluster ? static_cast<size_t>(&cluster->EpochAt(k.second) - cluster->epochs.data()) : 0;
    auto o = owners_of.find({k.host, epoch});
    if (o == owners_of.end()) {
      o = owners_of
              .emplace(std::pair{k.host, epoch},
                       Aggregates::OwnerList(cluster, host->second.name, k.second))
              .first;
    }
    *owners = o->second;
    auto v = values_of.find({k.host, k.series});
    if (v == values_of.end()) {
      const std::string series_fields = catalog_.Series(k.series).fields;
      std::vector<std::string> texts;
      for (const std::string& f : fields) {
        texts.push_back(f.empty() ? ""
                                  : Aggregates::ValueText(f, series_fields, host->second.labels));
      }
      v = values_of.emplace(std::pair{k.host, k.series}, std::move(texts)).first;
    }
    *values = v->second;
  };
  AggregateSums sums;
  uint64_t saturated = 0;
  Status computed = ComputeAggregateMinute(db_.db(), snapshot, db_.hist(0), metric, minute,
                                           classify, &sums, &saturated);
  db_.db()->ReleaseSnapshot(snapshot);
  if (!computed.ok()) return computed;
  if (saturated > 0) db_.CountSaturated(saturated);
  if (TRAILMAP_FAILPOINT("backfill.minute")) return Status::IOError("failpoint backfill.minute");
  if (options_.before_backfill_write) options_.before_backfill_write(metric, minute);

  auto lock = db_.LockWrites();
  auto view = db_.LockView();
  if (!minutes_.Unchanged(metric, minute, generation)) return false;  // redone
  const Aggregates::Mark mark = aggregates_.mark();
  Aggregates::MetaPuts ids;
  rocksdb::WriteBatch wb;
  char key[kDataKeySize];
  std::string encoded;
  const uint32_t aggregate = metric | kAggregateMetricBit;
  for (const auto& [cell, histogram] : sums) {
    const auto& [second, owners, value] = cell;
    const uint32_t group = aggregates_.InternGroup(owners, &ids);
    const uint32_t value_id = value.empty() ? 0 : aggregates_.InternValue(value, &ids);
    EncodeDataKey(DataKey{aggregate, second, group, value_id}, key);
    encoded.clear();
    histogram.EncodeTo(&encoded);
    wb.Put(db_.hist(0), rocksdb::Slice(key, kDataKeySize), encoded);
  }
  for (const auto& [k, v] : ids) wb.Put(db_.meta(), k, v);
  // The aggregate's rollups are redone from `hist` (marked before the write, as ingest does).
  rollups_.minutes().Touch(aggregate, minute);
  wb.Put(db_.meta(), PendingRollupKey(aggregate, minute), "");
  BackfillState next = *state_;
  next.metric = metric;
  next.minute = minute + kRollupMinute;
  ++next.done;
  wb.Put(db_.meta(), kBackfillKey, EncodeBackfillState(next));
  rocksdb::WriteOptions unsynced;  // lost with the cursor, so redone
  if (rocksdb::Status w = db_.Write(unsynced, &wb); !w.ok()) {
    aggregates_.Rollback(mark);
    return FromRocks(w, "writing backfilled aggregates");
  }
  minutes_.Drop(metric, minute);
  const uint64_t total = std::max(next.total, next.done);
  left_ = total - next.done;
  if (next.done * 10 / std::max<uint64_t>(total, 1) !=
      state_->done * 10 / std::max<uint64_t>(total, 1)) {
    Log("aggregate backfill of " + FieldList(next.fields) + ": " + std::to_string(next.done) +
        " of " + std::to_string(total) + " minutes (" +
        std::to_string(next.done * 100 / std::max<uint64_t>(total, 1)) + "%)");
  }
  state_ = std::move(next);
  return true;
}

Status BackfillDriver::Finish() {
  const BackfillState& state = *state_;
  rocksdb::WriteBatch wb;
  const std::string from =
      state.complete_from == INT64_MIN ? "" : EncodeSecond(state.complete_from);
  for (const std::string& field : state.fields)
    wb.Put(db_.meta(), AggregateCompleteKey(field), from);
  wb.Delete(db_.meta(), kBackfillKey);
  rocksdb::WriteOptions synced;
  synced.sync = true;
  {
    auto lock = db_.LockWrites();
    if (rocksdb::Status w = db_.Write(synced, &wb); !w.ok()) {
      return FromRocks(w, "marking the backfilled aggregates complete");
    }
  }
  for (const std::string& field : state.fields)
    aggregates_.MarkComplete(field, state.complete_from);
  Log("aggregate backfill of " + FieldList(state.fields) + ": done, " + std::to_string(state.done) +
      " minutes; read from now on" +
      (state.complete_from == INT64_MIN
           ? std::string(" for any range")
           : " for ranges from second " + std::to_string(state.complete_from)));
  state_.reset();
  backfilling_ = false;
  left_ = 0;
  return Status::Ok();
}

}  // namespace trailmap::aggregator
