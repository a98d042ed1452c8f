#include "aggregator/store/store.h"

#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <filesystem>
#include <set>

#include "aggregator/store/histogram_merge_operator.h"
#include "aggregator/scan/histogram_query.h"
#include "aggregator/store/keys.h"
#include "aggregator/store/retention_filter.h"
#include "aggregator/store/rocksdb_log.h"
#include "aggregator/scan/scalar_query.h"
#include "aggregator/store/stack_merge_operator.h"
#include "aggregator/scan/stack_query.h"
#include "aggregator/store/store_handles.h"
#include "core/clock.h"
#include "core/failpoint.h"
#include "core/log.h"

namespace trailmap::aggregator {

namespace {

rocksdb::CompressionType Best(rocksdb::CompressionType wanted) {
  const auto supported = rocksdb::GetSupportedCompressions();
  if (std::find(supported.begin(), supported.end(), wanted) != supported.end()) return wanted;
  return rocksdb::kNoCompression;
}

// Every column family. Adding one is one line here (and a handle in Handles if code names it).
enum class FamilyMerge { kNone, kHistogram, kStacks };
struct FamilySpec {
  const char* name;
  uint32_t resolution;       // histogram families: seconds per key; 0 = not a histogram family
  size_t memtable_quarters;  // memtable = write_buffer_mb * quarters / 4
  FamilyMerge merge = FamilyMerge::kNone;
};
constexpr FamilySpec kFamilies[] = {
    {"default", 0, 1},
    {"hist", 1, 4, FamilyMerge::kHistogram},
    {"hist_10s", 10, 2,
     FamilyMerge::kHistogram},  // a tenth of the keys of `hist`, as many operands
    {"hist_60s", 60, 2, FamilyMerge::kHistogram},
    {"hist_600s", 600, 1, FamilyMerge::kHistogram},  // a tenth of the keys of `hist_60s`
    {"scalar", 0, 1},
    {"meta", 0, 1},
    {"stacks", 0, 1, FamilyMerge::kStacks},
    {"stacks_60s", 0, 1, FamilyMerge::kStacks},
};

// A data family's seconds per key and retention (0 = forever); {0, 0} for the others.
std::pair<uint32_t, int64_t> Retention(const StoreOptions& o, const FamilySpec& spec) {
  for (size_t i = 0; i < kHistogramResolutionCount; ++i) {
    if (kHistogramResolutions[i].seconds == spec.resolution) {
      return {spec.resolution, o.retention_seconds[i]};
    }
  }
  const std::string_view name = spec.name;
  if (name == "scalar") return {1, o.scalar_retention_seconds};
  if (name == "stacks") return {1, o.stacks_retention_seconds};
  if (name == "stacks_60s") return {60, o.stacks_60s_retention_seconds};
  return {0, 0};
}

// Compression per family, chosen by measurement (docs/benchmarks-log.md, "Bytes on disk and long
// ranges", bench/storage_bench: 100 hosts x 2 series x 6 h of the fleet model, every
// family rewritten per codec). SST bytes per key, lz4 / zstd / zstd with a 16 KiB dictionary:
// hist 122 / 84 / 79, hist_10s 363 / 231 / 216, hist_60s 633 / 417 / 400, hist_600s 1121 / 778
// / 746; rewriting with zstd cost ~1.4-2x the CPU of lz4, and a dictionary ~1.3x more again.
//   - `hist` and `hist_10s` (and the other families) are written at the ingest rate and kept
//     days: lz4 above the bottommost level, where data is rewritten soon, and zstd at the
//     bottommost, which holds ~90% of it (dynamic level sizes). The dictionary's 5-7% is not
//     worth its compaction CPU there: on a 2-core box compaction is what limits ingest.
//   - `hist_60s` and `hist_600s` are written by the rollup pass at 1/60 and 1/600 of the ingest
//     key rate and kept 90 days and 2 years (at 2 years `hist_600s` is the largest family per
//     host-series): zstd at every level, with a dictionary trained per SST file (4-5% smaller for
//     a compaction cost that is small at their write rate).
void SetCompression(const FamilySpec& spec, rocksdb::ColumnFamilyOptions* cf) {
  if (spec.merge != FamilyMerge::kHistogram || spec.resolution < kRollupMinute) {
    cf->compression = Best(rocksdb::kLZ4Compression);
    cf->bottommost_compression = Best(rocksdb::kZSTD);
    return;
  }
  cf->compression = Best(rocksdb::kZSTD);
  cf->bottommost_compression = cf->compression;
  if (cf->compression != rocksdb::kZSTD) return;
  cf->compression_opts.max_dict_bytes = 16 << 10;                // one block's worth
  cf->compression_opts.zstd_max_train_bytes = 100 * (16 << 10);  // samples to train it on
  cf->bottommost_compression_opts = cf->compression_opts;
  cf->bottommost_compression_opts.enabled = true;
}

rocksdb::ColumnFamilyOptions FamilyOptions(const StoreOptions& o, const FamilySpec& spec,
                                           const std::shared_ptr<rocksdb::Cache>& cache,
                                           const std::shared_ptr<MergeCounters>& merges) {
  rocksdb::ColumnFamilyOptions cf;
  cf.write_buffer_size = (o.write_buffer_mb << 20) * spec.memtable_quarters / 4;
  cf.max_write_buffer_number = 3;
  cf.level_compaction_dynamic_level_bytes = true;
  SetCompression(spec, &cf);
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = cache;
  table.block_size = 16 << 10;  // scans dominate: bigger blocks, fewer index entries
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  if (spec.merge == FamilyMerge::kStacks) {
    cf.merge_operator = std::make_shared<StackMergeOperator>(merges);
    cf.max_successive_merges = o.max_successive_merges;
  }
  if (spec.merge == FamilyMerge::kHistogram) {
    cf.merge_operator = std::make_shared<HistogramMergeOperator>(merges);
    cf.max_successive_merges = o.max_successive_merges;
  }
  const auto [span, retention] = Retention(o, spec);
  if (retention > 0) {
    cf.compaction_filter_factory =
        std::make_shared<RetentionFilterFactory>(spec.name, span, retention, o.clock);
    cf.periodic_compaction_seconds = 86400;  // files nothing rewrites still age out
  }
  return cf;
}

// meta: the rollup families hold every `hist` key (written when Open created or backfilled them).
const std::string kRollupMarkerKey = "Rollups";
// meta: `hist_600s` holds every block of `hist_60s`, or the block is marked (the same for blocks).
const std::string kBlockMarkerKey = "Rollups600";

// The families one rollup stage reads and writes (rollup.h): minutes from `hist`, blocks from
// `hist_60s`.
constexpr size_t kMinuteSource = 0, kBlockSource = 2, kBlockFamily = 3;
static_assert(kHistogramResolutions[kBlockSource].seconds == kRollupMinute);
static_assert(kHistogramResolutions[kBlockFamily].seconds == kRollupBlock);

}  // namespace

Store::Store(const StoreOptions& options, std::unique_ptr<Handles> handles,
             std::shared_ptr<BackgroundErrors> background_errors)
    : options_(options),
      db_(std::move(handles)),
      aggregates_(options.aggregates),
      dictionaries_(options.dictionaries),
      background_errors_(std::move(background_errors)) {}

uint64_t Store::SaturatedMerges() const {
  return merges_->saturated.load(std::memory_order_relaxed);
}

Store::~Store() {
  stop_warming_.store(true, std::memory_order_relaxed);
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (warm_thread_.joinable()) warm_thread_.join();
  if (rollup_thread_.joinable()) rollup_thread_.join();
}

namespace {

int64_t NowSeconds(const StoreOptions& o) { return trailmap::NowSeconds(o.clock); }

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(const std::string& dir, const StoreOptions& options) {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;  // a database from before a family existed
  db_options.max_background_jobs = options.background_jobs;
  // RocksDB's LOG through a logger a full disk cannot stop (aggregator/store/rocksdb_log.h).
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  if (made) return Status::IOError("creating " + dir + ": " + made.message());
  db_options.info_log = std::make_shared<RocksDbLog>(dir + "/LOG");
  db_options.max_total_wal_size = 256ull << 20;
  db_options.bytes_per_sync = 1 << 20;
  auto background_errors = std::make_shared<BackgroundErrors>();
  db_options.listeners.push_back(background_errors);

  auto cache = rocksdb::NewLRUCache(options.block_cache_mb << 20);
  auto merges = std::make_shared<MergeCounters>();
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const FamilySpec& spec : kFamilies) {
    families.emplace_back(spec.name, FamilyOptions(options, spec, cache, merges));
  }
  auto handles = std::make_unique<Handles>();
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, dir, families, &handles->all, &db);
  if (!s.ok()) return FromRocks(s, "opening " + dir);
  handles->db.reset(db);
  for (size_t i = 0; i < kHistogramResolutionCount; ++i) {
    handles->hist[i] = handles->Named(kHistogramResolutions[i].family);
  }
  handles->scalar = handles->Named("scalar");
  handles->meta = handles->Named("meta");
  handles->stacks = handles->Named("stacks");
  handles->stacks_60s = handles->Named("stacks_60s");

