#include "query/views/heatmap_cell.h"

#include <algorithm>

namespace trailmap {

HeatmapCell AssembleHeatmapCell(const HeatmapView& view, uint32_t row, uint32_t column,
                                const MergedGrid& column_by_host,
                                std::vector<std::string> missing_shards) {
  const size_t i = view.Index(row, column);
  HeatmapCell cell;
  cell.metric = view.metric;
  cell.unit = view.unit;
  cell.from = view.ColumnStart(column);
  cell.to = view.ColumnEnd(column);
  cell.row = row;
  cell.column = column;
  cell.low = view.RowLow(row);
  cell.high = view.RowHigh(row);
  cell.count = view.counts[i];
  cell.group_by = view.group_by;
  if (!view.breakdown.empty() && view.group_by != "host") {
    for (const auto& [g, n] : view.breakdown[i]) cell.groups.emplace_back(view.groups[g], n);
    std::stable_sort(cell.groups.begin(), cell.groups.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
  }
  cell.hosts = CellGroups(column_by_host, view, row);
  cell.missing_shards = std::move(missing_shards);
  return cell;
}

}  // namespace trailmap
