#include "aggregator/scan/store_query.h"

#include <optional>

#include "aggregator/scan/histogram_query.h"
#include "aggregator/scan/scalar_query.h"
#include "aggregator/scan/stack_query.h"
#include "aggregator/store/catalog.h"
#include "aggregator/store/database.h"
#include "aggregator/store/rollup_driver.h"

namespace trailmap::aggregator {

Result<HistogramAnswer> QueryHistograms(const Store& store, const HistogramQuery& query,
                                        QueryPlan plan, QueryBudget* budget, bool pass_through) {
  const Database& db = store.database();
  const Catalog& catalog = store.catalog();
  const size_t resolutions = plan == QueryPlan::kFinestOnly    ? 1
                             : plan == QueryPlan::kUpToMinutes ? kBlockFamily
                                                               : kHistogramResolutionCount;
  HistogramScan scan{db.db(),
                     {db.hist_families().data(), resolutions},
                     nullptr,
                     {},
                     store.options().query_threads};
  scan.budget = budget;
  // A scalar metric answers with one histogram sample per host-second
  // (aggregator/scan/scalar_query.h).
  MetricRecord record;
  const std::optional<uint32_t> metric = catalog.FindMetric(query.metric, &record);
  if (metric && record.kind == MetricKind::kScalar) {
    return RunScalarHistogramQuery(db.db(), db.scalar(), catalog, *metric, record, query, budget);
  }
  std::optional<AggregatePlan> aggregate;
  {
    auto view = db.LockView();
    scan.snapshot = db.db()->GetSnapshot();
    // After the snapshot: every aggregate id its keys use is known (aggregates.h).
    if (metric && plan == QueryPlan::kCoarsest) aggregate = store.aggregates().Plan(query, *metric);
    const uint32_t read = aggregate ? aggregate->metric : metric.value_or(0);
    if (metric && resolutions > 1) {
      scan.pending_minutes = store.rollups().minutes().Of(read, query.from, query.to);
    }
    if (metric && resolutions > kBlockFamily) {
      scan.pending_blocks = store.rollups().blocks().Of(read, query.from, query.to);
    }
  }
  scan.aggregate = aggregate ? &*aggregate : nullptr;
  scan.pass_through = pass_through;
  if (aggregate) store.CountAggregateQuery();
  Result<HistogramAnswer> answer = RunHistogramQuery(scan, catalog, query);
  db.db()->ReleaseSnapshot(scan.snapshot);
  if (answer.ok()) {  // a cell whose merge saturated is counted with the merges that did
    uint64_t saturated = 0;
    for (const QueryCell& cell : answer->cells) saturated += cell.histogram.saturated() ? 1 : 0;
    if (saturated > 0) db.CountSaturated(saturated);
  }
  return answer;
}

Result<StackAnswer> QueryStacks(const Store& store, const StackQuery& query, QueryBudget* budget) {
  const Database& db = store.database();
  const StackScan scan{db.db(),
                       db.stacks(),
                       db.stacks_60s(),
                       db.hist(0),
                       store.options().query_threads,
                       uint64_t{store.options().block_cache_mb} << 20};
  return RunStackQuery(scan, store.catalog(), query, budget);
}

}  // namespace trailmap::aggregator