  std::unique_ptr<Store> store(
      new Store(options, std::move(handles), std::move(background_errors)));
  store->dir_ = dir;
  store->merges_ = std::move(merges);
  if (Status l = store->Load(); !l.ok()) return l;
  if (Status a = store->MarkAggregates(); !a.ok()) return a;
  if (Status a = store->StartBackfill(); !a.ok()) return a;
  if (Status b = store->MarkOldMinutesIfNeeded(); !b.ok()) return b;
  if (Status b = store->MarkOldBlocksIfNeeded(); !b.ok()) return b;
  // Before any batch can come: an agent back after its idle time is new (store.h).
  if (Result<size_t> p = store->PruneIdleAgents(); !p.ok()) return p.status();
  if (options.rollup_interval_ms > 0) {
    Store* self = store.get();
    store->rollup_thread_ = std::thread([self] { self->RollupLoop(); });
  }
  if (options.warm_cache_seconds > 0) {
    Store* self = store.get();
    store->warm_thread_ = std::thread([self] { self->WarmCache(); });
  } else {
    store->cache_warmed_.store(true, std::memory_order_release);
  }
  return store;
}

void Store::WarmCache() {
  // Below the ingest and query threads: only what they leave of the cores.
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
  const auto started = std::chrono::steady_clock::now();
  const auto seconds =
      static_cast<int64_t>(std::min<size_t>(options_.warm_cache_seconds, INT32_MAX));
  const uint64_t bound = (uint64_t{options_.block_cache_mb} << 20) / 2;
  const auto cache_bytes = [this] {
    uint64_t used = 0;
    db_->db->GetIntProperty(db_->hist[0], rocksdb::DB::Properties::kBlockCacheUsage, &used);
    return used;
  };
  constexpr uint64_t kCheckEvery = 4096;  // keys between looks at the stop flag and the bound
  bool full = false;
  DataKey key;
  for (rocksdb::ColumnFamilyHandle* family : {db_->hist[0], db_->stacks}) {
    // Each metric from the last: its newest second, then its keys of the seconds before it.
    std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(rocksdb::ReadOptions(), family));
    for (it->SeekToLast(); it->Valid() && !stop_warming_.load(std::memory_order_relaxed);) {
      if (!DecodeDataKey(View(it->key()), &key)) break;  // not a data key: nothing to warm
      const uint32_t metric = key.metric;
      const int64_t newest = key.second;
      it->Seek(
          DataKeyPrefix(metric, newest >= INT64_MIN + seconds ? newest - seconds + 1 : newest));
      for (uint64_t n = 1; it->Valid(); it->Next(), ++n) {
        // A key's block (and its value with it) is in the cache once the iterator is on it.
        if (!DecodeDataKey(View(it->key()), &key) || key.metric != metric) break;
        warmed_keys_.fetch_add(1, std::memory_order_relaxed);
        if (n % kCheckEvery == 0 &&
            (stop_warming_.load(std::memory_order_relaxed) || cache_bytes() >= bound)) {
          full = true;
          break;
        }
      }
      if (full || metric == 0) break;
      it->SeekForPrev(DataKeyPrefix(metric, INT64_MIN));  // the metric before: its newest key
    }
    if (full) break;
  }
  cache_warmed_.store(true, std::memory_order_release);
  if (stop_warming_.load(std::memory_order_relaxed)) return;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  Log("block cache: the newest " + std::to_string(seconds) + " s of every metric read in " +
      std::to_string(ms) + " ms (" + std::to_string(WarmedKeys()) + " keys, " +
      std::to_string(cache_bytes() >> 20) + " MiB cached" +
      (full ? ", stopped at half the cache" : "") + ")");
}

