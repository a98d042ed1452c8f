// How the views write JSON for people: one key a line, and an array of arrays or objects one
// element a line, so a 50 × 1,000 grid stays readable and diffable without the one number a line
// that a plain pretty-print gives. Pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "query/views/heatmap.h"

namespace trailmap {

std::string DumpOneRowPerLine(const nlohmann::ordered_json& object);

// The keys every view's document opens with (docs/json.md), written once so the views agree:
// "view", "metric", "kind" (when given), "unit", "group_by" (when given), "from", "to", and with
// `rfc3339` also "from_rfc3339" and "to_rfc3339".
struct JsonHead {
  const char* view = "";
  std::string metric;
  std::optional<MetricKind> kind;
  std::string unit;
  std::optional<std::string> group_by;
  int64_t from = 0;
  int64_t to = 0;
  bool rfc3339 = false;
};
void AddJsonHead(const JsonHead& head, nlohmann::ordered_json* j);

// The cell grid every grid view (heat map, columns) writes the same way: "row_bounds", then
// "counts", "saturation" and "levels" as rows × columns matrices, then the "palette" (docs/json.md).
// Defined in query/render/heatmap_json.cc.
void AddCellGridJson(const HeatmapView& view, nlohmann::ordered_json* j);

}  // namespace trailmap
