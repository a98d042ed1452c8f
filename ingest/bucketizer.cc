#include "ingest/bucketizer.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>
#include <utility>

#include "core/batch_split.h"
#include "core/counts.h"

namespace trailmap {
namespace {

// Metric, kind, unit and fields identify a series; '\x1f' cannot occur in any of them.
void SeriesKey(const SeriesDef& s, std::string* key) {
  key->clear();
  key->append(s.metric);
  key->push_back('\x1f');
  key->push_back(static_cast<char>('0' + static_cast<int>(s.kind)));
  key->append(s.unit);
  key->push_back('\x1f');
  key->append(s.fields);
}

// Adds n to a counter; it stops at kMaxTotalCount instead of wrapping.
void Count(uint64_t* counter, uint64_t n) {
  bool saturated = false;
  *counter = SaturatingCountAdd(*counter, n, &saturated);
}

}  // namespace

Batch MakeBatch(CompletedSeconds done, const std::string& host, const FieldSet& labels) {
  Batch batch;
  batch.host = host;
  batch.labels = labels;
  batch.series = std::move(done.series);
  batch.seconds = std::move(done.seconds);
  batch.frames = std::move(done.frames);
  batch.stacks = std::move(done.stacks);
  return batch;
}

std::vector<Batch> MakeBatches(CompletedSeconds done, const std::string& host,
                               const FieldSet& labels, const BatchLimits& limits) {
  return SplitBatch(MakeBatch(std::move(done), host, labels), limits);
}

Bucketizer::Bucketizer(BucketizerOptions options) : options_(options), interner_(options.stacks) {}

Histogram* Bucketizer::FindOrAdd(Second* second, const SeriesDef& series, uint64_t count) {
  SeriesKey(series, &key_);
  if (auto it = second->index.find(key_); it != second->index.end()) {
    last_cell_ = it->second;
    return &second->cells[it->second].histogram;
  }
  size_t& distinct = second->per_metric[series.metric];
  if (distinct < options_.max_series_per_metric) {
    ++distinct;
    second->index.emplace(key_, second->cells.size());
    last_cell_ = second->cells.size();
    second->cells.push_back({series, Histogram()});
    return &second->cells.back().histogram;
  }
  counters_.overflow_events += count;
  SeriesDef overflow{series.metric, series.kind, series.unit, kOverflowFields};
  SeriesKey(overflow, &key_);
  if (auto it = second->index.find(key_); it != second->index.end()) {
    last_cell_ = it->second;
    return &second->cells[it->second].histogram;
  }
  second->index.emplace(key_, second->cells.size());
  last_cell_ = second->cells.size();
  second->cells.push_back({std::move(overflow), Histogram()});
  return &second->cells.back().histogram;
}

void Bucketizer::Add(int64_t unix_second, const SeriesDef& series, uint64_t value, uint64_t count) {
  if (count == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  Histogram* h = nullptr;
  // Fast path: same second and exactly the series of the last event (not its overflow).
  if (last_second_ != nullptr && last_time_ == unix_second &&
      last_second_->cells[last_cell_].series == series) {
    h = &last_second_->cells[last_cell_].histogram;
  } else {
    Second* second = &seconds_[unix_second];
    h = FindOrAdd(second, series, count);
    if (second->cells[last_cell_].series == series) {
      last_second_ = second;
      last_time_ = unix_second;
    } else {
      last_second_ = nullptr;  // went to overflow: keep counting those on the slow path
    }
  }
  if (count > kMaxItemCount - h->count()) {
    Count(&counters_.refused_events, count);
    return;
  }
  Count(&counters_.events, count);
  if (unix_second < taken_before_) Count(&counters_.late_events, count);
  h->Record(value, count);
}

bool Bucketizer::SetScalar(int64_t unix_second, const SeriesDef& series, double value) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!std::isfinite(value)) {
    ++counters_.bad_scalars;
    return false;
  }
  ++counters_.scalars;
  Second* second = &seconds_[unix_second];
  last_second_ = nullptr;  // FindOrAdd moves last_cell_, which must not pair with another second
  FindOrAdd(second, series, 0);
  Cell& cell = second->cells[last_cell_];
  const bool overflow = cell.series.fields != series.fields;
  if (!overflow) {
    cell.scalar = value;
  } else {  // the overflow series: sum
    ++counters_.overflow_scalars;
    cell.scalar = (cell.has_scalar ? cell.scalar : 0) + value;
  }
  cell.has_scalar = true;
  return overflow;
}

