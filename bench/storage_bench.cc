// storage_bench: the figures of docs/BENCHMARKS.md, "Bytes on disk".
// Not a Google Benchmark: it fills a real Store (aggregator/store/store.h) and reads RocksDB's own sizes.
//
//   storage_bench bytes --dir DIR [--hosts 100] [--hours 4]
//     Backfills HOURS of the fleet model (bench/fleet_model.h: HOSTS hosts, series op=read and
//     op=write, 200 events a host-second) into a fresh Store in DIR through ApplyBatches, rolls
//     every minute and 10-minute block up and compacts. Then, for each compression (none, lz4,
//     zstd, zstd with a 16 KiB dictionary trained per SST file), it reopens DIR with that
//     compression on every level, rewrites each histogram family (CompactRange, bottommost
//     forced), and prints the family's SST bytes per key and per host-series-second (the number
//     of `hist` keys), the time of that rewrite and of a full scan decoding every value.
//   storage_bench query --dir DIR [--hosts 1] [--days 365] [--repeat 5]
//     Writes DAYS of `hist_60s` and `hist_600s` keys for HOSTS hosts x 2 series straight into a
//     Store's families (minute histograms merged from the fleet model's seconds, blocks the merge
//     of their minutes), then times the fleet heat map (all hosts, no grouping) over the last week
//     at 600 s columns and over all DAYS at 8 h columns, read with `hist_600s`
//     (QueryPlan::kHosts: the coarsest plan, from the hosts' keys) and without it (QueryPlan::kUpToMinutes, `hist_60s` kept as long),
//     checks that both answers are the same and prints the median of REPEAT runs (after one
//     unmeasured run that fills the block cache). The store is compacted with its own
//     per-family compression first.
//   storage_bench fleetweek --dir DIR [--hosts 1000] [--days 7] [--repeat 5]
//     The fleet heat map of HOSTS hosts read from the fleet pre-aggregate (aggregator/store/aggregates.h)
//     over the last week of DAYS: writes the aggregate's `hist_60s` and `hist_600s` keys straight
//     into a Store, each the exact merge of the minute (block) keys of all HOSTS hosts x 2 series
//     that `query` would write for them (what ingest and the rollups leave in the aggregate), and
//     times Store::QueryHistograms of the fleet at 600 s columns and at the CLI's default 20-minute
//     columns. It leaves the store in DIR and prints the `trailmap heatmap` range, so the same
//     week can be timed end to end through trailmap-aggregator and the CLI.
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "aggregator/scan/histogram_query.h"
#include "aggregator/scan/store_query.h"
#include "aggregator/store/histogram_merge_operator.h"
#include "aggregator/store/keys.h"
#include "aggregator/store/store.h"
#include "bench/fleet_model.h"

namespace trailmap {
namespace {

using aggregator::QueryPlan;
using aggregator::Store;
using aggregator::StoreOptions;
using Clock = std::chrono::steady_clock;

double MillisSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "storage_bench: %s\n", what.c_str());
  return 1;
}

StoreOptions BenchStoreOptions() {
  StoreOptions o;
  o.sync = false;
  o.rollup_interval_ms = 0;  // rolled up by hand, all at once
  return o;
}

// A raw RocksDB over a Store's directory, every family opened with `compression` on every level
// (and a zstd dictionary when `dictionary`), the histogram families with their merge operator.
struct RawDb {
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;

  ~RawDb() {
    for (rocksdb::ColumnFamilyHandle* h : handles) db->DestroyColumnFamilyHandle(h);
    if (db) db->Close().PermitUncheckedError();
  }
  rocksdb::ColumnFamilyHandle* Named(const std::string& name) const {
    for (rocksdb::ColumnFamilyHandle* h : handles) {
      if (h->GetName() == name) return h;
    }
    return nullptr;
  }
  // The id a meta key ('m' name, 'h' name, ...) maps to; 0 if none.
  uint32_t Id(const std::string& meta_key) const {
    std::string id;
    if (!db->Get(rocksdb::ReadOptions(), Named("meta"), meta_key, &id).ok() || id.size() != 4) {
      return 0;
    }
    return aggregator::GetFixed32BE(id.data());
  }
  static std::unique_ptr<RawDb> Open(const std::string& dir, rocksdb::CompressionType compression,
                                     bool dictionary) {
    std::vector<std::string> names;
    if (!rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &names).ok()) return nullptr;
    rocksdb::BlockBasedTableOptions table;
    table.block_size = 16 << 10;  // as Store sets it
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const std::string& name : names) {
      rocksdb::ColumnFamilyOptions cf;
      cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
      cf.level_compaction_dynamic_level_bytes = true;
      cf.compression = compression;
      cf.bottommost_compression = compression;
      if (dictionary) {
        cf.compression_opts.max_dict_bytes = 16 << 10;
        cf.compression_opts.zstd_max_train_bytes = 100 * (16 << 10);
        cf.bottommost_compression_opts = cf.compression_opts;
        cf.bottommost_compression_opts.enabled = true;
      }
      if (name.rfind("hist", 0) == 0) {
        cf.merge_operator = std::make_shared<aggregator::HistogramMergeOperator>();
      }
      families.emplace_back(name, cf);
    }
    auto raw = std::make_unique<RawDb>();
    rocksdb::DB* db = nullptr;
    if (!rocksdb::DB::Open(rocksdb::DBOptions(), dir, families, &raw->handles, &db).ok()) {
      return nullptr;
    }
    raw->db.reset(db);
    return raw;
  }
};

