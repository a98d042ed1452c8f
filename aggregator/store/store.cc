#include "aggregator/store/store.h"

#include <rocksdb/db.h>

#include <utility>

#include "aggregator/store/backfill_driver.h"
#include "aggregator/store/cache_warmer.h"
#include "aggregator/store/database.h"
#include "aggregator/store/keys.h"
#include "aggregator/store/rollup_driver.h"
#include "core/log.h"

namespace trailmap::aggregator {

Store::Store(const StoreOptions& options, std::unique_ptr<Database> db)
    : options_(options), db_(std::move(db)), aggregates_(options.aggregates) {
  // Each part reads the options the Store holds (options_), which outlive them all.
  rollups_ = std::make_unique<RollupDriver>(options_, *db_, catalog_);
  backfill_ = std::make_unique<BackfillDriver>(options_, *db_, catalog_, aggregates_, *rollups_);
  applier_ =
      std::make_unique<BatchApplier>(options_, *db_, catalog_, aggregates_, *rollups_, *backfill_);
  warmer_ = std::make_unique<CacheWarmer>(options_, *db_);
}

Store::~Store() {
  // Every thread ends before any part it reads goes.
  warmer_->Stop();
  maintenance_.Stop();
  backfill_->Stop();
  rollups_->Stop();
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& dir, const StoreOptions& options) {
  Result<std::unique_ptr<Database>> db = Database::Open(dir, options);
  if (!db.ok()) return db.status();
  std::unique_ptr<Store> store(new Store(options, std::move(db).value()));
  if (Status l = store->Load(); !l.ok()) return l;
  if (Status s = store->Start(); !s.ok()) return s;
  return store;
}

Status Store::Load() {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->db()->NewIterator(rocksdb::ReadOptions(), db_->meta()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view key = View(it->key());
    const std::string_view value = View(it->value());
    Result<bool> taken = aggregates_.Restore(key, value);
    if (taken.ok() && !*taken) taken = rollups_->Restore(key, value);
    if (taken.ok() && !*taken) taken = applier_->Restore(key, value);
    if (!taken.ok()) return Status::Corruption("meta: " + taken.status().message());
    if (*taken) continue;
    const char tag = key.empty() ? '\0' : key[0];
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
    }
    if (!s.ok()) return Status::Corruption("meta: " + s.message());
  }
  if (!it->status().ok()) return FromRocks(it->status(), "reading meta");
  return Status::Ok();
}

Status Store::Start() {
  if (Status b = backfill_->Begin(applier_->NewestThrough()); !b.ok()) return b;
  if (Status r = rollups_->MarkUnrolled(); !r.ok()) return r;
  // Before any batch can come: an agent back after its idle time is new (batch_applier.h).
  if (Result<size_t> p = applier_->PruneIdleAgents(); !p.ok()) return p.status();
  if (options_.rollup_interval_ms > 0) {
    rollups_->Start();
    backfill_->Start();
    maintenance_.Start("store maintenance", std::chrono::milliseconds(options_.rollup_interval_ms),
                       [this] {
                         ResumeIfDue();
                         const auto now = std::chrono::steady_clock::now();
                         if (options_.agent_idle_seconds > 0 && now >= next_prune_) {
                           next_prune_ = now + std::chrono::minutes(1);
                           if (Result<size_t> p = PruneIdleAgents(); !p.ok()) {
                             Log("pruning agents: " + p.status().ToString());
                           }
                         }
                         return true;
                       });
  }
  warmer_->Start();
  return Status::Ok();
}

Result<ApplyOutcome> Store::ApplyBatch(const Batch& batch) {
  std::vector<Result<ApplyOutcome>> results = applier_->ApplyBatches({&batch});
  return std::move(results[0]);
}

std::vector<Result<ApplyOutcome>> Store::ApplyBatches(const std::vector<const Batch*>& batches) {
  return applier_->ApplyBatches(batches);
}

Result<ApplyOutcome> Store::SkipRejected(std::string_view agent, uint64_t sequence) {
  return applier_->SkipRejected(agent, sequence);
}

uint64_t Store::Watermark(std::string_view agent) const { return applier_->Watermark(agent); }

std::vector<std::string> Store::Agents() const { return applier_->Agents(); }

std::vector<HostThrough> Store::HostsThrough(const CompletenessQuery& query) const {
  return applier_->HostsThrough(query);
}

void Store::SetCluster(Cluster cluster) {
  auto lock = db_->LockWrites();  // the applier's GroupFor runs under it
  aggregates_.SetCluster(std::move(cluster));
}

Result<size_t> Store::PruneIdleAgents() { return applier_->PruneIdleAgents(); }

Result<size_t> Store::RollUp(bool all, size_t* blocks) { return rollups_->RollUp(all, blocks); }

size_t Store::PendingRollups() const { return rollups_->minutes().size(); }

size_t Store::PendingBlocks() const { return rollups_->blocks().size(); }

Result<size_t> Store::BackfillAggregates(size_t max_minutes, std::chrono::milliseconds budget) {
  return backfill_->Backfill(max_minutes, budget);
}

uint64_t Store::BackfillMinutesLeft() const { return backfill_->MinutesLeft(); }

bool Store::ResumeIfDue() { return db_->ResumeIfDue(); }

StoreHealth Store::Health() const {
  StoreHealth h;
  h.background_error = db_->WriteRefusal();
  h.background_errors = db_->background_errors().errors();
  h.recoveries = db_->background_errors().recoveries();
  h.rollup_failures = rollups_->failures();
  h.rollup_aged_out = rollups_->aged_out();
  h.pending_rollups = rollups_->minutes().size();
  h.agents_pruned = applier_->AgentsPruned();
  h.hosts = catalog_.host_count();
  h.newest_second = applier_->NewestSecond();
  h.disk_bytes = db_->DiskBytes();
  h.last_error = db_->LastError();
  h.agents = applier_->AgentCount();
  return h;
}

Result<uint64_t> Store::IntProperty(const std::string& name) const {
  return db_->IntProperty(name);
}

RocksDbStats Store::RocksDbProperties() const { return db_->Properties(); }

uint64_t Store::SaturatedMerges() const { return db_->SaturatedMerges(); }

uint64_t Store::WarmedKeys() const { return warmer_->WarmedKeys(); }

bool Store::CacheWarmed() const { return warmer_->Warmed(); }

uint64_t Store::ThreadFailures() const {
  return rollups_->thread_failures() + backfill_->thread_failures() + warmer_->thread_failures() +
         maintenance_.failures();
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
  if (!db_->db()->Get(rocksdb::ReadOptions(), db_->meta(), SeriesNameKey(*m, fields), &id).ok() ||
      id.size() != 4) {
    return std::nullopt;
  }
  std::string value;
  const std::string key = EncodeDataKey(DataKey{*m, second, *h, GetFixed32BE(id.data())});
  if (!db_->db()->Get(rocksdb::ReadOptions(), db_->scalar(), key, &value).ok()) {
    return std::nullopt;
  }
  Result<double> v = DecodeScalar(value);
  return v.ok() ? std::optional<double>(*v) : std::nullopt;
}

std::optional<std::string> Store::HostLabels(std::string_view host) const {
  const std::optional<uint32_t> id = catalog_.FindHost(host);
  if (!id) return std::nullopt;
  return catalog_.Host(*id).labels;
}

Status Store::Flush() { return db_->Flush(); }

Status Store::Compact() { return db_->Compact(); }

}  // namespace trailmap::aggregator
