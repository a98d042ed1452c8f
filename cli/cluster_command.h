// `trailmap cluster`: every aggregator and its health (query/run/cluster.h).
#pragma once

#include "cli/cli_common.h"
#include "query/run/cluster.h"

namespace trailmap {

using ClusterFlags = ClusterRequest;

CLI::App* AddClusterCommand(CLI::App* app, ClusterFlags* flags);
int RunCluster(const ClusterFlags& flags, const CliContext& context);

}  // namespace trailmap