int Bytes(const std::string& dir, size_t hosts, int hours) {
  constexpr int64_t kStart = 1'700'000'400;  // a multiple of 600
  FleetOptions fleet_options;
  fleet_options.hosts = hosts;
  const FleetModel fleet(fleet_options);
  Result<std::unique_ptr<Store>> opened = Store::Open(dir, BenchStoreOptions());
  if (!opened.ok()) return Fail(opened.status().ToString());
  std::unique_ptr<Store> store = std::move(opened).value();

  // A batch per host per minute (60 seconds), all hosts of a minute in one group commit.
  const Clock::time_point load = Clock::now();
  std::vector<uint64_t> sequence(hosts, 0);
  uint64_t histograms = 0;
  for (int64_t minute = 0; minute < int64_t{hours} * 60; ++minute) {
    std::vector<Batch> batches;
    batches.reserve(hosts);
    for (size_t h = 0; h < hosts; ++h) {
      const int64_t t = kStart + minute * 60;
      Batch b = fleet.HostSecond(h, t);
      for (int64_t s = 1; s < 60; ++s) b.seconds.push_back(fleet.HostSecond(h, t + s).seconds[0]);
      for (const SecondDelta& second : b.seconds) histograms += second.histograms.size();
      b.agent = b.host + "/1";
      b.sequence = ++sequence[h];
      batches.push_back(std::move(b));
    }
    std::vector<const Batch*> group;
    for (const Batch& b : batches) group.push_back(&b);
    for (const Result<aggregator::ApplyOutcome>& r : store->ApplyBatches(group)) {
      if (!r.ok()) return Fail(r.status().ToString());
    }
    if (minute % 10 == 9) {
      if (Result<size_t> r = store->RollUp(true); !r.ok()) return Fail(r.status().ToString());
    }
  }
  if (Result<size_t> r = store->RollUp(true); !r.ok()) return Fail(r.status().ToString());
  if (Status s = store->Flush(); !s.ok()) return Fail(s.ToString());
  std::printf("loaded %d h of %zu hosts x 2 series: %llu host-series-seconds in %.1f s\n", hours,
              hosts, static_cast<unsigned long long>(histograms), MillisSince(load) / 1000);
  store.reset();

  struct Variant {
    const char* name;
    rocksdb::CompressionType type;
    bool dictionary;
  };
  const Variant variants[] = {{"none", rocksdb::kNoCompression, false},
                              {"lz4", rocksdb::kLZ4Compression, false},
                              {"zstd", rocksdb::kZSTD, false},
                              {"zstd+dict", rocksdb::kZSTD, true}};
  std::printf("%-10s %-10s %10s %12s %10s %12s %12s %10s %10s\n", "compress", "family", "keys",
              "raw B/key", "SST MB", "SST B/key", "B/hs-second", "rewrite ms", "scan ms");
  for (const Variant& v : variants) {
    std::unique_ptr<RawDb> raw = RawDb::Open(dir, v.type, v.dictionary);
    if (!raw) return Fail(std::string("reopening with ") + v.name);
    for (const aggregator::HistogramResolution& r : aggregator::kHistogramResolutions) {
      rocksdb::ColumnFamilyHandle* family = raw->Named(r.family);
      rocksdb::CompactRangeOptions compact;
      compact.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
      const Clock::time_point rewrite = Clock::now();
      if (!raw->db->CompactRange(compact, family, nullptr, nullptr).ok()) {
        return Fail(std::string("compacting ") + r.family);
      }
      const double rewrite_ms = MillisSince(rewrite);
      uint64_t sst = 0;
      raw->db->GetIntProperty(family, "rocksdb.total-sst-files-size", &sst);
      // A full scan that decodes every value: what a query pays per key, and the raw size.
      uint64_t keys = 0, raw_bytes = 0, events = 0;
      rocksdb::ReadOptions read;
      read.fill_cache = false;
      const Clock::time_point scan = Clock::now();
      std::unique_ptr<rocksdb::Iterator> it(raw->db->NewIterator(read, family));
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        ++keys;
        raw_bytes += it->key().size() + it->value().size();
        Result<Histogram> h = Histogram::Decode({it->value().data(), it->value().size()});
        if (!h.ok()) return Fail(std::string(r.family) + ": " + h.status().ToString());
        events += h->count();
      }
      const double scan_ms = MillisSince(scan);
      if (keys == 0) return Fail(std::string(r.family) + " is empty");
      std::printf("%-10s %-10s %10llu %12.1f %10.2f %12.1f %12.2f %10.0f %10.0f\n", v.name,
                  r.family, static_cast<unsigned long long>(keys),
                  static_cast<double>(raw_bytes) / keys, sst / 1048576.0,
                  static_cast<double>(sst) / keys, static_cast<double>(sst) / histograms,
                  rewrite_ms, scan_ms);
    }
  }
  return 0;
}

