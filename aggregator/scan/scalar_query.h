// RunScalarHistogramQuery: a histogram query on a scalar metric (cpu.usage in %, mem.rss in B,
// net.rx.bytes in B/s), behind QueryHistograms (aggregator/scan/store_query.h).
//
// Every stored host-second value becomes ONE sample of a histogram, so the existing views work
// on scalars unchanged: a heat map's shade is the number of host-seconds at a value (the fleet
// utilization heat map), columns and trails are one host's distribution of its seconds, and
// stats' count, mean, min and max are exact over host-seconds. A cell's histogram also keeps the
// exact count, sum, min and max, which is all a line chart needs (avg = sum / count).
//
// Histograms hold integers, so a value is stored in fixed point: value / ScalarStep(unit),
// rounded (core/units.h; 0.01 for "%", 1 for bytes and byte rates, 0.001 otherwise), and the
// answer's unit names the step ("0.01%"), which Format/ParseQuantity understand. Values that are
// negative or not finite cannot be held in a histogram and are skipped there.
//
// A comparison on the value in `where` (`value > 50%`) keeps or drops individual host-second
// values, compared with their fraction (Predicate::ValueMatches); every other comparison selects
// series by host, labels and fields, as for histograms.
//
// With query.summaries the answer holds a CellSummary per cell instead (count, sum, min, max of
// the raw values, exact, in the metric's own unit; the answer's unit is then metric.unit).
// Summaries keep negative values (a statsd gauge, a counter's rate that went down): the line
// chart draws them below a zero line. Values that are not finite are skipped in both forms.
//
// One range scan of the `scalar` column family over [metric|from, metric|to), on the calling
// thread (an 8-byte value decodes in nanoseconds; 1,000 hosts × 10 minutes is 600,000 keys).
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

// `metric` is the catalog's record of query.metric (kind kScalar). The answer has kind kScalar,
// unit FixedPointUnit(metric.unit), groups sorted by name, cells sorted by (column, group).
// `budget` (null: no limits) is charged with every key visited and cell opened; past a limit the
// scan stops with the budget's error (aggregator/scan/query_budget.h).
Result<HistogramAnswer> RunScalarHistogramQuery(rocksdb::DB* db,
                                                rocksdb::ColumnFamilyHandle* scalar,
                                                const Catalog& catalog, uint32_t metric_id,
                                                const MetricRecord& metric,
                                                const HistogramQuery& query,
                                                QueryBudget* budget = nullptr);

}  // namespace trailmap::aggregator
