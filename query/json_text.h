// How the views write JSON for people: one key a line, and an array of arrays or objects one
// element a line, so a 50 × 1,000 grid stays readable and diffable without the one number a line
// that a plain pretty-print gives. Pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "query/heatmap.h"

namespace trailmap {

std::string DumpOneRowPerLine(const nlohmann::ordered_json& object);

// The cell grid every grid view (heat map, columns) writes the same way: "row_bounds", then
// "counts", "saturation" and "levels" as rows × columns matrices, then the "palette" (docs/json.md).
// Defined in render_json.cc.
void AddCellGridJson(const HeatmapView& view, nlohmann::ordered_json* j);

}  // namespace trailmap
