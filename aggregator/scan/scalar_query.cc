#include "aggregator/scan/scalar_query.h"

#include <rocksdb/db.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "aggregator/scan/host_mask.h"
#include "aggregator/store/keys.h"
#include "aggregator/scan/query_budget.h"
#include "aggregator/scan/series_filter.h"
#include "core/predicate.h"
#include "core/units.h"

namespace trailmap::aggregator {

Result<HistogramAnswer> RunScalarHistogramQuery(rocksdb::DB* db,
                                                rocksdb::ColumnFamilyHandle* scalar,
                                                const Catalog& catalog, uint32_t metric_id,
                                                const MetricRecord& metric,
                                                const HistogramQuery& query,
                                                QueryBudget* budget) {
  if (query.step == 0) return Status::InvalidArgument("step must be at least 1 second");
  if (query.from >= query.to) return Status::InvalidArgument("empty time range: from >= to");
  HistogramAnswer answer;
  answer.kind = MetricKind::kScalar;
  answer.unit = FixedPointUnit(metric.unit);
  const double step = ScalarStep(metric.unit);

  Result<Predicate> where = Predicate::Parse(query.where);
  if (!where.ok()) return Status::InvalidArgument("--where: " + where.status().message());
  // "value > 10ms" on a metric in % would silently keep nothing: say what the value is in.
  for (const std::string& literal : where->ValueLiterals()) {
    if (Result<uint64_t> v = ParseQuantity(literal, answer.unit); !v.ok()) {
      return Status::InvalidArgument("--where: " + query.metric + " is in " + metric.unit + ": " +
                                     v.status().message());
    }
  }

  const HostMask allowed = HostMask::Make(catalog, query.hosts, query.replicas, query.from, query.to);
  if (allowed.keeps_none()) return answer;

  const std::string lower = DataKeyPrefix(metric_id, query.from);
  const std::string upper = DataKeyPrefix(metric_id, query.to);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read_options;
  read_options.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(read_options, scalar));

  Grouping grouping(catalog, query.group_by);
  SeriesFilter filter(catalog, *where);
  std::vector<QueryCell> cells;
  std::vector<CellSummary> sums;       // instead of cells, when the query asks for summaries
  std::vector<int32_t> cell_of_group;  // for the current column: group -> index in cells, or -1
  uint64_t current_column = UINT64_MAX;
  DataKey key;
  KeyMeter meter(budget);
  // A new cell (or summary) is charged to the budget, with the groups so far.
  const auto open_cell = [budget, &grouping](uint32_t group) -> Status {
    if (budget == nullptr) return Status::Ok();
    if (Status s = budget->ChargeCells(1); !s.ok()) return s;
    return budget->CheckGroups(std::max<size_t>(grouping.names().size(), group + 1));
  };
  for (it->Seek(lower); it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key();
    if (!DecodeDataKey(std::string_view(k.data(), k.size()), &key)) {
      return Status::Corruption("scalar: key of " + std::to_string(k.size()) + " bytes");
    }
    if (Status s = meter.Add(); !s.ok()) return s;  // every key visited counts, kept or not
    if (!allowed.Keeps(key.host, key.second)) continue;
    if (!filter.Passes(key.host, key.series)) continue;
    const rocksdb::Slice v = it->value();
    Result<double> value = DecodeScalar({v.data(), v.size()});
    if (!value.ok()) {
      return Status::Corruption("scalar: second " + std::to_string(key.second) + ", host " +
                                std::to_string(key.host) + ", series " +
                                std::to_string(key.series) + ": " + value.status().message());
    }
    if (!std::isfinite(*value) || !where->ValueMatches(*value)) continue;
    // A histogram holds whole non-negative steps; summaries hold any finite value.
    const double fixed = std::round(*value / step);
    if (!query.summaries && (*value < 0 || fixed >= 18446744073709551616.0)) continue;
    const uint32_t group = grouping.GroupOf(key.host, key.series);
    const uint64_t column =
        (static_cast<uint64_t>(key.second) - static_cast<uint64_t>(query.from)) / query.step;
    if (column != current_column) {
      current_column = column;
      std::fill(cell_of_group.begin(), cell_of_group.end(), -1);
    }
    if (group >= cell_of_group.size()) cell_of_group.resize(group + 1, -1);
    if (query.summaries) {
      // Exact, in the metric's own unit: no fixed point.
      if (cell_of_group[group] < 0) {
        if (Status s = open_cell(group); !s.ok()) return s;
        cell_of_group[group] = static_cast<int32_t>(sums.size());
        sums.push_back(CellSummary{static_cast<uint32_t>(column), group, 0, 0, 0, 0});
      }
      sums[cell_of_group[group]].Add(CellSummary{0, 0, 1, *value, *value, *value});
      continue;
    }
    if (cell_of_group[group] < 0) {
      if (Status s = open_cell(group); !s.ok()) return s;
      cell_of_group[group] = static_cast<int32_t>(cells.size());
      cells.push_back(QueryCell{static_cast<uint32_t>(column), group, Histogram(), {}});
    }
    cells[cell_of_group[group]].histogram.Record(static_cast<uint64_t>(fixed), 1);
  }
  if (!it->status().ok()) return Status::IOError("scalar scan: " + it->status().ToString());
  if (Status s = meter.Flush(); !s.ok()) return s;

  // Groups by name, cells by (column, group): the order every answer has.
  std::vector<std::string>& names = grouping.names();
  std::vector<uint32_t> order(names.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&names](uint32_t a, uint32_t b) { return names[a] < names[b]; });
  std::vector<uint32_t> rank(names.size());
  for (uint32_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
  for (QueryCell& cell : cells) cell.group = rank[cell.group];
  std::stable_sort(cells.begin(), cells.end(), [](const QueryCell& a, const QueryCell& b) {
    return a.column != b.column ? a.column < b.column : a.group < b.group;
  });
  for (CellSummary& s : sums) s.group = rank[s.group];
  std::stable_sort(sums.begin(), sums.end(), [](const CellSummary& a, const CellSummary& b) {
    return a.column != b.column ? a.column < b.column : a.group < b.group;
  });
  if (query.summaries) answer.unit = metric.unit;
  answer.summaries = std::move(sums);
  answer.groups.reserve(names.size());
  for (uint32_t i : order) answer.groups.push_back(std::move(names[i]));
  answer.cells = std::move(cells);
  return answer;
}

}  // namespace trailmap::aggregator
