// QueryHistograms and QueryStacks: a query answered from a Store, the entry the query server
// (and tools and tests) call. Each takes what it reads from the store at one consistent moment
// (a snapshot with the spans then pending a rollup and the pre-aggregate that answers it, under
// the store's view lock: aggregator/store/database.h) and runs the scans of this folder on it.
//
// Thread safety: any number of queries at once, alongside ingest and the rollup pass.
#pragma once

#include "aggregator/store/store.h"
#include "core/query_wire.h"
#include "core/status.h"

namespace trailmap::aggregator {

class QueryBudget;  // aggregator/scan/query_budget.h

// Which histogram families a query may read.
enum class QueryPlan {
  kCoarsest,     // the coarsest resolution that gives the asked columns exactly (the default)
  kFinestOnly,   // `hist` alone, every stored second (tests and tools compare the two)
  kHosts,        // as kCoarsest, but from the hosts' keys even where an aggregate could answer
  kUpToMinutes,  // the coarsest up to `hist_60s`, not `hist_600s` (bench/storage_bench compares)
};

// Partial aggregates of one metric over [query.from, query.to): one merged histogram per
// (column, group) that holds data, cells sorted by column then group, groups sorted by name.
// group_by "" gives the one group ""; "host" a group per host; any other key a group per value
// of that field, looked up in the series fields and then the host labels, and "(none)" for data
// without it. `hosts` (if not empty) keeps only those hosts. An unknown metric is an empty
// answer, not an error; Corruption if a stored histogram does not decode.
// A scalar metric is answered by RunScalarHistogramQuery (aggregator/scan/scalar_query.h): each
// stored host-second value one sample, in fixed point.
// The answer is the same under every plan (the rollups hold exact merges).
// `budget` (null: no limits) is charged inside the scans (aggregator/scan/query_budget.h): past
// one of its limits, its deadline or a stop, the query stops with the budget's error. With
// `pass_through`, a cell of one stored value keeps its encoding (QueryCell::encoded) for an
// answer that is only sent on (the query server); without, every cell is decoded.
Result<HistogramAnswer> QueryHistograms(const Store& store, const HistogramQuery& query,
                                        QueryPlan plan = QueryPlan::kCoarsest,
                                        QueryBudget* budget = nullptr, bool pass_through = false);

// Stack samples of one metric merged over [query.from, query.to), query.hosts and
// query.where: every distinct stack with its count, sorted by stack text. Whole minutes of the
// range are read from `stacks_60s`. An unknown metric is an empty answer; InvalidArgument for a
// predicate that compares values; Corruption if a stored value does not decode.
Result<StackAnswer> QueryStacks(const Store& store, const StackQuery& query,
                                QueryBudget* budget = nullptr);

}  // namespace trailmap::aggregator
