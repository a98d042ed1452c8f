#include "aggregator/store/rollup.h"

#include <rocksdb/db.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/histogram.h"

namespace trailmap::aggregator {

bool PendingMinutes::Touch(uint32_t metric, int64_t start) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = minutes_.try_emplace({metric, start});
  it->second.generation = next_generation_++;
  it->second.touched = Clock::now();
  return inserted;
}

bool PendingMinutes::TouchIfPending(uint32_t metric, int64_t start) {
  std::lock_guard lock(mu_);
  auto it = minutes_.find({metric, start});
  if (it == minutes_.end()) return false;
  it->second.generation = next_generation_++;
  it->second.touched = Clock::now();
  return true;
}

std::vector<PendingMinutes::Minute> PendingMinutes::Ready(
    Clock::duration quiet, size_t limit, Clock::time_point now, bool ignore_backoff,
    const std::function<bool(const Minute&)>& skip) const {
  std::vector<Minute> ready;
  std::lock_guard lock(mu_);
  for (const auto& [key, state] : minutes_) {
    if (ready.size() >= limit) break;
    if (quiet.count() > 0 && now - state.touched < quiet) continue;
    if (!ignore_backoff && now < state.retry_after) continue;
    const Minute minute{key.first, key.second, state.generation};
    if (skip && skip(minute)) continue;
    ready.push_back(minute);
  }
  return ready;
}

uint64_t PendingMinutes::Generation(uint32_t metric, int64_t start) const {
  std::lock_guard lock(mu_);
  auto it = minutes_.find({metric, start});
  return it == minutes_.end() ? 0 : it->second.generation;
}

bool PendingMinutes::Unchanged(uint32_t metric, int64_t start, uint64_t generation) const {
  std::lock_guard lock(mu_);
  auto it = minutes_.find({metric, start});
  return it != minutes_.end() && it->second.generation == generation;
}

bool PendingMinutes::Clear(uint32_t metric, int64_t start, uint64_t generation) {
  std::lock_guard lock(mu_);
  auto it = minutes_.find({metric, start});
  if (it == minutes_.end() || it->second.generation != generation) return false;
  minutes_.erase(it);
  return true;
}

bool PendingMinutes::Drop(uint32_t metric, int64_t start) {
  std::lock_guard lock(mu_);
  return minutes_.erase({metric, start}) > 0;
}

uint32_t PendingMinutes::Failed(uint32_t metric, int64_t start, Clock::time_point now) {
  std::lock_guard lock(mu_);
  auto it = minutes_.find({metric, start});
  if (it == minutes_.end()) return 0;
  State& s = it->second;
  ++s.failures;
  Clock::duration backoff = kMaxBackoff;
  if (s.failures <= 9) {
    backoff = std::min<Clock::duration>(std::chrono::seconds(int64_t{1} << (s.failures - 1)),
                                        kMaxBackoff);
  }
  s.retry_after = now + backoff;
  return s.failures;
}

std::vector<int64_t> PendingMinutes::Of(uint32_t metric, int64_t lo, int64_t hi) const {
  std::vector<int64_t> starts;
  std::lock_guard lock(mu_);
  for (auto it = minutes_.lower_bound({metric, BucketStart(lo, span_)});
       it != minutes_.end() && it->first.first == metric && it->first.second < hi; ++it) {
    starts.push_back(it->first.second);
  }
  return starts;
}

size_t PendingMinutes::size() const {
  std::lock_guard lock(mu_);
  return minutes_.size();
}

namespace {

// One second of the minute: an iterator over its keys, in (host, series) order.
struct SecondCursor {
  std::unique_ptr<rocksdb::Iterator> it;
  DataKey key;
  bool valid = false;

  uint64_t Order() const { return (uint64_t{key.host} << 32) | key.series; }
  Status Read() {
    valid = it->Valid();
    if (!valid) return it->status().ok() ? Status::Ok() : Status::IOError(it->status().ToString());
    const rocksdb::Slice k = it->key();
    if (!DecodeDataKey(std::string_view(k.data(), k.size()), &key)) {
      return Status::Corruption("hist: key of " + std::to_string(k.size()) + " bytes");
    }
    return Status::Ok();
  }
};

}  // namespace

