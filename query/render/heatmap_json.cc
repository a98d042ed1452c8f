#include "query/render/heatmap_json.h"

#include <nlohmann/json.hpp>

#include "core/timespec.h"
#include "query/draw/json_text.h"
#include "query/draw/palette.h"
#include "query/render/shades.h"

namespace trailmap {
namespace {

using json = nlohmann::ordered_json;

}  // namespace

void AddCellGridJson(const HeatmapView& view, JsonObjectText* out) {
  using json = nlohmann::ordered_json;
  json bounds = json::array();
  for (uint32_t r = 0; r < view.rows; ++r) bounds.push_back({view.RowLow(r), view.RowHigh(r)});
  out->Add("row_bounds", bounds);
  const auto at = [&view](size_t r, size_t c) {
    return view.Index(static_cast<uint32_t>(r), static_cast<uint32_t>(c));
  };
  out->AddRows("counts", view.rows, view.columns, [&](size_t r, size_t c, std::string* text) {
    AppendJsonNumber(view.counts[at(r, c)], text);
  });
  out->AddRows("saturation", view.rows, view.columns, [&](size_t r, size_t c, std::string* text) {
    AppendJsonNumber(view.saturation[at(r, c)], text);
  });
  out->AddRows("levels", view.rows, view.columns, [&](size_t r, size_t c, std::string* text) {
    AppendJsonNumber(uint64_t{view.levels[at(r, c)]}, text);
  });
  json palette = json::array();
  for (int level = 0; level < kShadeLevels; ++level) palette.push_back(HexColor(PaletteColor(view.palette, level)));
  out->Add("palette", palette);
}

std::string RenderHeatmapJson(const HeatmapView& view, bool pretty) {
  // An ordered_json object is a vector of (const key, value) pairs, whose move may throw, so
  // growing it copies every value (the cell grids, when they were values, were copied at each
  // doubling: a fifth of the CLI's time). Room for every field up front; the grid itself is
  // written straight into the text (AddCellGridJson).
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
  JsonObjectText text(pretty);
  text.AddAll(j);
  AddCellGridJson(view, &text);
  // The keys after the grid.
  j = json::object();
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
  text.AddAll(j);
  return std::move(text).Finish();
}

}  // namespace trailmap
