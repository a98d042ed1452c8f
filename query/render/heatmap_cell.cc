#include "query/render/heatmap_cell.h"

#include <nlohmann/json.hpp>

#include "core/timespec.h"
#include "core/units.h"
#include "query/draw/json_text.h"

namespace trailmap {

std::string RenderHeatmapCellJson(const HeatmapCell& cell) {
  nlohmann::ordered_json j;
  AddJsonHead({.view = "heatmap_cell",
               .metric = cell.metric,
               .unit = cell.unit,
               .from = cell.from,
               .to = cell.to},
              &j);
  j["row"] = cell.row;
  j["column"] = cell.column;
  j["low"] = cell.low;
  j["high"] = cell.high;
  j["count"] = cell.count;
  j["group_by"] = cell.group_by;
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const auto& [name, n] : cell.groups) groups.push_back({{"value", name}, {"count", n}});
  j["groups"] = std::move(groups);
  nlohmann::ordered_json hosts = nlohmann::ordered_json::array();
  for (const auto& [name, n] : cell.hosts) hosts.push_back({{"host", name}, {"count", n}});
  j["hosts"] = std::move(hosts);
  j["missing_shards"] = cell.missing_shards;
  return j.dump(2) + "\n";
}

std::string RenderHeatmapCellText(const HeatmapCell& cell) {
  std::string out = cell.metric + " cell " + FormatClock(cell.from) + "–" + FormatClock(cell.to) +
                    " UTC, " + FormatQuantity(cell.low, cell.unit) + " to " +
                    FormatQuantity(cell.high, cell.unit) + ": " + std::to_string(cell.count) +
                    (cell.count == 1 ? " event\n" : " events\n");
  if (!cell.groups.empty()) {
    out += "by " + cell.group_by + ":\n";
    for (const auto& [name, n] : cell.groups) {
      out += "  " + (name.empty() ? std::string("(none)") : name) + "  " + std::to_string(n) + "\n";
    }
  }
  out += "by host:\n";
  if (cell.hosts.empty()) out += "  (none)\n";
  for (const auto& [name, n] : cell.hosts) out += "  " + name + "  " + std::to_string(n) + "\n";
  return out;
}

}  // namespace trailmap