namespace {

// Walks `count` buckets of `step` seconds from `start` of `metric` in `family` at `snapshot`, one
// iterator per bucket merged in (host, series) order: value(bucket index, key, value) for every
// stored key of one (host, series), then series_done(host, series) for it.
Status WalkBuckets(rocksdb::DB* db, const rocksdb::Snapshot* snapshot,
                   rocksdb::ColumnFamilyHandle* family, uint32_t metric, int64_t start,
                   uint32_t step, uint32_t count,
                   const std::function<Status(uint32_t bucket, const DataKey& key,
                                              std::string_view value)>& value,
                   const std::function<Status(uint32_t host, uint32_t series)>& series_done) {
  // Bounds first: each iterator's upper bound must stay where it is while the iterator lives.
  std::vector<std::string> uppers;
  std::vector<rocksdb::Slice> upper_slices;
  uppers.reserve(count);
  upper_slices.reserve(count);
  for (uint32_t s = 0; s < count; ++s) {
    uppers.push_back(DataKeyPrefix(metric, start + int64_t{step} * s + 1));
    upper_slices.emplace_back(uppers.back());
  }
  std::vector<SecondCursor> buckets(count);
  for (uint32_t s = 0; s < count; ++s) {
    rocksdb::ReadOptions read_options;
    read_options.snapshot = snapshot;
    read_options.iterate_upper_bound = &upper_slices[s];
    read_options.fill_cache = false;  // read once, just written: do not evict what queries use
    buckets[s].it.reset(db->NewIterator(read_options, family));
    buckets[s].it->Seek(DataKeyPrefix(metric, start + int64_t{step} * s));
    if (Status st = buckets[s].Read(); !st.ok()) return st;
  }
  for (;;) {
    uint64_t next = UINT64_MAX;
    for (const SecondCursor& c : buckets) {
      if (c.valid && c.Order() < next) next = c.Order();
    }
    if (next == UINT64_MAX) return Status::Ok();
    for (uint32_t s = 0; s < count; ++s) {
      SecondCursor& c = buckets[s];
      if (!c.valid || c.Order() != next) continue;
      const rocksdb::Slice v = c.it->value();
      if (Status st = value(s, c.key, {v.data(), v.size()}); !st.ok()) return st;
      c.it->Next();
      if (Status st = c.Read(); !st.ok()) return st;
    }
    const uint32_t host = static_cast<uint32_t>(next >> 32);
    const uint32_t series = static_cast<uint32_t>(next);
    if (Status st = series_done(host, series); !st.ok()) return st;
  }
}

Status Undecodable(std::string_view family, const DataKey& k, const Status& st) {
  return Status::Corruption(std::string(family) + ": second " + std::to_string(k.second) +
                            ", host " + std::to_string(k.host) + ", series " +
                            std::to_string(k.series) + ": " + st.message());
}

}  // namespace

Status ComputeMinuteRollup(rocksdb::DB* db, const rocksdb::Snapshot* snapshot,
                           rocksdb::ColumnFamilyHandle* hist, uint32_t metric, int64_t start,
                           const std::function<Status(size_t resolution, const DataKey& key,
                                                      const std::string& value)>& emit,
                           uint64_t* saturated) {
  const auto count_saturated = [saturated](const Histogram& h) {
    if (saturated && h.saturated()) ++*saturated;
  };
  constexpr size_t kTens = kRollupMinute / 10;
  std::array<Histogram, kTens> tens;
  std::string encoded;
  return WalkBuckets(
      db, snapshot, hist, metric, start, 1, kRollupMinute,
      [&tens](uint32_t s, const DataKey& key, std::string_view value) {
        Status st = tens[s / 10].MergeEncoded(value);
        return st.ok() ? st : Undecodable("hist", key, st);
      },
      [&](uint32_t host, uint32_t series) {
        Histogram minute;
        for (size_t t = 0; t < kTens; ++t) {
          if (tens[t].empty()) continue;
          encoded.clear();
          tens[t].EncodeTo(&encoded);
          const DataKey key{metric, start + static_cast<int64_t>(10 * t), host, series};
          count_saturated(tens[t]);
          if (Status st = emit(1, key, encoded); !st.ok()) return st;
          minute.Merge(tens[t]);  // saturates at kMaxTotalCount, never fails
          tens[t].Clear();
        }
        encoded.clear();
        minute.EncodeTo(&encoded);
        count_saturated(minute);
        return emit(2, DataKey{metric, start, host, series}, encoded);
      });
}

Status ComputeBlockRollup(rocksdb::DB* db, const rocksdb::Snapshot* snapshot,
                          rocksdb::ColumnFamilyHandle* minutes, uint32_t metric, int64_t start,
                          const std::function<Status(const DataKey& key, const std::string& value)>&
                              emit,
                          uint64_t* saturated) {
  Histogram block;
  std::string encoded;
  return WalkBuckets(
      db, snapshot, minutes, metric, start, kRollupMinute, kRollupBlock / kRollupMinute,
      [&block](uint32_t, const DataKey& key, std::string_view value) {
        Status st = block.MergeEncoded(value);  // saturates at kMaxTotalCount, never fails
        return st.ok() ? st : Undecodable("hist_60s", key, st);
      },
      [&](uint32_t host, uint32_t series) {
        encoded.clear();
        block.EncodeTo(&encoded);
        if (saturated && block.saturated()) ++*saturated;
        block.Clear();
        return emit(DataKey{metric, start, host, series}, encoded);
      });
}

}  // namespace trailmap::aggregator
