// JSON heat map: a pure function from a HeatmapView to a JSON document, for programs.
// The shape is documented field by field in docs/json.md ("heatmap"); fields are only ever
// added. Numbers are exact: counts are integers, values are in the metric's base unit.
#pragma once

#include <string>

#include "query/draw/json_text.h"
#include "query/views/heatmap.h"

namespace trailmap {

// Pretty-printed (two-space indent) when `pretty`, else one line.
std::string RenderHeatmapJson(const HeatmapView& view, bool pretty = true);

// The cell grid every grid view (heat map, columns) writes the same way: "row_bounds", then
// "counts", "saturation" and "levels" as rows × columns matrices, then the "palette"
// (docs/json.md).
void AddCellGridJson(const HeatmapView& view, JsonObjectText* out);

}  // namespace trailmap
