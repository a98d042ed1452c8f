// RunStackQuery: the scan behind Store::QueryStacks (contract in aggregator/store.h).
//
// The range [from, to) is split at minute boundaries: the whole minutes inside it are read from
// `stacks_60s` (one value per minute, host and series, merged at ingest), the ragged ends from
// `stacks`, so a ten-minute flame graph reads a sixtieth of the per-second values. Each key's
// host and series pass the host list and the predicate (decided once per (host, series)); its
// counts are added up by global stack id, and only at the end are the ids turned into folded
// text: one catalog lookup per distinct stack, not per value.
//
// A weighted query (StackQuery::weights, region -> code) reads only the 1 s values, since its
// weights are per second, and multiplies each value's counts by its host-second's weight.
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

class QueryBudget;

// `budget` (null: no limits) is charged with every key visited and every distinct stack (as
// cells); past a limit the scan stops with the budget's error (aggregator/query_budget.h).
Result<StackAnswer> RunStackQuery(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* stacks,
                                  rocksdb::ColumnFamilyHandle* stacks_60s, const Catalog& catalog,
                                  const StackQuery& query, QueryBudget* budget = nullptr);

}  // namespace trailmap::aggregator
