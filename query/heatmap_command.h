// `trailmap heatmap`: a latency heat map of a metric over a time range, as ANSI, SVG or JSON.
#pragma once

#include <string>

#include "query/cli_common.h"

namespace trailmap {

struct HeatmapFlags {
  QueryFlags query;
  uint32_t rows = 50;
  uint32_t cols = 0;  // 0 = automatic
  std::string step;   // "" = automatic; "10s", "1m" or seconds
  std::string ymax;   // "" = automatic; "20ms", "4KiB", or a number in the base unit
  std::string clip;   // "" = none; "0.1%"
  std::string coloring = "rank";
  std::string format;  // "" = ansi, or svg/json when -o ends in .svg/.json
  std::string output;  // -o; "" = standard output
};

// Registers the subcommand and its flags on `app`.
CLI::App* AddHeatmapCommand(CLI::App* app, HeatmapFlags* flags);
// Runs it; returns the exit code.
int RunHeatmap(const HeatmapFlags& flags, const CliContext& context);

}  // namespace trailmap