// Minute histograms of the fleet model to draw the long range from: kPool minutes of each of
// kModelHosts hosts and each op, and for each offset o the merge of minutes o .. o + 9 (mod kPool),
// so every 600 s key is exactly the merge of the ten 60 s keys it covers.
struct MinutePool {
  static constexpr size_t kPool = 60, kModelHosts = 4;
  std::string minute[kModelHosts][2][kPool];
  std::string block[kModelHosts][2][kPool];

  explicit MinutePool(const FleetModel& fleet) {
    for (size_t h = 0; h < kModelHosts; ++h) {
      Histogram minutes[2][kPool];
      for (size_t m = 0; m < kPool; ++m) {
        for (int64_t s = 0; s < 60; ++s) {
          const Batch b = fleet.HostSecond(h, static_cast<int64_t>(m) * 60 + s);
          for (const HistogramDelta& d : b.seconds[0].histograms) {
            minutes[d.series][m].MergeEncoded(d.encoded).ok();  // the model's own encoding
          }
        }
      }
      for (size_t op = 0; op < 2; ++op) {
        for (size_t o = 0; o < kPool; ++o) {
          minute[h][op][o] = minutes[op][o].Encode();
          Histogram merged;
          for (size_t i = 0; i < 10; ++i) merged.Merge(minutes[op][(o + i) % kPool]);
          block[h][op][o] = merged.Encode();
        }
      }
    }
  }
};

// The long ranges begin at 2023-01-01T00:00:00Z, a multiple of 8 h, with the fleet model of
// `hosts` hosts (at least the pool's).
constexpr int64_t kLongRangeStart = 1'672'531'200;
FleetOptions LongRangeFleet(size_t hosts) {
  FleetOptions o;
  o.hosts = std::max<size_t>(hosts, MinutePool::kModelHosts);
  return o;
}

// Applies one second, a day before the long range, of each of the first `hosts` hosts of `fleet`
// to a Store in `dir` and rolls it up: the catalog (and the fleet aggregate's owner group) that
// the keys written straight after refer to.
Status ApplyOneSecondOfEach(const std::string& dir, const FleetModel& fleet, size_t hosts) {
  const int64_t second = kLongRangeStart - 86400;
  Result<std::unique_ptr<Store>> opened = Store::Open(dir, BenchStoreOptions());
  if (!opened.ok()) return opened.status();
  for (size_t h = 0; h < hosts; ++h) {
    Batch b = fleet.HostSecond(h, second);
    b.agent = b.host + "/1";
    b.sequence = 1;
    if (Result<aggregator::ApplyOutcome> r = (*opened)->ApplyBatch(b); !r.ok()) return r.status();
  }
  Result<size_t> r = (*opened)->RollUp(true);
  return r.ok() ? Status::Ok() : r.status();
}

