// JSON heat map: a pure function from a HeatmapView to a JSON document, for programs.
// The shape is documented field by field in docs/json.md ("heatmap"); fields are only ever
// added. Numbers are exact: counts are integers, values are in the metric's base unit.
#pragma once

#include <string>

#include "query/views/heatmap.h"

namespace trailmap {

// Pretty-printed (two-space indent) when `pretty`, else one line.
std::string RenderHeatmapJson(const HeatmapView& view, bool pretty = true);

}  // namespace trailmap