Status Store::MarkOldMinutesIfNeeded() {
  return MarkUnrolledIfNeeded(kRollupMarkerKey, kMinuteSource, kRollupMinute, &pending_,
                              PendingRollupKey, "minutes written before the rollups existed");
}

Status Store::MarkOldBlocksIfNeeded() {
  return MarkUnrolledIfNeeded(kBlockMarkerKey, kBlockSource, kRollupBlock, &pending_blocks_,
                              PendingBlockKey, "10-minute blocks written before hist_600s existed");
}

Status Store::MarkUnrolledIfNeeded(const std::string& marker_key, size_t source, uint32_t span,
                                   PendingMinutes* pending,
                                   std::string (*pending_key)(uint32_t, int64_t),
                                   const std::string& what) {
  std::string marker;
  rocksdb::Status s = db_->db->Get(rocksdb::ReadOptions(), db_->meta, marker_key, &marker);
  if (s.ok()) return Status::Ok();
  if (!s.IsNotFound()) return FromRocks(s, "reading the rollup marker " + marker_key);

  // One seek per span of each metric: the spans the source family holds, marked pending.
  const std::string family = kHistogramResolutions[source].family;
  std::unique_ptr<rocksdb::Iterator> it(
      db_->db->NewIterator(rocksdb::ReadOptions(), db_->hist[source]));
  rocksdb::WriteBatch wb;
  size_t spans = 0;
  DataKey key;
  for (it->SeekToFirst(); it->Valid();) {
    if (!DecodeDataKey(View(it->key()), &key)) {
      return Status::Corruption(family + ": key of " + std::to_string(it->key().size()) + " bytes");
    }
    const int64_t start = BucketStart(key.second, span);
    pending->Touch(key.metric, start);
    wb.Put(db_->meta, pending_key(key.metric, start), "");
    ++spans;
    it->Seek(DataKeyPrefix(key.metric, start + span));
  }
  if (!it->status().ok()) return FromRocks(it->status(), "reading " + family + " for the rollups");
  wb.Put(db_->meta, marker_key, "");
  rocksdb::WriteOptions synced;
  synced.sync = true;
  if (s = Write(synced, &wb); !s.ok()) return FromRocks(s, "marking " + what + " to roll up");
  if (spans > 0) Log(std::to_string(spans) + " " + what + " will be rolled up");
  return Status::Ok();
}

void Store::RollupLoop() {
  std::unique_lock lock(stop_mu_);
  while (!stop_cv_.wait_for(lock, std::chrono::milliseconds(options_.rollup_interval_ms),
                            [this] { return stopping_; })) {
    lock.unlock();
    ResumeIfDue();
    Result<size_t> r = RollUp(false);
    if (!r.ok()) Log("rollup: " + r.status().ToString());
    if (backfilling_.load(std::memory_order_relaxed)) {
      // Half a second a pass, so the rollups keep their pace beside it.
      Result<size_t> b = BackfillAggregates(SIZE_MAX, std::chrono::milliseconds(500));
      if (!b.ok()) Log("aggregate backfill: " + b.status().ToString() + "; retried in a second");
    }
    const auto now = std::chrono::steady_clock::now();
    if (options_.agent_idle_seconds > 0 && now >= next_prune_) {
      next_prune_ = now + std::chrono::minutes(1);
      if (Result<size_t> p = PruneIdleAgents(); !p.ok())
        Log("pruning agents: " + p.status().ToString());
    }
    lock.lock();
  }
}

Result<size_t> Store::RollUp(bool all, size_t* blocks) {
  std::lock_guard one_at_a_time(rollup_mu_);
  Result<size_t> minutes = RollUpStage(/*blocks=*/false, all);
  if (!minutes.ok()) return minutes;
  // Then the blocks, so that those whose minutes were just rolled up are done in this call.
  Result<size_t> block_count = RollUpStage(/*blocks=*/true, all);
  if (!block_count.ok()) return block_count.status();
  if (blocks) *blocks = *block_count;
  return minutes;
}

