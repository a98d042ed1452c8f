// `trailmap outliers`: the hosts whose distribution is unlike the fleet's (query/run/outliers.h),
// and with --flame the differential flame graph of them against the rest.
#pragma once

#include <string>

#include "cli/cli_common.h"
#include "query/run/outliers.h"

namespace trailmap {

struct OutliersFlags : OutliersRequest {
  std::string output;  // -o; "" = standard output
};

CLI::App* AddOutliersCommand(CLI::App* app, OutliersFlags* flags);
int RunOutliers(const OutliersFlags& flags, const CliContext& context);

}  // namespace trailmap
