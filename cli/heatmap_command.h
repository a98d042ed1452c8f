// `trailmap heatmap`: a latency heat map of a metric over a time range, as ANSI, SVG, PNG or
// JSON.
#pragma once

#include <string>

#include "cli/cli_common.h"
#include "query/run/heatmap.h"

namespace trailmap {

// The flags are the request's fields (query/run/heatmap.h) and -o.
struct HeatmapFlags : HeatmapRequest {
  std::string output;  // -o; "" = standard output
};

// Registers the subcommand and its flags on `app`.
CLI::App* AddHeatmapCommand(CLI::App* app, HeatmapFlags* flags);
// Runs it; returns the exit code.
int RunHeatmap(const HeatmapFlags& flags, const CliContext& context);

}  // namespace trailmap
