// `trailmap trails`: one frequency trail per host (or field value), staggered into a waterfall
// sorted by a statistic, as SVG, PNG or JSON (query/views/trails.h, query/render/trails.h).
#pragma once

#include <string>

#include "cli/cli_common.h"
#include "query/run/trails.h"

namespace trailmap {

// The flags are the request's fields (query/run/trails.h) and -o.
struct TrailsFlags : TrailsRequest {
  std::string output;  // -o; "" = standard output
};

CLI::App* AddTrailsCommand(CLI::App* app, TrailsFlags* flags);
int RunTrails(const TrailsFlags& flags, const CliContext& context);

}  // namespace trailmap