void Bucketizer::AddStack(const StackSample& sample) {
  if (sample.count == 0) return;
  const SeriesDef series{sample.metric, MetricKind::kStacks, "samples", sample.fields};
  std::lock_guard<std::mutex> lock(mu_);
  bool truncated = false;
  const uint32_t stack = interner_.Intern(sample.frames, &counters_.truncated_frames, &truncated);
  if (truncated) ++counters_.truncated_stacks;
  Second* second = &seconds_[sample.second];
  FindOrAdd(second, series, sample.count);
  last_second_ = nullptr;  // last_cell_ now names a stacks cell: Add takes the slow path once
  uint64_t& held = second->stack_counts[(uint64_t{last_cell_} << 32) | stack];
  if (sample.count > kMaxItemCount - held) {
    if (held == 0) second->stack_counts.erase((uint64_t{last_cell_} << 32) | stack);
    Count(&counters_.refused_events, sample.count);
    return;
  }
  held += sample.count;
  Count(&counters_.events, sample.count);
  Count(&counters_.stack_samples, sample.count);
  if (sample.second < taken_before_) Count(&counters_.late_events, sample.count);
}

CompletedSeconds Bucketizer::TakeSecondsBefore(int64_t second, size_t max_seconds) {
  std::map<int64_t, Second> taken;
  CompletedSeconds out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto end = seconds_.begin();
    size_t n = 0;
    while (end != seconds_.end() && end->first < second && n < max_seconds) {
      ++end;
      ++n;
    }
    if (n == 0) return {};
    taken_before_ = std::max(taken_before_, std::prev(end)->first + 1);
    taken.insert(std::make_move_iterator(seconds_.begin()), std::make_move_iterator(end));
    seconds_.erase(seconds_.begin(), end);
    last_second_ = nullptr;
    // The definitions of every stack taken; then, if the dictionary is too big, forget what no
    // pending second uses (ids are never reused, so nothing held elsewhere changes meaning).
    std::unordered_set<uint32_t> used;
    for (const auto& [time, sec] : taken) {
      for (const auto& [key, count] : sec.stack_counts) used.insert(static_cast<uint32_t>(key));
    }
    if (!used.empty()) {
      std::vector<uint32_t> ids(used.begin(), used.end());
      std::sort(ids.begin(), ids.end());
      interner_.Define(ids, &out.stacks, &out.frames);
    }
    if (interner_.stack_count() > options_.max_dictionary_stacks) {
      std::unordered_set<uint32_t> pending;
      for (const auto& [time, sec] : seconds_) {
        for (const auto& [key, count] : sec.stack_counts)
          pending.insert(static_cast<uint32_t>(key));
      }
      interner_.Retain(pending);
    }
  }
  // Encoding happens outside the lock so Add is never held up by it.
  std::unordered_map<std::string, uint32_t> table;
  std::string key;
  for (auto& [time, sec] : taken) {
    SecondDelta delta;
    delta.time = time;
    for (Cell& cell : sec.cells) {
      if (cell.histogram.empty() && !cell.has_scalar) continue;
      SeriesKey(cell.series, &key);
      auto [it, added] = table.emplace(key, static_cast<uint32_t>(out.series.size()));
      if (added) out.series.push_back(cell.series);
      if (!cell.histogram.empty()) {
        delta.histograms.push_back({it->second, cell.histogram.Encode()});
      }
      if (cell.has_scalar) delta.scalars.push_back({it->second, cell.scalar});
    }
    if (!sec.stack_counts.empty()) {
      std::vector<std::pair<uint64_t, uint64_t>> counts(sec.stack_counts.begin(),
                                                        sec.stack_counts.end());
      std::sort(counts.begin(), counts.end());
      for (const auto& [cell_and_stack, count] : counts) {
        Cell& cell = sec.cells[cell_and_stack >> 32];
        SeriesKey(cell.series, &key);
        auto [it, added] = table.emplace(key, static_cast<uint32_t>(out.series.size()));
        if (added) out.series.push_back(cell.series);
        delta.stacks.push_back({it->second, static_cast<uint32_t>(cell_and_stack), count});
      }
    }
    if (!delta.histograms.empty() || !delta.scalars.empty() || !delta.stacks.empty()) {
      out.seconds.push_back(std::move(delta));
    }
  }
  return out;
}

BucketizerCounters Bucketizer::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

size_t Bucketizer::pending_seconds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seconds_.size();
}

}  // namespace trailmap