int QueryLongRanges(const std::string& dir, size_t hosts, int days, int repeat) {
  const int64_t end = kLongRangeStart + int64_t{days} * 86400;
  const FleetOptions fleet_options = LongRangeFleet(hosts);
  const FleetModel fleet(fleet_options);
  if (Status s = ApplyOneSecondOfEach(dir, fleet, hosts); !s.ok()) return Fail(s.ToString());
  constexpr int64_t kStart = kLongRangeStart;
  const MinutePool pool(fleet);
  const Clock::time_point fill = Clock::now();
  uint64_t written = 0;
  {
    std::unique_ptr<RawDb> raw = RawDb::Open(dir, rocksdb::kLZ4Compression, false);
    if (!raw) return Fail("reopening " + dir);
    const auto id_of = [&raw](const std::string& key) { return raw->Id(key); };
    const uint32_t metric = id_of(aggregator::MetricNameKey(fleet_options.metric));
    const uint32_t series[2] = {id_of(aggregator::SeriesNameKey(metric, "op=read")),
                                id_of(aggregator::SeriesNameKey(metric, "op=write"))};
    rocksdb::ColumnFamilyHandle* minutes = raw->Named("hist_60s");
    rocksdb::ColumnFamilyHandle* blocks = raw->Named("hist_600s");
    rocksdb::WriteOptions unsynced;
    unsynced.disableWAL = true;
    for (size_t h = 0; h < hosts; ++h) {
      const uint32_t host = id_of(aggregator::HostNameKey(fleet.hosts()[h].name));
      const size_t model = h % MinutePool::kModelHosts, offset = (h * 7) % MinutePool::kPool;
      rocksdb::WriteBatch wb;
      for (int64_t m = 0; kStart + m * 60 < end; ++m) {
        const size_t o = (m + offset) % MinutePool::kPool;
        for (size_t op = 0; op < 2; ++op) {
          const aggregator::DataKey key{metric, kStart + m * 60, host, series[op]};
          wb.Put(minutes, aggregator::EncodeDataKey(key), pool.minute[model][op][o]);
          if (m % 10 == 0) wb.Put(blocks, aggregator::EncodeDataKey(key), pool.block[model][op][o]);
          ++written;
        }
        if (wb.Count() >= 20000) {
          if (!raw->db->Write(unsynced, &wb).ok()) return Fail("writing");
          wb.Clear();
        }
      }
      if (!raw->db->Write(unsynced, &wb).ok()) return Fail("writing");
    }
    for (rocksdb::ColumnFamilyHandle* family : {minutes, blocks}) {
      if (!raw->db->Flush(rocksdb::FlushOptions(), family).ok()) return Fail("flushing");
    }
  }
  std::printf("wrote %llu minute keys (and a tenth as many 600 s keys) of %zu hosts x 2 series, "
              "%d days, in %.1f s\n",
              static_cast<unsigned long long>(written), hosts, days, MillisSince(fill) / 1000);

  Result<std::unique_ptr<Store>> opened = Store::Open(dir, BenchStoreOptions());
  if (!opened.ok()) return Fail(opened.status().ToString());
  // Rewritten with the compression the Store chooses per family.
  if (Status s = (*opened)->Compact(); !s.ok()) return Fail(s.ToString());
  const Store& store = **opened;
  struct Range {
    const char* name;
    int64_t from;
    uint32_t step;
  };
  const Range ranges[] = {{"1 week at 600 s", end - 7 * 86400, 600},
                          {"all days at 8 h", kStart, 8 * 3600}};
  std::printf("%-18s %8s %-16s %12s %10s %10s\n", "range", "columns", "plan", "keys read",
              "median ms", "min ms");
  for (const Range& range : ranges) {
    const HistogramQuery q{fleet_options.metric, range.from, end, range.step, "", {}};
    HistogramAnswer answers[2];
    // kHosts: the coarsest plan read from the hosts' keys (this writes no fleet aggregate).
    for (QueryPlan plan : {QueryPlan::kHosts, QueryPlan::kUpToMinutes}) {
      const size_t resolutions = plan == QueryPlan::kHosts ? 4 : 3;
      uint64_t keys = 0;
      for (const aggregator::ScanSegment& s : aggregator::PlanScan(q, q.from, q.to, resolutions)) {
        keys += static_cast<uint64_t>(s.hi - s.lo) /
                aggregator::kHistogramResolutions[s.resolution].seconds * hosts * 2;
      }
      std::vector<double> ms;
      for (int i = 0; i <= repeat; ++i) {  // the first run warms the block cache, not counted
        const Clock::time_point t0 = Clock::now();
        Result<HistogramAnswer> a = QueryHistograms(store, q, plan);
        if (!a.ok()) return Fail(a.status().ToString());
        if (i > 0) ms.push_back(MillisSince(t0));
        answers[plan == QueryPlan::kHosts ? 0 : 1] = std::move(a).value();
      }
      std::sort(ms.begin(), ms.end());
      std::printf("%-18s %8llu %-16s %12llu %10.1f %10.1f\n", range.name,
                  static_cast<unsigned long long>((end - range.from) / range.step),
                  plan == QueryPlan::kHosts ? "with hist_600s" : "hist_60s only",
                  static_cast<unsigned long long>(keys), ms[ms.size() / 2], ms.front());
    }
    bool same = answers[0].cells.size() == answers[1].cells.size();
    for (size_t i = 0; same && i < answers[0].cells.size(); ++i) {
      same = answers[0].cells[i].column == answers[1].cells[i].column &&
             answers[0].cells[i].histogram == answers[1].cells[i].histogram;
    }
    if (!same) return Fail(std::string(range.name) + ": the two plans answer differently");
  }
  std::printf("both plans gave the same answer, cell by cell\n");
  return 0;
}