Result<size_t> Store::RollUpStage(bool blocks, bool all) {
  PendingMinutes& pending = blocks ? pending_blocks_ : pending_;
  const size_t source = blocks ? kBlockSource : kMinuteSource;
  const char* const what = blocks ? "block" : "minute";
  const auto quiet =
      all ? std::chrono::milliseconds(0) : std::chrono::milliseconds(options_.rollup_quiet_ms);
  size_t done = 0;
  // Spans that failed in this call: tried once per call (and by the thread after a backoff).
  std::set<std::pair<uint32_t, int64_t>> failed;
  // A block is done once, when its end has passed and no minute of it is pending (rollup.h).
  const int64_t now = NowSeconds(options_);
  const auto skip = [this, &failed, blocks, all, now](const PendingMinutes::Minute& m) {
    if (failed.count({m.metric, m.start}) > 0) return true;
    if (!blocks || all) return false;
    return m.start + int64_t{kRollupBlock} > now ||
           !pending_.Of(m.metric, m.start, m.start + kRollupBlock).empty();
  };
  for (;;) {
    {
      std::lock_guard stop(stop_mu_);
      if (stopping_ && !all) return done;
    }
    std::vector<PendingMinutes::Minute> ready;
    const rocksdb::Snapshot* snapshot = nullptr;
    {
      // No write is in flight: the snapshot holds every write of the generations read here.
      std::lock_guard lock(write_mu_);
      ready = pending.Ready(quiet, 16, std::chrono::steady_clock::now(), all, skip);
      if (ready.empty()) return done;
      snapshot = db_->db->GetSnapshot();
    }
    // A span that starts before this may have lost data to its source family's retention.
    const int64_t aged_before = options_.retention_seconds[source] > 0
                                    ? NowSeconds(options_) - options_.retention_seconds[source]
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
      ++rollup_failures_;
      NoteError(std::string("rollup of ") + what + " " + std::to_string(m.start) + " of " +
                MetricName(m.metric) + ": " + r.status().ToString());
      const uint32_t times = pending.Failed(m.metric, m.start, std::chrono::steady_clock::now());
      Log(std::string("rollup: ") + what + " " + std::to_string(m.start) + " of " +
          MetricName(m.metric) + " failed (" + std::to_string(times) +
          " in a row), skipped and retried later: " + r.status().ToString());
    }
    db_->db->ReleaseSnapshot(snapshot);
  }
}

Result<bool> Store::RollUpSpan(const PendingMinutes::Minute& m, const rocksdb::Snapshot* snapshot,
                               bool block) {
  if (TRAILMAP_FAILPOINT("rollup.minute")) return Status::IOError("failpoint rollup.minute");
  PendingMinutes& pending = block ? pending_blocks_ : pending_;
  rocksdb::WriteBatch wb;
  rocksdb::WriteOptions unsynced;  // lost with the marker, so redone
  bool changed = false;            // a write to the span came after the snapshot
  // Each part is written under the write lock, and only if no write to the span came since
  // the snapshot: a Put never overwrites a write it did not read (rollup.h).
  const auto write_part = [&]() -> Status {
    std::lock_guard lock(write_mu_);
    if (!pending.Unchanged(m.metric, m.start, m.generation)) {
      changed = true;
      return Status::Unavailable("written meanwhile");
    }
    rocksdb::Status w = Write(unsynced, &wb);
    wb.Clear();
    return w.ok() ? Status::Ok() : FromRocks(w, "writing rollups");
  };
  char key[kDataKeySize];
  // The span stays pending until its last part and the marker go in one write.
  const auto put = [&](size_t resolution, const DataKey& k, const std::string& value) {
    EncodeDataKey(k, key);
    wb.Put(db_->hist[resolution], rocksdb::Slice(key, kDataKeySize), value);
    return wb.Count() < 16384 ? Status::Ok() : write_part();
  };
  uint64_t rollup_saturated = 0;
  Status status =
      block
          ? ComputeBlockRollup(
                db_->db.get(), snapshot, db_->hist[kBlockSource], m.metric, m.start,
                [&put](const DataKey& k, const std::string& v) { return put(kBlockFamily, k, v); },
                &rollup_saturated)
          : ComputeMinuteRollup(db_->db.get(), snapshot, db_->hist[kMinuteSource], m.metric,
                                m.start, put, &rollup_saturated);
  if (changed) return false;
  if (!status.ok()) return status;
  const std::string where = std::string(block ? "block " : "minute ") + std::to_string(m.start) +
                            " of " + MetricName(m.metric);
  if (rollup_saturated > 0) {
    // Counted with the merges that saturated (self-metric trailmap.aggregator.merges.saturated).
    merges_->saturated.fetch_add(rollup_saturated, std::memory_order_relaxed);
    Log("rollup: " + where + ": " + std::to_string(rollup_saturated) +
        " sum(s) passed 2^62 and were saturated");
  }
  const auto& hook = block ? options_.before_block_write : options_.before_rollup_write;
  if (hook) hook(m.metric, m.start);
  std::lock_guard lock(write_mu_);
  std::lock_guard view(view_mu_);
  if (!pending.Unchanged(m.metric, m.start, m.generation)) return false;
  wb.Delete(db_->meta,
            block ? PendingBlockKey(m.metric, m.start) : PendingRollupKey(m.metric, m.start));
  // A minute's new rollup changes its block's `hist_60s` keys: marked in the same write.
  if (!block) MarkBlockLocked(m.metric, m.start, &wb);
  if (rocksdb::Status w = Write(unsynced, &wb); !w.ok()) {
    return FromRocks(w, "writing rollups");
  }
  pending.Clear(m.metric, m.start, m.generation);
  return true;
}

void Store::MarkBlockLocked(uint32_t metric, int64_t second, rocksdb::WriteBatch* wb) {
  const int64_t block = BucketStart(second, kRollupBlock);
  pending_blocks_.Touch(metric, block);
  wb->Put(db_->meta, PendingBlockKey(metric, block), "");
}

Status Store::DropAged(const PendingMinutes::Minute& m, bool block) {
  std::lock_guard lock(write_mu_);
  std::lock_guard view(view_mu_);
  rocksdb::WriteOptions unsynced;  // a marker that comes back is dropped again
  rocksdb::WriteBatch wb;
  wb.Delete(db_->meta,
            block ? PendingBlockKey(m.metric, m.start) : PendingRollupKey(m.metric, m.start));
  // Parts of the minute's rollup may have been written before it aged: its block is redone.
  if (!block) MarkBlockLocked(m.metric, m.start, &wb);
  rocksdb::Status w = Write(unsynced, &wb);
  if (!w.ok()) return FromRocks(w, "deleting the rollup marker");
  (block ? pending_blocks_ : pending_).Drop(m.metric, m.start);
  ++rollup_aged_out_;
  Log(std::string("rollup: ") + (block ? "block " : "minute ") + std::to_string(m.start) + " of " +
      MetricName(m.metric) + " is past the " + (block ? "60 s" : "1 s") +
      " retention: its rollups stay as they are");
  return Status::Ok();
}

