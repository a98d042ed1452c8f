// `trailmap trails`: one frequency trail per host (or field value), staggered into a waterfall
// sorted by a statistic, as SVG, PNG or JSON (query/trails.h, query/render_trails.h).
#pragma once

#include <string>

#include "query/cli_common.h"

namespace trailmap {

struct TrailsFlags {
  QueryFlags query;           // --by defaults to host here
  std::string range;          // "0..20ms"; "" = automatic (0 to the p99 of everything, rounded up)
  std::string sort = "cov";   // cov | p99 | p50 | max | bimodality | name
  size_t limit = 0;           // 0 = every trail
  bool fill = false;
  bool invert = false;
  bool border = false;
  bool linear = false;        // heights are the density, not its root
  double overlap = -1;        // < 0 = automatic
  std::string threshold = "0.2%";  // of each trail's peak density
  std::string bandwidth = "auto";  // auto | 0 | a value with a unit
  size_t points = 2048;
  std::string format;  // "" = svg, or png/json when -o ends in .png/.json
  std::string output;  // -o; "" = standard output
};

CLI::App* AddTrailsCommand(CLI::App* app, TrailsFlags* flags);
int RunTrails(const TrailsFlags& flags, const CliContext& context);

}  // namespace trailmap
