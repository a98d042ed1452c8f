// The heat map as a whole view: parameters in, document out (fetch, assemble, render). What
// `trailmap heatmap` and trailmap-query's /api/heatmap both run, so their documents agree.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "query/fetch/view_request.h"
#include "query/run/view_document.h"

namespace trailmap {

// Each field is the CLI's flag of the same name (cli/heatmap_command.cc) and the HTTP parameter.
struct HeatmapRequest {
  ViewRequest query;
  uint32_t rows = 50;
  uint32_t cols = 0;  // 0 = automatic
  std::string step;   // "" = automatic; "10s", "1m" or seconds
  std::string ymin;   // "" = 0 (automatic under --scale log); "5us"
  std::string ymax;   // "" = automatic; "20ms", "4KiB", or a number in the base unit
  std::string scale = "linear";  // linear | log
  std::string clip;   // "" = none; "0.1%"
  std::string coloring = "rank";
  bool per_column = false;
  std::string palette = "heat";  // heat | false
  std::string overlay;           // "p50,p99": percentile lines
  std::string select;            // "a,b": chosen values of --by (the rest as "other")
  bool isolate = false;          // draw only the --select values
  bool exclude = false;          // draw only the values not selected
  std::string at;                // "TIME,VALUE": list what makes up that cell instead of drawing
  int width = 960;               // SVG/PNG plot size in pixels
  int height = 450;
  bool panel = true;             // SVG/PNG side panel of events per second
  std::string format;            // ansi | svg | png | json; "" = ansi
};

// Everything the user typed is checked (InvalidArgument naming the flag) before any shard is
// asked. `at` gives the cell's details ("heatmap_cell" in JSON, else text) instead of the map.
Result<ViewDocument> RunHeatmapView(const HeatmapRequest& request, const QueryContext& context);

}  // namespace trailmap
