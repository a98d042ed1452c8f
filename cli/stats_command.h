// `trailmap stats`: a percentile table per host, per field value, or for everything.
#pragma once

#include <string>

#include "cli/cli_common.h"
#include "query/run/stats.h"

namespace trailmap {

// The flags are the request's fields (query/run/stats.h) and -o.
struct StatsFlags : StatsRequest {
  std::string output;  // -o; "" = standard output
};

CLI::App* AddStatsCommand(CLI::App* app, StatsFlags* flags);
int RunStats(const StatsFlags& flags, const CliContext& context);

}  // namespace trailmap
