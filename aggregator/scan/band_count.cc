#include "aggregator/scan/band_count.h"

#include <rocksdb/db.h>

#include <algorithm>
#include <memory>
#include <string>

#include "aggregator/store/keys.h"
#include "aggregator/scan/scan_parts.h"
#include "aggregator/scan/query_budget.h"
#include "aggregator/scan/series_filter.h"
#include "core/counts.h"
#include "core/histogram.h"

namespace trailmap::aggregator {
namespace {

// Fewer seconds than this a thread are not worth one.
constexpr int64_t kMinSecondsPerThread = 30;

struct Slice {
  Status status;
  std::vector<BandSecond> seconds;
};

void CountSlice(const BandScan& scan, const Catalog& catalog, uint32_t metric, int64_t lo,
                int64_t hi, const HostMask& allowed, const Predicate& where, const BucketBand& band,
                Slice* out) {
  const std::string upper = DataKeyPrefix(metric, hi);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions options;
  options.iterate_upper_bound = &upper_slice;
  options.snapshot = scan.snapshot;
  options.adaptive_readahead = true;
  options.fill_cache = scan.fill_cache;
  std::unique_ptr<rocksdb::Iterator> it(scan.db->NewIterator(options, scan.hist));
  SeriesFilter filter(catalog, where);
  KeyMeter meter(scan.budget);
  DataKey key;
  bool saturated = false;
  for (it->Seek(DataKeyPrefix(metric, lo)); it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key();
    if (!DecodeDataKey(std::string_view(k.data(), k.size()), &key) || key.metric != metric) {
      out->status = Status::Corruption("hist: key of " + std::to_string(k.size()) + " bytes");
      return;
    }
    if (Status s = meter.Add(); !s.ok()) {  // every key visited counts, kept or not
      out->status = s;
      return;
    }
    if (!allowed.Keeps(key.host, key.second) || !filter.Passes(key.host, key.series)) continue;
    const rocksdb::Slice v = it->value();
    const std::string_view value(v.data(), v.size());
    Result<bool> touches = Histogram::EncodedTouches(value, band);
    Result<uint64_t> n = touches.ok() && *touches ? Histogram::EncodedBandCount(value, band)
                                                  : Result<uint64_t>(uint64_t{0});
    if (!touches.ok() || !n.ok()) {
      out->status =
          Status::Corruption("hist: second " + std::to_string(key.second) + ", host " +
                             std::to_string(key.host) + ", series " + std::to_string(key.series) +
                             ": " + (touches.ok() ? n.status() : touches.status()).message());
      return;
    }
    if (*n == 0) continue;
    std::vector<BandSecond>& seconds = out->seconds;
    if (!seconds.empty() && seconds.back().second == key.second &&
        seconds.back().host == key.host) {
      seconds.back().events = SaturatingCountAdd(seconds.back().events, *n, &saturated);
    } else {
      seconds.push_back(BandSecond{key.second, key.host, *n});
    }
  }
  if (!it->status().ok()) {
    out->status = Status::IOError("hist scan: " + it->status().ToString());
    return;
  }
  out->status = meter.Flush();
}

}  // namespace

bool BandFillsCache(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* hist, uint32_t metric,
                    int64_t from, int64_t to, uint64_t cache_bytes) {
  if (cache_bytes == 0 || from >= to) return true;
  const std::string lo = DataKeyPrefix(metric, from), hi = DataKeyPrefix(metric, to);
  const rocksdb::Range range(lo, hi);
  rocksdb::SizeApproximationOptions options;
  options.include_memtables = true;
  options.files_size_error_margin = 0.1;  // a rough figure is enough, and cheaper
  uint64_t stored = 0;
  if (!db->GetApproximateSizes(options, hist, &range, 1, &stored).ok()) return true;
  return stored <= cache_bytes / 4;
}

Result<std::vector<BandSecond>> CountBand(const BandScan& scan, const Catalog& catalog,
                                          uint32_t metric, int64_t from, int64_t to,
                                          const HostMask& allowed, const Predicate& where) {
  if (from >= to || allowed.keeps_none()) return std::vector<BandSecond>{};
  const auto [low, high] = where.ValueRange();
  const BucketBand band = BucketBand::Of(low, high);
  const uint64_t span = static_cast<uint64_t>(to) - static_cast<uint64_t>(from);
  const int parts = static_cast<int>(std::clamp<uint64_t>(
      span / kMinSecondsPerThread, 1, static_cast<uint64_t>(std::max(1, scan.threads))));
  std::vector<int64_t> bounds;
  for (int i = 0; i <= parts; ++i) {
    bounds.push_back(static_cast<int64_t>(static_cast<uint64_t>(from) + span * i / parts));
  }
  std::vector<Slice> slices(parts);
  RunScanParts(parts, [&](int i) {
    CountSlice(scan, catalog, metric, bounds[i], bounds[i + 1], allowed, where, band, &slices[i]);
  });
  std::vector<BandSecond> out = std::move(slices[0].seconds);
  for (int i = 0; i < parts; ++i) {
    if (!slices[i].status.ok()) return slices[i].status;
    if (i > 0) out.insert(out.end(), slices[i].seconds.begin(), slices[i].seconds.end());
  }
  return out;
}

}  // namespace trailmap::aggregator
