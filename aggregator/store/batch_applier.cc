#include "aggregator/store/batch_applier.h"

#include <rocksdb/write_batch.h>

#include <algorithm>
#include <climits>

#include "aggregator/store/aggregates.h"
#include "aggregator/store/backfill_driver.h"
#include "aggregator/store/catalog.h"
#include "aggregator/store/database.h"
#include "aggregator/store/rollup_driver.h"
#include "aggregator/store/stack_merge_operator.h"
#include "core/clock.h"
#include "core/log.h"

namespace trailmap::aggregator {

BatchApplier::BatchApplier(const StoreOptions& options, Database& db, Catalog& catalog,
                           Aggregates& aggregates, RollupDriver& rollups, BackfillDriver& backfill)
    : options_(options),
      db_(db),
      catalog_(catalog),
      aggregates_(aggregates),
      rollups_(rollups),
      backfill_(backfill),
      dictionaries_(options.dictionaries) {}

Result<bool> BatchApplier::Restore(std::string_view key, std::string_view value) {
  const char tag = key.empty() ? '\0' : key[0];
  if (tag == 'T' && key.size() == 5) {
    const uint32_t id = GetFixed32BE(key.data() + 1);
    Result<int64_t> second = DecodeSecond(value);
    if (!second.ok()) return second.status();
    std::lock_guard lock(through_mu_);
    if (id >= through_.size()) through_.resize(id + 1, INT64_MIN);
    through_[id] = *second;
    return true;
  }
  if (tag == 'w') {
    Result<WatermarkRecord> r = DecodeWatermarkRecord(value);
    if (!r.ok()) return r.status();
    auto lock = db_.LockWrites();
    const std::string agent(key.substr(1));
    watermarks_[agent] = r->sequence;
    // Not recorded (an older store): idle from now.
    last_seen_[agent] = r->last_seen != 0 ? r->last_seen : trailmap::NowSeconds(options_.clock);
    return true;
  }
  return false;
}

int64_t BatchApplier::NewestThrough() const {
  std::lock_guard lock(through_mu_);
  int64_t newest = INT64_MIN;
  for (int64_t t : through_) newest = std::max(newest, t);
  return newest;
}

size_t BatchApplier::AgentCount() const {
  auto lock = db_.LockWrites();
  return watermarks_.size();
}

Result<size_t> BatchApplier::PruneIdleAgents() {
  if (options_.agent_idle_seconds <= 0) return size_t{0};
  const int64_t before = trailmap::NowSeconds(options_.clock) - options_.agent_idle_seconds;
  auto lock = db_.LockWrites();
  rocksdb::WriteBatch wb;
  std::vector<std::string> idle;
  for (const auto& [agent, seen] : last_seen_) {
    if (seen >= before) continue;
    idle.push_back(agent);
    wb.Delete(db_.meta(), WatermarkKey(agent));
  }
  if (idle.empty()) return size_t{0};
  rocksdb::WriteOptions write_options;
  write_options.sync = options_.sync;
  if (rocksdb::Status w = db_.Write(write_options, &wb); !w.ok()) {
    return FromRocks(w, "deleting " + std::to_string(idle.size()) + " idle watermarks");
  }
  for (const std::string& agent : idle) {
    watermarks_.erase(agent);
    last_seen_.erase(agent);
  }
  agents_pruned_ += idle.size();
  Log("forgot the watermarks of " + std::to_string(idle.size()) + " agent(s) idle for over " +
      std::to_string(options_.agent_idle_seconds) + " s (e.g. " + idle.front() + ")");
  return idle.size();
}

std::vector<HostThrough> BatchApplier::HostsThrough(const CompletenessQuery& query) const {
  std::vector<HostThrough> out;
  std::vector<std::pair<uint32_t, int64_t>> found;
  {
    std::lock_guard lock(through_mu_);
    const auto held = [this](uint32_t id) {
      return id < through_.size() && through_[id] != INT64_MIN;
    };
    if (!query.hosts.empty()) {
      for (const std::string& name : query.hosts) {
        const std::optional<uint32_t> id = catalog_.FindHost(name);
        if (id && held(*id)) found.emplace_back(*id, through_[*id]);
      }
      std::sort(found.begin(), found.end());
      found.erase(std::unique(found.begin(), found.end()), found.end());
    } else {
      for (uint32_t id = 1; id < through_.size(); ++id) {
        if (held(id) && through_[id] < query.before) found.emplace_back(id, through_[id]);
      }
    }
  }
  out.reserve(found.size());
  for (const auto& [id, second] : found) out.push_back({catalog_.Host(id).name, second});
  return out;
}

uint64_t BatchApplier::WatermarkLocked(std::string_view agent) const {
  auto it = watermarks_.find(std::string(agent));
  return it == watermarks_.end() ? 0 : it->second;
}

uint64_t BatchApplier::Watermark(std::string_view agent) const {
  auto lock = db_.LockWrites();
  return WatermarkLocked(agent);
}

std::vector<std::string> BatchApplier::Agents() const {
  auto lock = db_.LockWrites();
  std::vector<std::string> agents;
  agents.reserve(watermarks_.size());
  for (const auto& [agent, watermark] : watermarks_) agents.push_back(agent);
  return agents;
}

namespace {

// The checks ApplyBatches makes before taking the write lock.
Result<std::string> CheckBatch(const Batch& batch) {
  if (batch.agent.empty()) return Status::InvalidArgument("batch without an agent id");
  if (batch.host.empty()) return Status::InvalidArgument("batch without a host");
  Result<std::string> labels = CanonicalFields(batch.labels);
  if (!labels.ok()) return Status::InvalidArgument("labels: " + labels.status().message());
  for (const SecondDelta& second : batch.seconds) {
    for (const HistogramDelta& h : second.histograms) {
      if (h.series >= batch.series.size())
        return Status::InvalidArgument("histogram series past the series list");
    }
    for (const ScalarValue& v : second.scalars) {
      if (v.series >= batch.series.size())
        return Status::InvalidArgument("scalar series past the series list");
    }
    for (const StackCount& c : second.stacks) {
      if (c.series >= batch.series.size())
        return Status::InvalidArgument("stack count series past the series list");
    }
  }
  return labels;
}

}  // namespace

void BatchApplier::CommitLocked(const std::vector<const Batch*>& batches,
                                const std::vector<size_t>& applied,
                                std::vector<std::pair<uint32_t, std::string>>* label_changes) {
  for (size_t i : applied) {
    for (const SecondDelta& second : batches[i]->seconds) {
      int64_t newest = newest_second_.load(std::memory_order_relaxed);
      while (second.time > newest && !newest_second_.compare_exchange_weak(
                                         newest, second.time, std::memory_order_relaxed)) {
      }
    }
  }
  for (auto& [host, host_labels] : *label_changes)
    catalog_.SetHostLabels(host, std::move(host_labels));
  for (auto& [metric, text] : pending_descriptions_)
    catalog_.SetDescription(metric, std::move(text));
  pending_descriptions_.clear();
  {
    std::lock_guard through_lock(through_mu_);
    for (const auto& [host, second] : pending_through_) {
      if (host >= through_.size()) through_.resize(host + 1, INT64_MIN);
      through_[host] = std::max(through_[host], second);
    }
  }
  pending_through_.clear();
}

std::vector<Result<ApplyOutcome>> BatchApplier::ApplyBatches(
    const std::vector<const Batch*>& batches) {
  std::vector<Result<ApplyOutcome>> results;
  std::vector<std::string> labels(batches.size());
  results.reserve(batches.size());
  for (size_t i = 0; i < batches.size(); ++i) {
    Result<std::string> checked = CheckBatch(*batches[i]);
    if (checked.ok()) {
      labels[i] = std::move(checked).value();
      results.emplace_back(ApplyOutcome{});
    } else {
      results.emplace_back(checked.status());
    }
  }

  // Seconds before this are merged into the rollups at once: the 1 s retention (less an hour of
  // slack for the rollup pass) will not keep them to be rolled up later.
  const int64_t direct_before =
      options_.retention_seconds[0] > 0
          ? trailmap::NowSeconds(options_.clock) - options_.retention_seconds[0] + 3600
          : INT64_MIN;
  auto lock = db_.LockWrites();
  // New catalog entries become visible as they are made (so a query can name every id it
  // meets); they, and the watermarks moved below, are taken back if the write fails.
  const Catalog::Mark mark = catalog_.mark();
  const Aggregates::Mark aggregates_mark = aggregates_.mark();
  std::vector<std::pair<std::string, uint64_t>> old_watermarks;
  std::vector<std::pair<uint32_t, std::string>> label_changes;
  rocksdb::WriteBatch wb;
  std::vector<size_t> applied;
  for (size_t i = 0; i < batches.size(); ++i) {
    if (!results[i].ok()) continue;
    const Batch& batch = *batches[i];
    ApplyOutcome& out = *results[i];
    out.watermark = WatermarkLocked(batch.agent);
    out.expected = out.watermark + 1;
    if (batch.sequence <= out.watermark) {
      out.status = Ack::Status::kDuplicate;
      continue;
    }
    if (batch.sequence > out.watermark + 1) {
      out.status = Ack::Status::kOutOfOrder;
      continue;
    }
    // Definitions are learned only from the batch in turn (never from a duplicate or one past a
    // gap), so what an agent may make this store hold is paced by what it may apply.
    dictionaries_.Learn(batch);
    if (Status known = dictionaries_.CheckKnown(batch); !known.ok()) {
      out.status = Ack::Status::kNeedDictionary;
      out.expected = batch.sequence;
      out.reason = known.message();
      continue;
    }
    AppendBatchLocked(batch, labels[i], direct_before, &wb, &out, &label_changes);
    old_watermarks.emplace_back(batch.agent, out.watermark);
    watermarks_[batch.agent] = batch.sequence;  // so the group's next batch of this agent follows
    out.watermark = batch.sequence;
    out.expected = batch.sequence + 1;
    applied.push_back(i);
  }
  if (applied.empty()) {
    pending_descriptions_.clear();
    pending_through_.clear();
    return results;
  }

  rocksdb::WriteOptions write_options;
  write_options.sync = options_.sync;
  if (rocksdb::Status s = db_.Write(write_options, &wb); !s.ok()) {
    pending_descriptions_.clear();
    catalog_.Rollback(mark);
    aggregates_.Rollback(aggregates_mark);
    dictionaries_.ForgetGlobalIds();  // some may name the stacks just taken back
    pending_through_.clear();
    for (auto it = old_watermarks.rbegin(); it != old_watermarks.rend(); ++it) {
      watermarks_[it->first] = it->second;
    }
    const Status failed = FromRocks(s, "writing " + std::to_string(applied.size()) + " batch(es)");
    db_.NoteError(failed.ToString());
    for (size_t i : applied) results[i] = failed;
    return results;
  }
  CommitLocked(batches, applied, &label_changes);
  return results;
}

void BatchApplier::AppendBatchLocked(const Batch& batch, const std::string& labels,
                                     int64_t direct_before, rocksdb::WriteBatch* wb,
                                     ApplyOutcome* out,
                                     std::vector<std::pair<uint32_t, std::string>>* label_changes) {
  bool added = false;
  const uint32_t host = catalog_.FindOrAddHost(batch.host, labels, &added);
  bool labels_changed = false;
  if (added) {
    wb->Put(db_.meta(), HostNameKey(batch.host), EncodeId(host));
    ++out->new_ids;
  } else {
    labels_changed = catalog_.Host(host).labels != labels;
  }
  if (added || labels_changed) {
    wb->Put(db_.meta(), HostIdKey(host), EncodeHostRecord(HostRecord{batch.host, labels}));
  }
  if (labels_changed) label_changes->emplace_back(host, labels);

  std::vector<uint32_t> metric_of(batch.series.size());
  std::vector<uint32_t> series_of(batch.series.size());
  for (size_t i = 0; i < batch.series.size(); ++i) {
    const SeriesDef& def = batch.series[i];
    const MetricRecord record{def.metric, def.kind, def.unit};
    metric_of[i] = catalog_.FindOrAddMetric(record, &added);
    if (added) {
      wb->Put(db_.meta(), MetricNameKey(def.metric), EncodeId(metric_of[i]));
      wb->Put(db_.meta(), MetricIdKey(metric_of[i]), EncodeMetricRecord(record));
      ++out->new_ids;
    }
    AppendDescriptionLocked(metric_of[i], def.description, wb);
    series_of[i] = catalog_.FindOrAddSeries(metric_of[i], def.fields, &added);
    if (added) {
      wb->Put(db_.meta(), SeriesNameKey(metric_of[i], def.fields), EncodeId(series_of[i]));
      wb->Put(db_.meta(), SeriesIdKey(series_of[i]),
              EncodeSeriesRecord(SeriesRecord{metric_of[i], def.fields}));
      ++out->new_ids;
    }
  }

  char key[kDataKeySize];
  // The (metric, minute) pairs this batch marked pending: a batch touches few.
  std::vector<std::pair<uint32_t, int64_t>> marked;
  // Each histogram series' aggregate values (aggregates.h), found once per batch.
  std::vector<std::vector<uint32_t>> values_of(batch.series.size());
  Aggregates::MetaPuts aggregate_ids;
  const int64_t block_direct_before = BlockDirectBefore();
  for (const SecondDelta& second : batch.seconds) {
    const int64_t minute = BucketStart(second.time, kRollupMinute);
    const bool direct = second.time < direct_before;
    // One histogram into the key (metric, second, key_host, key_series) and its rollups.
    auto merge = [&](uint32_t metric, uint32_t key_host, uint32_t key_series,
                     const std::string& encoded) {
      // A minute the aggregate backfill is reading: it must see this write or redo the minute.
      if (!(metric & kAggregateMetricBit)) backfill_.NoteWrite(metric, minute);
      EncodeDataKey(DataKey{metric, second.time, key_host, key_series}, key);
      wb->Merge(db_.hist(0), rocksdb::Slice(key, kDataKeySize), AsSlice(encoded));
      if (direct) {
        for (size_t r = 1; r < kHistogramResolutionCount; ++r) {
          const int64_t bucket = BucketStart(second.time, kHistogramResolutions[r].seconds);
          EncodeDataKey(DataKey{metric, bucket, key_host, key_series}, key);
          wb->Merge(db_.hist(r), rocksdb::Slice(key, kDataKeySize), AsSlice(encoded));
        }
        // A pass reading this minute from an older snapshot must not Put over these operands.
        rollups_.minutes().TouchIfPending(metric, minute);
        rollups_.blocks().TouchIfPending(metric, BucketStart(second.time, kRollupBlock));
      } else if (std::find(marked.begin(), marked.end(), std::pair{metric, minute}) ==
                 marked.end()) {
        // Marked before the write, so a query whose snapshot holds this write sees it pending.
        rollups_.minutes().Touch(metric, minute);
        wb->Put(db_.meta(), PendingRollupKey(metric, minute), "");
        marked.emplace_back(metric, minute);
      }
      if (!direct && second.time < block_direct_before) {
        AppendLateBlockLocked(DataKey{metric, second.time, key_host, key_series}, encoded, wb);
      }
    };
    const bool aggregated = options_.aggregates.enabled && !second.histograms.empty();
    const uint32_t group =
        aggregated ? aggregates_.GroupFor(batch.host, second.time, &aggregate_ids) : 0;
    for (const HistogramDelta& h : second.histograms) {
      const uint32_t metric = metric_of[h.series];
      merge(metric, host, series_of[h.series], h.encoded);
      ++out->histograms;
      if (!aggregated) continue;
      std::vector<uint32_t>& values = values_of[h.series];
      if (values.empty()) {
        aggregates_.ValuesFor(batch.series[h.series].fields, labels, &values, &aggregate_ids);
      }
      for (uint32_t value : values) merge(metric | kAggregateMetricBit, group, value, h.encoded);
    }
    for (const ScalarValue& v : second.scalars) {
      EncodeDataKey(DataKey{metric_of[v.series], second.time, host, series_of[v.series]}, key);
      wb->Put(db_.scalar(), rocksdb::Slice(key, kDataKeySize), EncodeScalar(v.value));
      ++out->scalars;
    }
    AppendStacksLocked(batch, second, host, metric_of, series_of, wb, out);
  }
  for (const auto& [k, v] : aggregate_ids) wb->Put(db_.meta(), k, v);
  if (!batch.seconds.empty()) {
    int64_t newest = INT64_MIN;
    for (const SecondDelta& second : batch.seconds) newest = std::max(newest, second.time);
    auto [through, fresh] = pending_through_.try_emplace(host, INT64_MIN);
    if (fresh) {
      std::lock_guard through_lock(through_mu_);
      if (host < through_.size()) through->second = through_[host];
    }
    if (newest > through->second) {
      through->second = newest;
      wb->Put(db_.meta(), HostThroughKey(host), EncodeSecond(newest));
    }
  }
  const int64_t now = trailmap::NowSeconds(options_.clock);
  wb->Put(db_.meta(), WatermarkKey(batch.agent), EncodeWatermark(batch.sequence, now));
  last_seen_[batch.agent] = now;
}

void BatchApplier::AppendStacksLocked(const Batch& batch, const SecondDelta& second, uint32_t host,
                                      const std::vector<uint32_t>& metric_of,
                                      const std::vector<uint32_t>& series_of,
                                      rocksdb::WriteBatch* wb, ApplyOutcome* out) {
  if (second.stacks.empty()) return;
  // One operand per series: its counts by global stack id.
  std::unordered_map<uint32_t, StackCounts> by_series;
  StackDictionaries::AgentView agent = dictionaries_.Find(batch.agent);
  for (const StackCount& c : second.stacks) {
    uint32_t* global = agent.GlobalId(c.stack);  // known: CheckKnown passed
    if (*global == 0) {
      const std::string folded = agent.Folded(c.stack);
      bool added = false;
      *global = catalog_.FindOrAddStack(folded, &added);
      if (added) {
        wb->Put(db_.meta(), StackTextKey(folded), EncodeId(*global));
        wb->Put(db_.meta(), StackIdKey(*global), folded);
        ++out->new_ids;
      }
    }
    by_series[c.series].emplace_back(*global, c.count);
  }
  char key[kDataKeySize];
  const int64_t minute = second.time - ((second.time % 60) + 60) % 60;
  for (auto& [series, counts] : by_series) {
    const std::string value = EncodeUnsortedStackCounts(std::move(counts));
    EncodeDataKey(DataKey{metric_of[series], second.time, host, series_of[series]}, key);
    wb->Merge(db_.stacks(), rocksdb::Slice(key, kDataKeySize), value);
    EncodeDataKey(DataKey{metric_of[series], minute, host, series_of[series]}, key);
    wb->Merge(db_.stacks_60s(), rocksdb::Slice(key, kDataKeySize), value);
    ++out->stack_values;
  }
}

void BatchApplier::AppendDescriptionLocked(uint32_t metric, const std::string& description,
                                           rocksdb::WriteBatch* wb) {
  if (description.empty()) return;
  auto pending = std::find_if(pending_descriptions_.begin(), pending_descriptions_.end(),
                              [metric](const auto& p) { return p.first == metric; });
  const std::string current =
      pending != pending_descriptions_.end() ? pending->second : catalog_.Description(metric);
  if (current == description) return;
  wb->Put(db_.meta(), MetricDescriptionKey(metric), description);
  if (pending != pending_descriptions_.end()) {
    pending->second = description;
  } else {
    pending_descriptions_.emplace_back(metric, description);
  }
}

int64_t BatchApplier::BlockDirectBefore() const {
  const int64_t retention = options_.retention_seconds[kBlockSource];
  return retention > 0 ? trailmap::NowSeconds(options_.clock) - retention + 3600 : INT64_MIN;
}

void BatchApplier::AppendLateBlockLocked(const DataKey& second, std::string_view encoded,
                                         rocksdb::WriteBatch* wb) {
  const int64_t block = BucketStart(second.second, kRollupBlock);
  char key[kDataKeySize];
  EncodeDataKey(DataKey{second.metric, block, second.host, second.series}, key);
  wb->Merge(db_.hist(kBlockFamily), rocksdb::Slice(key, kDataKeySize), AsSlice(encoded));
  // A pass reading this block from an older snapshot must not Put over this operand.
  rollups_.blocks().TouchIfPending(second.metric, block);
}

Result<ApplyOutcome> BatchApplier::SkipRejected(std::string_view agent, uint64_t sequence) {
  if (agent.empty() || sequence == 0) {
    return Status::InvalidArgument("a rejected batch without an agent id or sequence");
  }
  auto lock = db_.LockWrites();
  ApplyOutcome out;
  out.status = Ack::Status::kRejected;
  out.watermark = WatermarkLocked(agent);
  out.expected = out.watermark + 1;
  if (sequence > out.expected) {
    out.status = Ack::Status::kOutOfOrder;  // not judged before its turn
    return out;
  }
  if (sequence < out.expected) return out;  // judged before; nothing moves
  rocksdb::WriteOptions write_options;
  write_options.sync = options_.sync;
  const int64_t now = trailmap::NowSeconds(options_.clock);
  rocksdb::WriteBatch wb;
  wb.Put(db_.meta(), WatermarkKey(agent), EncodeWatermark(sequence, now));
  rocksdb::Status s = db_.Write(write_options, &wb);
  if (!s.ok()) return FromRocks(s, "writing watermark of " + std::string(agent));
  watermarks_[std::string(agent)] = sequence;
  last_seen_[std::string(agent)] = now;
  out.watermark = sequence;
  out.expected = sequence + 1;
  return out;
}

}  // namespace trailmap::aggregator
