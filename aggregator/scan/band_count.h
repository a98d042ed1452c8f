// CountBand: the first half of region -> code (docs/region-flame.md), how many of a latency or
// size metric's events each host-second holds in a value band, read from the 1 s histograms.
//
// The scan reads `hist` over [from, to) in key order (second, then host, then series), on up to
// `threads` threads each taking a slice of the seconds, and keeps a key when its host passes
// `allowed` at that second and its (host, series) passes the predicate's field tests. A value's
// events in the band are counted from its encoding (Histogram::EncodedBandCount; a header whose
// min and max lie outside the band is skipped unread). The series of one host-second add up,
// saturating at kMaxTotalCount. Nothing is allocated per key: the answer is one entry per
// host-second holding any, which is what the stack pass seeks to next.
//
// Thread safety: reads only, under the caller's snapshot; runs beside the store's writer.
#pragma once

#include <cstdint>
#include <vector>

#include "aggregator/store/catalog.h"
#include "aggregator/scan/host_mask.h"
#include "core/predicate.h"
#include "core/status.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
class Snapshot;
}  // namespace rocksdb

namespace trailmap::aggregator {

class QueryBudget;

struct BandSecond {
  int64_t second = 0;
  uint32_t host = 0;    // host id
  uint64_t events = 0;  // > 0
  bool operator==(const BandSecond&) const = default;
};

struct BandScan {
  rocksdb::DB* db = nullptr;
  rocksdb::ColumnFamilyHandle* hist = nullptr;  // the 1 s histograms
  const rocksdb::Snapshot* snapshot = nullptr;  // required: the stack pass reads the same state
  int threads = 1;
  QueryBudget* budget = nullptr;  // charged per key visited; null = no limits
  bool fill_cache = true;         // false: the blocks read are not kept in the block cache
};

// Whether a band count of `metric` over [from, to) should fill the block cache of
// `cache_bytes` (0: unknown, always): not when the range's stored bytes pass a quarter of it.
// Stored blocks are compressed about 2-3 times (zstd at the bottommost level), so such a scan
// would take more than half the cache for blocks that LRU evicts again before the next scan of
// the range comes back to them, and it would evict on the way what the stack pass and other
// queries read next (docs/benchmarks-log.md, "The web page and trailmap-query").
bool BandFillsCache(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* hist, uint32_t metric,
                    int64_t from, int64_t to, uint64_t cache_bytes);

// The host-seconds of `metric` in [from, to) holding events that `where` keeps (its value range
// is the band; its other tests pick series), in (second, host) order. Corruption naming the key
// for a value that does not decode; the budget's error past a limit.
Result<std::vector<BandSecond>> CountBand(const BandScan& scan, const Catalog& catalog,
                                          uint32_t metric, int64_t from, int64_t to,
                                          const HostMask& allowed, const Predicate& where);

}  // namespace trailmap::aggregator
