// RunHistogramQuery: the scan behind Store::QueryHistograms (contract in aggregator/store.h).
//
// One range scan of the `hist` column family over [metric|from, metric|to) with
// iterate_upper_bound. Keys arrive in time order, so every column's cells are built while that
// column is current: a vector from group index to cell (reset when the column changes) replaces
// any map, groups are resolved once per host or series id and cached in vectors, and each value
// is merged straight from its encoding (Histogram::MergeEncoded) — no allocation per key beyond
// the growth of the cell histograms themselves.
//
// Long ranges are cut into `threads` time slices scanned in parallel (each its own iterator over
// one shared snapshot) and their partials joined; on a 2-core box two slices nearly halve the
// time of a heat map, whose cost is the decoding of every stored histogram.
//
// Thread safety: reads only; may run on any thread alongside the store's writer.
#pragma once

#include "aggregator/catalog.h"
#include "core/query_wire.h"
#include "core/status.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
}  // namespace rocksdb

namespace trailmap::aggregator {

// The group name of data that lacks the field a query groups by.
inline constexpr const char* kNoGroupValue = "(none)";
// A range shorter than twice this is scanned by the calling thread alone.
inline constexpr uint64_t kMinSecondsPerThread = 300;

Result<HistogramAnswer> RunHistogramQuery(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* hist,
                                          const Catalog& catalog, const HistogramQuery& query,
                                          int threads = 1);

}  // namespace trailmap::aggregator
