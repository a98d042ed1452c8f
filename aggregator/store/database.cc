#include "aggregator/store/database.h"

#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <filesystem>

#include "aggregator/store/encoding_merge_operator.h"
#include "aggregator/store/histogram_merge_operator.h"
#include "aggregator/store/retention_filter.h"
#include "aggregator/store/rocksdb_log.h"
#include "aggregator/store/rollup.h"
#include "aggregator/store/stack_merge_operator.h"

namespace trailmap::aggregator {

namespace {

rocksdb::CompressionType Best(rocksdb::CompressionType wanted) {
  const auto supported = rocksdb::GetSupportedCompressions();
  if (std::find(supported.begin(), supported.end(), wanted) != supported.end()) return wanted;
  return rocksdb::kNoCompression;
}

// Every column family. Adding one is one line here (and a handle in Database if code names it).
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

}  // namespace

Database::Database(const std::string& dir, const StoreOptions& options)
    : dir_(dir),
      disk_(dir, options.min_free_mb),
      background_errors_(std::make_shared<BackgroundErrors>()),
      merges_(std::make_shared<MergeCounters>()) {}

Database::~Database() {
  if (!db_) return;
  for (rocksdb::ColumnFamilyHandle* h : all_) db_->DestroyColumnFamilyHandle(h);
  db_->Close().PermitUncheckedError();
}

rocksdb::ColumnFamilyHandle* Database::Named(std::string_view name) const {
  for (rocksdb::ColumnFamilyHandle* h : all_) {
    if (h->GetName() == name) return h;
  }
  return nullptr;
}

Result<std::unique_ptr<Database>> Database::Open(const std::string& dir,
                                                 const StoreOptions& options) {
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
  std::unique_ptr<Database> d(new Database(dir, options));
  db_options.listeners.push_back(d->background_errors_);

  auto cache = rocksdb::NewLRUCache(options.block_cache_mb << 20);
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const FamilySpec& spec : kFamilies) {
    families.emplace_back(spec.name, FamilyOptions(options, spec, cache, d->merges_));
  }
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, dir, families, &d->all_, &db);
  if (!s.ok()) return FromRocks(s, "opening " + dir);
  d->db_.reset(db);
  for (size_t i = 0; i < kHistogramResolutionCount; ++i) {
    d->hist_[i] = d->Named(kHistogramResolutions[i].family);
  }
  d->scalar_ = d->Named("scalar");
  d->meta_ = d->Named("meta");
  d->stacks_ = d->Named("stacks");
  d->stacks_60s_ = d->Named("stacks_60s");
  return d;
}

rocksdb::Status Database::Write(const rocksdb::WriteOptions& options, rocksdb::WriteBatch* wb) {
  if (std::string held = background_errors_->Current(); !held.empty()) {
    return rocksdb::Status::IOError("not written while RocksDB holds a " + held);
  }
  if (Status space = disk_.Check(); !space.ok()) {
    return rocksdb::Status::NoSpace(space.message());
  }
  return db_->Write(options, wb);
}

bool Database::ResumeIfDue() {
  const auto now = std::chrono::steady_clock::now();
  if (!background_errors_->ResumeDue(now)) return background_errors_->Current().empty();
  background_errors_->ResumeDone(db_->Resume(), now);
  return background_errors_->Current().empty();
}

std::string Database::WriteRefusal() const {
  std::string held = background_errors_->Current();
  if (held.empty() && disk_.low()) {
    held = "disk full: less than store.min_free_mb free; writes refused until space returns";
  }
  return held;
}

void Database::NoteError(const std::string& error) {
  std::lock_guard lock(error_mu_);
  last_error_ = error;
}

std::string Database::LastError() const {
  std::lock_guard lock(error_mu_);
  return last_error_;
}

uint64_t Database::SaturatedMerges() const {
  return merges_->saturated.load(std::memory_order_relaxed);
}

void Database::CountSaturated(uint64_t merges) const {
  merges_->saturated.fetch_add(merges, std::memory_order_relaxed);
}

Result<uint64_t> Database::IntProperty(const std::string& name) const {
  uint64_t value = 0;
  if (!db_->GetAggregatedIntProperty(name, &value)) {
    return Status::NotFound("RocksDB has no integer property " + name);
  }
  return value;
}

RocksDbStats Database::Properties() const {
  rocksdb::DB* db = db_.get();
  const auto per_family = [&](const std::string& name) {
    uint64_t sum = 0;
    for (rocksdb::ColumnFamilyHandle* h : all_) {
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

uint64_t Database::DiskBytes() const {
  uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& file : std::filesystem::directory_iterator(dir_, ec)) {
    std::error_code size_ec;
    const uintmax_t size = file.is_regular_file(size_ec) ? file.file_size(size_ec) : 0;
    if (!size_ec) bytes += size;
  }
  return bytes;
}

Status Database::Flush() {
  rocksdb::FlushOptions options;
  options.wait = true;
  if (rocksdb::Status s = db_->Flush(options, all_); !s.ok()) return FromRocks(s, "flush");
  return Status::Ok();
}

Status Database::Compact() {
  rocksdb::CompactRangeOptions options;
  options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  for (rocksdb::ColumnFamilyHandle* h : all_) {
    if (rocksdb::Status s = db_->CompactRange(options, h, nullptr, nullptr); !s.ok()) {
      return FromRocks(s, "compacting " + h->GetName());
    }
  }
  return Status::Ok();
}

}  // namespace trailmap::aggregator
