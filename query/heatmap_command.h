// `trailmap heatmap`: a latency heat map of a metric over a time range, as ANSI, SVG, PNG or
// JSON.
#pragma once

#include <string>

#include "query/cli_common.h"

namespace trailmap {

struct HeatmapFlags {
  QueryFlags query;
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
  std::string format;  // "" = ansi, or svg/png/json when -o ends in .svg/.png/.json
  std::string output;  // -o; "" = standard output
};

// Registers the subcommand and its flags on `app`.
CLI::App* AddHeatmapCommand(CLI::App* app, HeatmapFlags* flags);
// Runs it; returns the exit code.
int RunHeatmap(const HeatmapFlags& flags, const CliContext& context);

}  // namespace trailmap
