// RunHistogramQuery: the scan behind QueryHistograms (contract in aggregator/scan/store_query.h).
//
// Planning. The histogram families hold the same data at 1, 10, 60 and 600 s per key (keys.h).
// Each column [from + c*step, from + (c+1)*step) is read as its coarsest aligned buckets: the
// 600 s buckets that lie wholly inside it from `hist_600s`, the 60 s buckets of what is left at
// its edges from `hist_60s`, then 10 s buckets from `hist_10s`, the remaining seconds from
// `hist`. No bucket crosses a column edge, so the answer is exactly what the 1 s data gives (same
// counts, buckets, min, max and sum), and the cost follows the columns asked for: one column over
// 10 minutes reads about 10 keys per series instead of 600, a column of a week 1,008 instead of
// 604,800; a heat map at 1 s reads every second. Minutes whose rollups are still pending
// (aggregator/store/rollup.h) are read from `hist` whole; 10-minute blocks that are pending, or
// hold a pending minute, are read from the families up to `hist_60s`. PlanScan is that plan,
// adjacent pieces of one family joined into one segment.
//
// Scanning. Each segment is a range scan [metric|lo, metric|hi) of its family, segments in time
// order, so every column's cells are built while that column is current: a vector from group
// index to cell (reset when the column changes) replaces any map, groups are resolved once per
// host or series id and cached in vectors, and each value is merged straight from its encoding
// (Histogram::MergeEncoded) — no allocation per key beyond the growth of the cell histograms.
//
// Plans that read many keys are cut into `threads` time slices scanned in parallel (each its own
// iterators over one shared snapshot) and their partials joined; on a 2-core box two slices nearly
// halve the time of a heat map, whose cost is the decoding of every stored histogram.
//
// One column (a per-host view: columns, trails) is read host after host instead: an iterator per
// stored second of the plan, their keys merged in (host, series) order, so each cell takes all
// its values while its buckets are in the CPU's cache (in key order 1,000 host cells of ~8 KB
// each took turns, and the cache misses were most of the query), when it reads up to 4,096
// stored seconds a series. Its hosts, not its time, are then shared out between the threads
// (kMinHostsPerThread). Both give exactly the key-order answer.
//
// Thread safety: reads only; may run on any thread alongside the store's writer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "aggregator/store/aggregates.h"
#include "aggregator/store/catalog.h"
#include "aggregator/store/keys.h"
#include "core/query_wire.h"
#include "core/status.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
class Snapshot;
}  // namespace rocksdb

namespace trailmap::aggregator {

class QueryBudget;

// A plan that reads fewer than twice this many keys per series is scanned by the calling thread
// alone.
inline constexpr uint64_t kMinKeysPerThread = 300;
// A one-column plan (a per-host view) is shared out by hosts over the threads when there are at
// least twice this many hosts.
inline constexpr uint64_t kMinHostsPerThread = 50;

// A piece of a plan: seconds [lo, hi) read from kHistogramResolutions[resolution].
struct ScanSegment {
  size_t resolution = 0;
  int64_t lo = 0;
  int64_t hi = 0;
  bool operator==(const ScanSegment&) const = default;
};

// The plan for the part [lo, hi) of `query`'s range, using the first `resolutions` entries of
// kHistogramResolutions (1 = `hist` alone) except in the minutes starting at `pending_minutes`
// (sorted; their rollups are behind, aggregator/store/rollup.h), which are read from `hist`, and in the
// 10-minute blocks starting at `pending_blocks` (sorted) or holding a pending minute, which are
// read without `hist_600s`. Segments are in time order and cover [lo, hi).
std::vector<ScanSegment> PlanScan(const HistogramQuery& query, int64_t lo, int64_t hi,
                                  size_t resolutions,
                                  const std::vector<int64_t>& pending_minutes = {},
                                  const std::vector<int64_t>& pending_blocks = {});

// What a query reads.
struct HistogramScan {
  rocksdb::DB* db = nullptr;
  // families[i] holds kHistogramResolutions[i]; a span of one reads `hist` alone.
  std::span<rocksdb::ColumnFamilyHandle* const> families;
  const rocksdb::Snapshot* snapshot = nullptr;  // every slice reads this one; null = a new one
  std::vector<int64_t> pending_minutes;         // of the metric read, sorted
  int threads = 1;
  std::vector<int64_t> pending_blocks;  // of the metric read, sorted (10-minute block starts)
  // Set: read this aggregate's keys instead of the hosts' (aggregator/store/aggregates.h); the query's
  // hosts and predicate are then empty, and its grouping is the plan's.
  const AggregatePlan* aggregate = nullptr;
  // Charged with every key visited and cell opened, by every slice; past a limit (or its
  // deadline, or once the aggregator stops) the scan stops and the query fails with the budget's
  // error (aggregator/scan/query_budget.h). Null: no limits.
  QueryBudget* budget = nullptr;
  // true: for an answer that is only sent on, every cell leaves encoded (QueryCell::encoded; a
  // saturated one excepted): a cell made of one stored value keeps that value's encoding,
  // validated but not decoded, and the others are encoded on the scan's threads. false: every
  // cell decoded.
  bool pass_through = false;
};

Result<HistogramAnswer> RunHistogramQuery(const HistogramScan& scan, const Catalog& catalog,
                                          const HistogramQuery& query);

}  // namespace trailmap::aggregator
