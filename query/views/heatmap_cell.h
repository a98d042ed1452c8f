// Cell details (--at): what makes up one cell of a heat map — its time and value ranges, its
// count, the view's --by values in it and the hosts in it (from a second query of that one column
// grouped by host). Assembled here; render/heatmap_cell.h writes it as JSON or text.
// Pure functions; value types.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "query/fetch/partials.h"
#include "query/views/heatmap.h"

namespace trailmap {

struct HeatmapCell {
  std::string metric;
  std::string unit;
  int64_t from = 0;  // the column's seconds [from, to)
  int64_t to = 0;
  uint32_t row = 0;
  uint32_t column = 0;
  double low = 0;  // the row's values [low, high) in the base unit
  double high = 0;
  uint64_t count = 0;
  std::string group_by;  // the view's --by ("" when not grouped)
  // The view's --by values in the cell, largest first (stable); empty unless the view was grouped
  // by a field other than host.
  std::vector<std::pair<std::string, uint64_t>> groups;
  // The hosts in the cell, largest first (CellGroups).
  std::vector<std::pair<std::string, uint64_t>> hosts;
  std::vector<std::string> missing_shards;  // "endpoint: reason", of both queries
};

// Cell (row, column) of `view`, its hosts from `column_by_host` (the column's grid grouped by
// host, views/heatmap.h CellGroups), and the shards either query missed.
HeatmapCell AssembleHeatmapCell(const HeatmapView& view, uint32_t row, uint32_t column,
                                const MergedGrid& column_by_host,
                                std::vector<std::string> missing_shards);

}  // namespace trailmap