int FleetWeek(const std::string& dir, size_t hosts, int days, int repeat) {
  const int64_t end = kLongRangeStart + int64_t{days} * 86400;
  const FleetOptions fleet_options = LongRangeFleet(hosts);
  const FleetModel fleet(fleet_options);
  if (Status s = ApplyOneSecondOfEach(dir, fleet, hosts); !s.ok()) return Fail(s.ToString());
  constexpr int64_t kStart = kLongRangeStart;
  // The fleet's minute at pool offset o: the merge of every host's minute key there (host h reads
  // the pool at (m + 7h) mod kPool, as `query` writes it), so the aggregate is exact.
  const MinutePool pool(fleet);
  const Clock::time_point fill = Clock::now();
  std::vector<Histogram> decoded[MinutePool::kModelHosts][2];
  for (size_t h = 0; h < MinutePool::kModelHosts; ++h) {
    for (size_t op = 0; op < 2; ++op) {
      for (size_t o = 0; o < MinutePool::kPool; ++o) {
        Result<Histogram> d = Histogram::Decode(pool.minute[h][op][o]);
        if (!d.ok()) return Fail(d.status().ToString());
        decoded[h][op].push_back(std::move(d).value());
      }
    }
  }
  std::vector<Histogram> fleet_minute(MinutePool::kPool);
  for (size_t o = 0; o < MinutePool::kPool; ++o) {
    for (size_t h = 0; h < hosts; ++h) {
      const size_t model = h % MinutePool::kModelHosts, offset = (h * 7) % MinutePool::kPool;
      for (size_t op = 0; op < 2; ++op) {
        fleet_minute[o].Merge(decoded[model][op][(o + offset) % MinutePool::kPool]);
      }
    }
  }
  std::vector<std::string> minute_value(MinutePool::kPool), block_value(MinutePool::kPool);
  size_t buckets = 0;
  for (size_t o = 0; o < MinutePool::kPool; ++o) {
    minute_value[o] = fleet_minute[o].Encode();
    Histogram block;
    for (size_t i = 0; i < 10; ++i) block.Merge(fleet_minute[(o + i) % MinutePool::kPool]);
    block_value[o] = block.Encode();
    buckets = std::max(buckets, block.BucketsUsed());
  }
  uint64_t written = 0;
  {
    std::unique_ptr<RawDb> raw = RawDb::Open(dir, rocksdb::kLZ4Compression, false);
    if (!raw) return Fail("reopening " + dir);
    const auto id_of = [&raw](const std::string& key) { return raw->Id(key); };
    const uint32_t metric =
        id_of(aggregator::MetricNameKey(fleet_options.metric)) | aggregator::kAggregateMetricBit;
    const uint32_t group = id_of("g");  // the owner list "" (no cluster file)
    if (group == 0) return Fail("no owner group of the fleet aggregate in meta");
    rocksdb::ColumnFamilyHandle* minutes = raw->Named("hist_60s");
    rocksdb::ColumnFamilyHandle* blocks = raw->Named("hist_600s");
    rocksdb::WriteOptions unsynced;
    unsynced.disableWAL = true;
    rocksdb::WriteBatch wb;
    for (int64_t m = 0; kStart + m * 60 < end; ++m) {
      const size_t o = static_cast<size_t>(m) % MinutePool::kPool;
      const aggregator::DataKey key{metric, kStart + m * 60, group, 0};
      wb.Put(minutes, aggregator::EncodeDataKey(key), minute_value[o]);
      if (m % 10 == 0) wb.Put(blocks, aggregator::EncodeDataKey(key), block_value[o]);
      ++written;
    }
    if (!raw->db->Write(unsynced, &wb).ok()) return Fail("writing");
    for (rocksdb::ColumnFamilyHandle* family : {minutes, blocks}) {
      if (!raw->db->Flush(rocksdb::FlushOptions(), family).ok()) return Fail("flushing");
    }
  }
  std::printf(
      "wrote %llu minute keys of the fleet aggregate (and a tenth as many 600 s keys), "
      "each the merge of %zu hosts x 2 series (a 600 s key holds %zu buckets), in %.1f s\n",
      static_cast<unsigned long long>(written), hosts, buckets, MillisSince(fill) / 1000);

  Result<std::unique_ptr<Store>> opened = Store::Open(dir, BenchStoreOptions());
  if (!opened.ok()) return Fail(opened.status().ToString());
  if (Status s = (*opened)->Compact(); !s.ok()) return Fail(s.ToString());
  const Store& store = **opened;
  std::printf("%-24s %8s %12s %10s %10s %14s\n", "range", "columns", "aggregate", "median ms",
              "min ms", "events");
  for (uint32_t step : {600u, 1200u}) {
    const HistogramQuery q{fleet_options.metric, end - 7 * 86400, end, step, "", {}};
    std::vector<double> ms;
    uint64_t events = 0;
    const uint64_t before = store.AggregateQueries();
    for (int i = 0; i <= repeat; ++i) {  // the first run warms the block cache, not counted
      const Clock::time_point t0 = Clock::now();
      Result<HistogramAnswer> a = QueryHistograms(store, q);
      if (!a.ok()) return Fail(a.status().ToString());
      if (i > 0) ms.push_back(MillisSince(t0));
      events = 0;
      for (const QueryCell& c : a->cells) events += c.histogram.count();
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%-24s %8lld %12s %10.1f %10.1f %14llu\n",
                step == 600 ? "1 week at 600 s" : "1 week at 20 min",
                static_cast<long long>(7 * 86400 / step),
                store.AggregateQueries() - before == static_cast<uint64_t>(repeat) + 1 ? "read"
                                                                                       : "NOT READ",
                ms[ms.size() / 2], ms.front(), static_cast<unsigned long long>(events));
  }
  std::printf(
      "end to end: trailmap-aggregator --data %s ... ; trailmap heatmap --metric %s "
      "--from %lld --to %lld\n",
      dir.c_str(), fleet_options.metric.c_str(), static_cast<long long>(end - 7 * 86400),
      static_cast<long long>(end));
  return 0;
}

}  // namespace
}  // namespace trailmap

