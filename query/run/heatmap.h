// The heat map as a whole view: parameters in, document out (fetch, assemble, render). What
// `trailmap heatmap` and trailmap-query's /api/heatmap both run, so their documents agree.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "query/fetch/view_request.h"
#include "query/run/options.h"
#include "query/run/view_document.h"

namespace trailmap {

// Each field is the CLI's flag of the same name (cli/heatmap_command.cc) and the HTTP parameter.
struct HeatmapRequest {
  ViewRequest query;
  uint32_t rows = 50;
  uint32_t cols = 0;             // 0 = automatic
  std::string step;              // "" = automatic; "10s", "1m" or seconds
  std::string ymin;              // "" = 0 (automatic under --scale log); "5us"
  std::string ymax;              // "" = automatic; "20ms", "4KiB", or a number in the base unit
  std::string scale = "linear";  // linear | log
  std::string clip;              // "" = none; "0.1%"
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
  bool panel = true;   // SVG/PNG side panel of events per second
  std::string format;  // ansi | svg | png | json; "" = ansi
};

// The heat map's parameters, one row each (query/run/options.h): the CLI's flags, the API's
// parameters and the checks of RunHeatmapView. A new option is a member above and a row here.
inline const OptionTable<HeatmapRequest>& HeatmapParameters() {
  using R = HeatmapRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.Include(ViewRequestParameters(), &R::query);
    t.Whole("rows", &R::rows, 1, 2000, "Rows of the value axis", "100");
    t.Whole("cols", &R::cols, 1, 100000,
            "Columns of the time axis (default: fit the range, 1s each, at most 120 in a terminal "
            "or 600 in SVG/JSON, each a step the stored 1 s, 10 s, 1 min and 10 min rollups serve "
            "exactly: 1, 2, 5, 10, 20, 30 s, 1, 2, 5, 10, 20, 30 min, 1, 2, 3, 6, 12 h or whole "
            "days, the first starting on a multiple of that rollup)",
            "120")
        .ZeroIsAutomatic();
    t.Text("step", &R::step, "Seconds per column instead of --cols: 1s, 10s, 1m", "10s");
    t.Text("ymin", &R::ymin,
           "Bottom of the value axis, with a unit (5us); with --ymax, zoom into a band redrawn "
           "from the stored histograms",
           "5us");
    t.Text("ymax", &R::ymax,
           "Top of the value axis, with a unit (20ms, 4KiB) to zoom in; default: the largest "
           "value, rounded up to 1, 2 or 5 x 10^k",
           "20ms");
    t.Text("clip", &R::clip,
           "Leave the top P% of events above the axis so outliers do not squash the rest: 0.1%",
           "0.1%");
    t.Choice("coloring", &R::coloring, {"rank", "linear"},
             "rank: shade by the rank of a cell's count (outliers stay visible); linear: shade by "
             "count / max");
    t.Flag("per-column", &R::per_column,
           "Shade each column by its own largest count (or rank) so quiet seconds read as well "
           "as busy ones");
    t.Choice("palette", &R::palette, {"heat", "false"},
             "heat: white to dark red, shade ~ count; false: false colors that bring out faint "
             "detail (shades no longer compare counts)");
    t.Choice("scale", &R::scale, {"linear", "log"}, "Value axis: linear or log");
    t.Text("overlay", &R::overlay,
           "Percentile lines drawn over the SVG/PNG (and listed in JSON): p50,p99", "p50,p99");
    t.Text("select", &R::select,
           "With --by: these values keep their own hues, the rest are one grey \"other\" "
           "(web-1,web-2)",
           "web-1,web-2");
    t.Flag("isolate", &R::isolate, "With --select: draw only them");
    t.Flag("exclude", &R::exclude, "With --select: draw only the other values");
    t.Text("at", &R::at,
           "TIME,VALUE: instead of the map, list the cell holding that time and value: its "
           "count, its --by values and its hosts (16:05:03,12ms; unix or RFC 3339 times)",
           "16:05:03,12ms");
    t.Whole("width", &R::width, 100, 20000, "SVG/PNG plot width in pixels (cells are whole pixels)",
            "1200");
    t.Whole("height", &R::height, 50, 20000, "SVG/PNG plot height in pixels", "600");
    t.Flag("panel", &R::panel,
           "SVG/PNG: the side panel of average events per second per row (default on)")
        .Negation("no-panel");
    t.Choice("format", &R::format, {"ansi", "svg", "png", "json"},
             "ansi (a truecolor terminal), svg, png or json (docs/json.md); default ansi, or svg "
             "/ png / json when -o ends in .svg / .png / .json")
        .Short('f')
        .EmptyIsDefault();
    return t;
  }();
  return table;
}

// Everything the user typed is checked (InvalidArgument naming the flag) before any shard is
// asked. `at` gives the cell's details ("heatmap_cell" in JSON, else text) instead of the map.
Result<ViewDocument> RunHeatmapView(const HeatmapRequest& request, const QueryContext& context);

}  // namespace trailmap
