// RunStackQuery: the scan behind QueryStacks (contract in aggregator/scan/store_query.h).
//
// The range [from, to) is split at minute boundaries: the whole minutes inside it are read from
// `stacks_60s` (one value per minute, host and series, merged at ingest), the ragged ends from
// `stacks`, so a ten-minute flame graph reads a sixtieth of the per-second values. Each key's
// host and series pass the host list and the predicate (decided once per (host, series)); its
// counts are added up by global stack id, and only at the end are the ids turned into folded
// text: one catalog lookup per distinct stack, not per value.
//
// A region query (StackQuery::region, docs/region-flame.md) first counts the band's events per
// host-second from the 1 s histograms (aggregator/scan/band_count.h), then reads the 1 s stack
// values of exactly those host-seconds, seeking to each, and counts each value its host-second's
// events times. Both steps run in time slices, one a query thread, each counting its seconds' band
// and seeking to their stacks into sums of its own, added up at the end. Its baseline, when asked
// for, is the selected hosts' whole range from the minute rollups minus the selected
// host-seconds' samples, gathered by the same pass: exact under the one snapshot both read.

// Thread safety: reads only; may run on any thread alongside the store's writer.
#pragma once

#include "aggregator/store/catalog.h"
#include "core/query_wire.h"
#include "core/status.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
}  // namespace rocksdb

namespace trailmap::aggregator {

class QueryBudget;

// What a stack query reads.
struct StackScan {
  rocksdb::DB* db = nullptr;
  rocksdb::ColumnFamilyHandle* stacks = nullptr;
  rocksdb::ColumnFamilyHandle* stacks_60s = nullptr;
  rocksdb::ColumnFamilyHandle* hist = nullptr;  // the 1 s histograms a region's band is read from
  int threads = 1;                              // a region's band count scans on up to this many
  // The block cache's capacity, which decides whether a region's band count fills it
  // (BandFillsCache in aggregator/scan/band_count.h); 0: unknown, always.
  uint64_t block_cache_bytes = 0;
};

// `budget` (null: no limits) is charged with every key visited and every distinct stack (as
// cells); past a limit the scan stops with the budget's error (aggregator/scan/query_budget.h).
Result<StackAnswer> RunStackQuery(const StackScan& scan, const Catalog& catalog,
                                  const StackQuery& query, QueryBudget* budget = nullptr);

}  // namespace trailmap::aggregator