int main(int argc, char** argv) {
  CLI::App app("storage_bench: bytes on disk per resolution and compression; long-range heat maps "
               "with and without hist_600s (docs/BENCHMARKS.md)");
  app.require_subcommand(1);
  std::string dir;
  size_t hosts = 0;
  int hours = 4, days = 365, repeat = 5;
  CLI::App* bytes = app.add_subcommand("bytes", "SST bytes per family and compression");
  bytes->add_option("--dir", dir, "a directory for the store (must not exist)")->required();
  bytes->add_option("--hosts", hosts, "simulated hosts")->default_val(100);
  bytes->add_option("--hours", hours, "hours of backfill")->default_val(4);
  CLI::App* query = app.add_subcommand("query", "heat maps of a week and of DAYS");
  query->add_option("--dir", dir, "a directory for the store (must not exist)")->required();
  query->add_option("--hosts", hosts, "hosts")->default_val(1);
  query->add_option("--days", days, "days of data")->default_val(365);
  query->add_option("--repeat", repeat, "timed runs of each query")->default_val(5);
  CLI::App* week = app.add_subcommand("fleetweek",
                                      "the fleet heat map of a week from the "
                                      "fleet pre-aggregate of HOSTS hosts");
  week->add_option("--dir", dir, "a directory for the store (must not exist)")->required();
  week->add_option("--hosts", hosts, "hosts")->default_val(1000);
  week->add_option("--days", days, "days of data (the last 7 are queried)")->default_val(7);
  week->add_option("--repeat", repeat, "timed runs of each query")->default_val(5);
  CLI11_PARSE(app, argc, argv);
  if (bytes->parsed()) return trailmap::Bytes(dir, hosts, hours);
  if (week->parsed()) return trailmap::FleetWeek(dir, hosts, days, repeat);
  return trailmap::QueryLongRanges(dir, hosts, days, repeat);
}
