// Cell details (--at, views/heatmap_cell.h) for people and programs. JSON ("heatmap_cell",
// docs/json.md): the document head, "row", "column", "low", "high", "count", "group_by",
// "groups" [{"value", "count"}], "hosts" [{"host", "count"}], "missing_shards". Text: a line
// with the cell's times (UTC), values and count, then its --by values and its hosts, one a line.
// Pure functions.
#pragma once

#include <string>

#include "query/views/heatmap_cell.h"

namespace trailmap {

std::string RenderHeatmapCellJson(const HeatmapCell& cell);
std::string RenderHeatmapCellText(const HeatmapCell& cell);

}  // namespace trailmap
