// RenderColumnsJson (query/render/columns.h): the columns view for programs; docs/json.md
// ("columns") describes every field.
#include <nlohmann/json.hpp>

#include "core/timespec.h"
#include "query/draw/json_text.h"
#include "query/draw/palette.h"
#include "query/render/columns.h"
#include "query/render/heatmap_json.h"

namespace trailmap {
namespace {

using json = nlohmann::ordered_json;

}  // namespace

std::string RenderColumnsJson(const ColumnsView& view, bool pretty) {
  const HeatmapView& grid = view.grid;
  json j;
  AddJsonHead({.view = "columns", .metric = view.metric, .kind = view.kind, .unit = view.unit,
               .from = view.from, .to = view.to, .rfc3339 = true},
              &j);
  j["sort"] = ColumnsSortName(view.sort);
  j["reverse"] = view.reverse;
  j["shading"] = ColumnShadingName(view.shading);
  j["coloring"] = ColoringName(view.coloring);
  j["hosts_total"] = view.hosts_total;
  j["rows"] = grid.rows;
  j["columns"] = grid.columns;
  j["ymin"] = grid.ymin;
  j["ymax"] = grid.ymax;
  j["ymax_auto"] = grid.ymax_auto;
  j["clip_percent"] = grid.clip_percent;
  j["total"] = grid.total;
  j["above"] = grid.above;

  json hosts = json::array();
  for (uint32_t c = 0; c < grid.columns; ++c) {
    const HostColumn& h = view.hosts[c];
    hosts.push_back({{"host", h.host},
                     {"count", h.count},
                     {"mean", h.mean},
                     {"min", h.min},
                     {"p50", h.p50},
                     {"p90", h.p90},
                     {"p99", h.p99},
                     {"max", h.max},
                     {"stddev", h.stddev},
                     {"cov", h.cov},
                     {"skewness", h.skewness},
                     {"kurtosis", h.kurtosis},
                     {"bimodality", h.bimodality},
                     {"max_cell", view.column_max[c]}});
  }
  j["hosts"] = std::move(hosts);
  JsonObjectText text(pretty);
  text.AddAll(j);
  AddCellGridJson(grid, &text);
  text.Add("missing_shards", view.missing_shards);
  return std::move(text).Finish();
}

}  // namespace trailmap
