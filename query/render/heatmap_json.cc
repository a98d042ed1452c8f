#include "query/render/heatmap_json.h"

#include <nlohmann/json.hpp>

#include "core/timespec.h"
#include "query/draw/json_text.h"
#include "query/draw/palette.h"

namespace trailmap {
namespace {

using json = nlohmann::ordered_json;

}  // namespace

void AddCellGridJson(const HeatmapView& view, nlohmann::ordered_json* out) {
  using json = nlohmann::ordered_json;
  json& j = *out;
  json bounds = json::array();
  for (uint32_t r = 0; r < view.rows; ++r) bounds.push_back({view.RowLow(r), view.RowHigh(r)});
  j["row_bounds"] = std::move(bounds);
  json counts = json::array(), saturation = json::array(), levels = json::array();
  for (uint32_t r = 0; r < view.rows; ++r) {
    json crow = json::array(), srow = json::array(), lrow = json::array();
    for (uint32_t c = 0; c < view.columns; ++c) {
      const size_t i = view.Index(r, c);
      crow.push_back(view.counts[i]);
      srow.push_back(view.saturation[i]);
      lrow.push_back(view.levels[i]);
    }
    counts.push_back(std::move(crow));
    saturation.push_back(std::move(srow));
    levels.push_back(std::move(lrow));
  }
  j["counts"] = std::move(counts);
  j["saturation"] = std::move(saturation);
  j["levels"] = std::move(levels);
  json palette = json::array();
  for (int level = 0; level < kShadeLevels; ++level) palette.push_back(HexColor(PaletteColor(view.palette, level)));
  j["palette"] = std::move(palette);
}

std::string RenderHeatmapJson(const HeatmapView& view, bool pretty) {
  // An ordered_json object is a vector of (const key, value) pairs, whose move may throw, so
  // growing it copies every value: the cell grids of a 3,600-column map (three arrays of
  // 180,000 numbers) were copied at each doubling, a fifth of the CLI's time. Room for every
  // field up front.
  json j = json::object();
  j.get_ref<json::object_t&>().reserve(48);
  AddJsonHead({.view = "heatmap", .metric = view.metric, .kind = view.kind, .unit = view.unit,
               .from = view.from, .to = view.to, .rfc3339 = true},
              &j);
  j["step"] = view.step;
  j["rows"] = view.rows;
  j["columns"] = view.columns;
  j["ymin"] = view.ymin;
  j["ymax"] = view.ymax;
  j["ymax_auto"] = view.ymax_auto;
  j["clip_percent"] = view.clip_percent;
  j["coloring"] = ColoringName(view.coloring);
  j["per_column"] = view.per_column;
  j["palette_name"] = PaletteName(view.palette);
  j["scale"] = ValueScaleName(view.scale);
  j["total"] = view.total;
  j["above"] = view.above;
  j["below"] = view.below;
  j["max_count"] = view.max_count;
  j["nonzero_cells"] = view.nonzero_cells;

  json times = json::array();
  for (uint32_t c = 0; c < view.columns; ++c) times.push_back(view.ColumnStart(c));
  j["column_times"] = std::move(times);
  AddCellGridJson(view, &j);
  j["row_events_per_second"] = RowEventsPerSecond(view);
  j["range_events_per_second"] = RangeEventsPerSecond(view);
  json overlay = json::array();
  for (const PercentileLine& line : view.overlay) {
    overlay.push_back({{"name", line.name}, {"percentile", line.percentile}, {"values", line.values}});
  }
  j["overlay"] = std::move(overlay);

  if (!view.group_by.empty()) {
    j["group_by"] = view.group_by;
    j["groups"] = view.groups;
    json group_colors = json::array();
    for (size_t g = 0; g < view.groups.size(); ++g) group_colors.push_back(HexColor(ViewGroupColor(view, g)));
    j["group_colors"] = std::move(group_colors);
    j["select"] = view.select;
    j["selection"] = view.select.empty()                        ? "none"
                     : view.selection == Selection::kIsolate ? "isolate"
                     : view.selection == Selection::kExclude ? "exclude"
                                                             : "hue";
    j["excluded"] = view.excluded;
    json breakdown = json::array();
    for (uint32_t r = 0; r < view.rows; ++r) {
      for (uint32_t c = 0; c < view.columns; ++c) {
        const size_t i = view.Index(r, c);
        if (view.counts[i] == 0) continue;
        json parts = json::object();
        for (const auto& [g, n] : view.breakdown[i]) parts[view.groups[g]] = n;
        breakdown.push_back({{"row", r}, {"column", c}, {"counts", std::move(parts)}});
      }
    }
    j["breakdown"] = std::move(breakdown);
  }
  j["missing_shards"] = view.missing_shards;
  return pretty ? DumpOneRowPerLine(j) : j.dump() + "\n";
}

}  // namespace trailmap