Result<size_t> Store::PruneIdleAgents() {
  if (options_.agent_idle_seconds <= 0) return size_t{0};
  const int64_t before = NowSeconds(options_) - options_.agent_idle_seconds;
  std::lock_guard lock(write_mu_);
  rocksdb::WriteBatch wb;
  std::vector<std::string> idle;
  for (const auto& [agent, seen] : last_seen_) {
    if (seen >= before) continue;
    idle.push_back(agent);
    wb.Delete(db_->meta, WatermarkKey(agent));
  }
  if (idle.empty()) return size_t{0};
  rocksdb::WriteOptions write_options;
  write_options.sync = options_.sync;
  if (rocksdb::Status w = Write(write_options, &wb); !w.ok()) {
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

rocksdb::Status Store::Write(const rocksdb::WriteOptions& options, rocksdb::WriteBatch* wb) {
  if (std::string held = background_errors_->Current(); !held.empty()) {
    return rocksdb::Status::IOError("not written while RocksDB holds a " + held);
  }
  if (Status space = CheckFreeSpace(); !space.ok()) {
    return rocksdb::Status::NoSpace(space.message());
  }
  return db_->db->Write(options, wb);
}

Status Store::CheckFreeSpace() {
  if (options_.min_free_mb == 0 || dir_.empty()) return Status::Ok();
  struct statvfs fs;
  if (statvfs(dir_.c_str(), &fs) != 0) return Status::Ok();  // cannot tell: let RocksDB try
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  const uint64_t reserve = static_cast<uint64_t>(options_.min_free_mb) << 20;
  const std::string where = std::to_string(free_bytes >> 20) + " MiB free under " + dir_ +
                            ", reserve " + std::to_string(options_.min_free_mb) + " MiB";
  if (free_bytes < reserve) {
    if (!disk_low_.exchange(true)) {
      Log("disk full: " + where +
          " (store.min_free_mb); writes are refused, not acked, until "
          "space returns (agents keep their batches and resend)");
    }
    return Status::ResourceExhausted("disk full: " + where);
  }
  if (disk_low_.exchange(false)) Log("disk space returned: " + where + "; writes resume");
  return Status::Ok();
}

bool Store::ResumeIfDue() {
  const auto now = std::chrono::steady_clock::now();
  if (!background_errors_->ResumeDue(now)) return background_errors_->Current().empty();
  background_errors_->ResumeDone(db_->db->Resume(), now);
  return background_errors_->Current().empty();
}

StoreHealth Store::Health() const {
  StoreHealth h;
  h.background_error = background_errors_->Current();
  if (h.background_error.empty() && disk_low_) {
    h.background_error =
        "disk full: less than store.min_free_mb free; writes refused until space returns";
  }
  h.background_errors = background_errors_->errors();
  h.recoveries = background_errors_->recoveries();
  h.rollup_failures = rollup_failures_;
  h.rollup_aged_out = rollup_aged_out_;
  h.pending_rollups = pending_.size();
  h.agents_pruned = agents_pruned_;
  h.hosts = catalog_.host_count();
  h.newest_second = newest_second_.load(std::memory_order_relaxed);
  std::error_code ec;
  for (const auto& file : std::filesystem::directory_iterator(dir_, ec)) {
    std::error_code size_ec;
    const uintmax_t size = file.is_regular_file(size_ec) ? file.file_size(size_ec) : 0;
    if (!size_ec) h.disk_bytes += size;
  }
  {
    std::lock_guard error(error_mu_);
    h.last_error = last_error_;
  }
  std::lock_guard lock(write_mu_);
  h.agents = watermarks_.size();
  return h;
}

void Store::NoteError(const std::string& error) {
  std::lock_guard lock(error_mu_);
  last_error_ = error;
}

std::string Store::MetricName(uint32_t metric) const {
  if (metric & kAggregateMetricBit) {
    return catalog_.Metric(metric & ~kAggregateMetricBit).name + " (aggregate)";
  }
  return catalog_.Metric(metric).name;
}

Result<uint64_t> Store::IntProperty(const std::string& name) const {
  uint64_t value = 0;
  if (!db_->db->GetAggregatedIntProperty(name, &value)) {
    return Status::NotFound("RocksDB has no integer property " + name);
  }
  return value;
}

Status Store::Load() {
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(rocksdb::ReadOptions(), db_->meta));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view key = View(it->key());
    const std::string_view value = View(it->value());
    const char tag = key.empty() ? '\0' : key[0];
    if (Result<bool> restored = aggregates_.Restore(key, value); !restored.ok()) {
      return Status::Corruption("meta: " + restored.status().message());
    } else if (*restored) {
      continue;
    }
    const bool id_key = key.size() == 5;
    const uint32_t id = id_key ? GetFixed32BE(key.data() + 1) : 0;
    Status s;
    if (tag == 'M' && id_key) {
      Result<MetricRecord> r = DecodeMetricRecord(value);
      s = r.ok() ? catalog_.RestoreMetric(id, std::move(r).value()) : r.status();
    } else if (tag == 'H' && id_key) {
      Result<HostRecord> r = DecodeHostRecord(value);
      s = r.ok() ? catalog_.RestoreHost(id, std::move(r).value()) : r.status();
    } else if (tag == 'S' && id_key) {
      Result<SeriesRecord> r = DecodeSeriesRecord(value);
      s = r.ok() ? catalog_.RestoreSeries(id, std::move(r).value()) : r.status();
    } else if (tag == 'K' && id_key) {
      s = catalog_.RestoreStack(id, std::string(value));
    } else if (tag == 'D' && id_key) {
      catalog_.SetDescription(id, std::string(value));
    } else if (tag == 'r' || tag == 'b') {
      uint32_t metric = 0;
      int64_t start = 0;
      if (tag == 'r' ? DecodePendingRollupKey(key, &metric, &start)
                     : DecodePendingBlockKey(key, &metric, &start)) {
        (tag == 'r' ? pending_ : pending_blocks_).Touch(metric, start);
      } else {
        s = Status::Corruption("pending rollup key of " + std::to_string(key.size()) + " bytes");
      }
    } else if (tag == 'T' && id_key) {
      Result<int64_t> second = DecodeSecond(value);
      if (second.ok()) {
        if (id >= through_.size()) through_.resize(id + 1, INT64_MIN);
        through_[id] = *second;
      }
      s = second.status();
    } else if (tag == 'w') {
      Result<WatermarkRecord> r = DecodeWatermarkRecord(value);
      if (r.ok()) {
        const std::string agent(key.substr(1));
        watermarks_[agent] = r->sequence;
        // Not recorded (an older store): idle from now.
        last_seen_[agent] = r->last_seen != 0 ? r->last_seen : NowSeconds(options_);
      }
      s = r.status();
    }
    if (!s.ok()) return Status::Corruption("meta: " + s.message());
  }
  if (!it->status().ok()) return FromRocks(it->status(), "reading meta");
  return Status::Ok();
}

