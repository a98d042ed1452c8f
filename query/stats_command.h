// `trailmap stats`: a percentile table per host, per field value, or for everything.
#pragma once

#include <string>

#include "query/cli_common.h"

namespace trailmap {

struct StatsFlags {
  QueryFlags query;
  std::string format = "table";  // table | json | csv
  std::string sort = "name";     // name | count | mean | min | p50 | p90 | p99 | p99.9 | max
  size_t top = 0;                // 0 = every row
  std::string output;            // -o; "" = standard output
};

CLI::App* AddStatsCommand(CLI::App* app, StatsFlags* flags);
int RunStats(const StatsFlags& flags, const CliContext& context);

}  // namespace trailmap