Status Store::MarkAggregates() {
  // A store with no host yet holds nothing an aggregate could lack: its aggregates are complete.
  rocksdb::WriteBatch wb;
  for (const std::string& key : aggregates_.CompleteMarkers(catalog_.host_count() == 0)) {
    wb.Put(db_->meta, key, "");
  }
  if (wb.Count() > 0) {
    if (rocksdb::Status s = db_->db->Write(rocksdb::WriteOptions(), &wb); !s.ok()) {
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

void Store::SetCluster(Cluster cluster) {
  std::lock_guard lock(write_mu_);  // GroupFor runs under it
  aggregates_.SetCluster(std::move(cluster));
}

std::vector<HostThrough> Store::HostsThrough(const CompletenessQuery& query) const {
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

uint64_t Store::WatermarkLocked(std::string_view agent) const {
  auto it = watermarks_.find(std::string(agent));
  return it == watermarks_.end() ? 0 : it->second;
}

uint64_t Store::Watermark(std::string_view agent) const {
  std::lock_guard lock(write_mu_);
  return WatermarkLocked(agent);
}

std::vector<std::string> Store::Agents() const {
  std::lock_guard lock(write_mu_);
  std::vector<std::string> agents;
  agents.reserve(watermarks_.size());
  for (const auto& [agent, watermark] : watermarks_) agents.push_back(agent);
  return agents;
}

Result<ApplyOutcome> Store::ApplyBatch(const Batch& batch) {
  std::vector<Result<ApplyOutcome>> results = ApplyBatches({&batch});
  return std::move(results[0]);
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

std::vector<Result<ApplyOutcome>> Store::ApplyBatches(const std::vector<const Batch*>& batches) {
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
  const int64_t direct_before = options_.retention_seconds[0] > 0
                                    ? NowSeconds(options_) - options_.retention_seconds[0] + 3600
                                    : INT64_MIN;
  std::lock_guard lock(write_mu_);
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
  if (rocksdb::Status s = Write(write_options, &wb); !s.ok()) {
    pending_descriptions_.clear();
    catalog_.Rollback(mark);
    aggregates_.Rollback(aggregates_mark);
    dictionaries_.ForgetGlobalIds();  // some may name the stacks just taken back
    pending_through_.clear();
    for (auto it = old_watermarks.rbegin(); it != old_watermarks.rend(); ++it) {
      watermarks_[it->first] = it->second;
    }
    const Status failed = FromRocks(s, "writing " + std::to_string(applied.size()) + " batch(es)");
    NoteError(failed.ToString());
    for (size_t i : applied) results[i] = failed;
    return results;
  }
  for (size_t i : applied) {
    for (const SecondDelta& second : batches[i]->seconds) {
      int64_t newest = newest_second_.load(std::memory_order_relaxed);
      while (second.time > newest && !newest_second_.compare_exchange_weak(
                                         newest, second.time, std::memory_order_relaxed)) {
      }
    }
  }
  for (auto& [host, host_labels] : label_changes)
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
  return results;
}

void Store::AppendBatchLocked(const Batch& batch, const std::string& labels, int64_t direct_before,
                              rocksdb::WriteBatch* wb, ApplyOutcome* out,
                              std::vector<std::pair<uint32_t, std::string>>* label_changes) {
  bool added = false;
  const uint32_t host = catalog_.FindOrAddHost(batch.host, labels, &added);
  bool labels_changed = false;
  if (added) {
    wb->Put(db_->meta, HostNameKey(batch.host), EncodeId(host));
    ++out->new_ids;
  } else {
    labels_changed = catalog_.Host(host).labels != labels;
  }
  if (added || labels_changed) {
    wb->Put(db_->meta, HostIdKey(host), EncodeHostRecord(HostRecord{batch.host, labels}));
  }
  if (labels_changed) label_changes->emplace_back(host, labels);

  std::vector<uint32_t> metric_of(batch.series.size());
  std::vector<uint32_t> series_of(batch.series.size());
  for (size_t i = 0; i < batch.series.size(); ++i) {
    const SeriesDef& def = batch.series[i];
    const MetricRecord record{def.metric, def.kind, def.unit};
    metric_of[i] = catalog_.FindOrAddMetric(record, &added);
    if (added) {
      wb->Put(db_->meta, MetricNameKey(def.metric), EncodeId(metric_of[i]));
      wb->Put(db_->meta, MetricIdKey(metric_of[i]), EncodeMetricRecord(record));
      ++out->new_ids;
    }
    AppendDescriptionLocked(metric_of[i], def.description, wb);
    series_of[i] = catalog_.FindOrAddSeries(metric_of[i], def.fields, &added);
    if (added) {
      wb->Put(db_->meta, SeriesNameKey(metric_of[i], def.fields), EncodeId(series_of[i]));
      wb->Put(db_->meta, SeriesIdKey(series_of[i]),
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
      if (backfilling_.load(std::memory_order_relaxed) && !(metric & kAggregateMetricBit)) {
        backfill_minutes_.TouchIfPending(metric, minute);
      }
      EncodeDataKey(DataKey{metric, second.time, key_host, key_series}, key);
      wb->Merge(db_->hist[0], rocksdb::Slice(key, kDataKeySize), AsSlice(encoded));
      if (direct) {
        for (size_t r = 1; r < kHistogramResolutionCount; ++r) {
          const int64_t bucket = BucketStart(second.time, kHistogramResolutions[r].seconds);
          EncodeDataKey(DataKey{metric, bucket, key_host, key_series}, key);
          wb->Merge(db_->hist[r], rocksdb::Slice(key, kDataKeySize), AsSlice(encoded));
        }
        // A pass reading this minute from an older snapshot must not Put over these operands.
        pending_.TouchIfPending(metric, minute);
        pending_blocks_.TouchIfPending(metric, BucketStart(second.time, kRollupBlock));
      } else if (std::find(marked.begin(), marked.end(), std::pair{metric, minute}) ==
                 marked.end()) {
        // Marked before the write, so a query whose snapshot holds this write sees it pending.
        pending_.Touch(metric, minute);
        wb->Put(db_->meta, PendingRollupKey(metric, minute), "");
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
      wb->Put(db_->scalar, rocksdb::Slice(key, kDataKeySize), EncodeScalar(v.value));
      ++out->scalars;
    }
    AppendStacksLocked(batch, second, host, metric_of, series_of, wb, out);
  }
  for (const auto& [k, v] : aggregate_ids) wb->Put(db_->meta, k, v);
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
      wb->Put(db_->meta, HostThroughKey(host), EncodeSecond(newest));
    }
  }
  const int64_t now = NowSeconds(options_);
  wb->Put(db_->meta, WatermarkKey(batch.agent), EncodeWatermark(batch.sequence, now));
  last_seen_[batch.agent] = now;
}

void Store::AppendStacksLocked(const Batch& batch, const SecondDelta& second, uint32_t host,
                               const std::vector<uint32_t>& metric_of,
                               const std::vector<uint32_t>& series_of, rocksdb::WriteBatch* wb,
                               ApplyOutcome* out) {
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
        wb->Put(db_->meta, StackTextKey(folded), EncodeId(*global));
        wb->Put(db_->meta, StackIdKey(*global), folded);
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
    wb->Merge(db_->stacks, rocksdb::Slice(key, kDataKeySize), value);
    EncodeDataKey(DataKey{metric_of[series], minute, host, series_of[series]}, key);
    wb->Merge(db_->stacks_60s, rocksdb::Slice(key, kDataKeySize), value);
    ++out->stack_values;
  }
}

void Store::AppendDescriptionLocked(uint32_t metric, const std::string& description,
                                    rocksdb::WriteBatch* wb) {
  if (description.empty()) return;
  auto pending = std::find_if(pending_descriptions_.begin(), pending_descriptions_.end(),
                              [metric](const auto& p) { return p.first == metric; });
  const std::string current =
      pending != pending_descriptions_.end() ? pending->second : catalog_.Description(metric);
  if (current == description) return;
  wb->Put(db_->meta, MetricDescriptionKey(metric), description);
  if (pending != pending_descriptions_.end()) {
    pending->second = description;
  } else {
    pending_descriptions_.emplace_back(metric, description);
  }
}

int64_t Store::BlockDirectBefore() const {
  const int64_t retention = options_.retention_seconds[kBlockSource];
  return retention > 0 ? NowSeconds(options_) - retention + 3600 : INT64_MIN;
}

void Store::AppendLateBlockLocked(const DataKey& second, std::string_view encoded,
                                  rocksdb::WriteBatch* wb) {
  const int64_t block = BucketStart(second.second, kRollupBlock);
  char key[kDataKeySize];
  EncodeDataKey(DataKey{second.metric, block, second.host, second.series}, key);
  wb->Merge(db_->hist[kBlockFamily], rocksdb::Slice(key, kDataKeySize), AsSlice(encoded));
  // A pass reading this block from an older snapshot must not Put over this operand.
  pending_blocks_.TouchIfPending(second.metric, block);
}

Result<ApplyOutcome> Store::SkipRejected(std::string_view agent, uint64_t sequence) {
  if (agent.empty() || sequence == 0) {
    return Status::InvalidArgument("a rejected batch without an agent id or sequence");
  }
  std::lock_guard lock(write_mu_);
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
  const int64_t now = NowSeconds(options_);
  rocksdb::WriteBatch wb;
  wb.Put(db_->meta, WatermarkKey(agent), EncodeWatermark(sequence, now));
  rocksdb::Status s = Write(write_options, &wb);
  if (!s.ok()) return FromRocks(s, "writing watermark of " + std::string(agent));
  watermarks_[std::string(agent)] = sequence;
  last_seen_[std::string(agent)] = now;
  out.watermark = sequence;
  out.expected = sequence + 1;
  return out;
}

Result<HistogramAnswer> Store::QueryHistograms(const HistogramQuery& query, QueryPlan plan,
                                               QueryBudget* budget, bool pass_through) const {
  const size_t resolutions = plan == QueryPlan::kFinestOnly    ? 1
                             : plan == QueryPlan::kUpToMinutes ? kBlockFamily
                                                               : kHistogramResolutionCount;
  HistogramScan scan{
      db_->db.get(), {db_->hist.data(), resolutions}, nullptr, {}, options_.query_threads};
  scan.budget = budget;
  // A scalar metric answers with one histogram sample per host-second (aggregator/scan/scalar_query.h).
  MetricRecord record;
  const std::optional<uint32_t> metric = catalog_.FindMetric(query.metric, &record);
  if (metric && record.kind == MetricKind::kScalar) {
    return RunScalarHistogramQuery(db_->db.get(), db_->scalar, catalog_, *metric, record, query,
                                   budget);
  }
  std::optional<AggregatePlan> aggregate;
  {
    std::lock_guard view(view_mu_);
    scan.snapshot = db_->db->GetSnapshot();
    // After the snapshot: every aggregate id its keys use is known (aggregates.h).
    if (metric && plan == QueryPlan::kCoarsest) aggregate = aggregates_.Plan(query, *metric);
    const uint32_t read = aggregate ? aggregate->metric : metric.value_or(0);
    if (metric && resolutions > 1) scan.pending_minutes = pending_.Of(read, query.from, query.to);
    if (metric && resolutions > kBlockFamily)
      scan.pending_blocks = pending_blocks_.Of(read, query.from, query.to);
  }
  scan.aggregate = aggregate ? &*aggregate : nullptr;
  scan.pass_through = pass_through;
  if (aggregate) aggregate_queries_.fetch_add(1, std::memory_order_relaxed);
  Result<HistogramAnswer> answer = RunHistogramQuery(scan, catalog_, query);
  db_->db->ReleaseSnapshot(scan.snapshot);
  if (answer.ok()) {  // a cell whose merge saturated is counted with the merges that did
    uint64_t saturated = 0;
    for (const QueryCell& cell : answer->cells) saturated += cell.histogram.saturated() ? 1 : 0;
    if (saturated > 0) merges_->saturated.fetch_add(saturated, std::memory_order_relaxed);
  }
  return answer;
}

Result<StackAnswer> Store::QueryStacks(const StackQuery& query, QueryBudget* budget) const {
  const StackScan scan{db_->db.get(), db_->stacks, db_->stacks_60s, db_->hist[0],
                       options_.query_threads, uint64_t{options_.block_cache_mb} << 20};
  return RunStackQuery(scan, catalog_, query, budget);
}

std::vector<MetricInfo> Store::Metrics() const { return catalog_.Metrics(); }

bool Store::HasMetric(std::string_view name) const { return catalog_.FindMetric(name).has_value(); }

size_t Store::NewSeriesIn(const Batch& batch) const {
  size_t fresh = 0;
  for (const SeriesDef& def : batch.series) {
    const std::optional<uint32_t> metric = catalog_.FindMetric(def.metric);
    if (!metric || !catalog_.FindSeries(*metric, def.fields)) ++fresh;
  }
  return fresh;
}

std::optional<double> Store::ScalarAt(std::string_view metric, std::string_view host,
                                      std::string_view fields, int64_t second) const {
  const std::optional<uint32_t> m = catalog_.FindMetric(metric);
  const std::optional<uint32_t> h = catalog_.FindHost(host);
  if (!m || !h) return std::nullopt;
  // Readers find a series id through its name-keyed meta entry.
  std::string id;
  if (!db_->db->Get(rocksdb::ReadOptions(), db_->meta, SeriesNameKey(*m, fields), &id).ok() ||
      id.size() != 4) {
    return std::nullopt;
  }
  std::string value;
  const std::string key = EncodeDataKey(DataKey{*m, second, *h, GetFixed32BE(id.data())});
  if (!db_->db->Get(rocksdb::ReadOptions(), db_->scalar, key, &value).ok()) return std::nullopt;
  Result<double> v = DecodeScalar(value);
  return v.ok() ? std::optional<double>(*v) : std::nullopt;
}

Status Store::Flush() {
  rocksdb::FlushOptions options;
  options.wait = true;
  std::vector<rocksdb::ColumnFamilyHandle*> families(db_->all.begin(), db_->all.end());
  if (rocksdb::Status s = db_->db->Flush(options, families); !s.ok()) return FromRocks(s, "flush");
  return Status::Ok();
}

Status Store::Compact() {
  rocksdb::CompactRangeOptions options;
  options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  for (rocksdb::ColumnFamilyHandle* h : db_->all) {
    if (rocksdb::Status s = db_->db->CompactRange(options, h, nullptr, nullptr); !s.ok()) {
      return FromRocks(s, "compacting " + h->GetName());
    }
  }
  return Status::Ok();
}

std::optional<std::string> Store::HostLabels(std::string_view host) const {
  const std::optional<uint32_t> id = catalog_.FindHost(host);
  if (!id) return std::nullopt;
  return catalog_.Host(*id).labels;
}

RocksDbStats Store::RocksDbProperties() const {
  rocksdb::DB* db = db_->db.get();
  const auto per_family = [&](const std::string& name) {
    uint64_t sum = 0;
    for (rocksdb::ColumnFamilyHandle* h : db_->all) {
      uint64_t v = 0;
      if (db->GetIntProperty(h, name, &v)) sum += v;
    }
    return sum;
  };
  const auto whole_db = [&](const std::string& name) {
    uint64_t v = 0;
    return db->GetIntProperty(name, &v) ? v : 0;
  };
  RocksDbStats s;
  s.pending_compaction_bytes = per_family(rocksdb::DB::Properties::kEstimatePendingCompactionBytes);
  s.running_compactions = whole_db(rocksdb::DB::Properties::kNumRunningCompactions);
  s.running_flushes = whole_db(rocksdb::DB::Properties::kNumRunningFlushes);
  s.memtable_bytes = per_family(rocksdb::DB::Properties::kCurSizeAllMemTables);
  s.live_sst_bytes = per_family(rocksdb::DB::Properties::kLiveSstFilesSize);
  s.block_cache_bytes = whole_db(rocksdb::DB::Properties::kBlockCacheUsage);
  s.table_reader_bytes = per_family(rocksdb::DB::Properties::kEstimateTableReadersMem);
  s.background_errors = whole_db(rocksdb::DB::Properties::kBackgroundErrors);
  return s;
}

}  // namespace trailmap::aggregator
