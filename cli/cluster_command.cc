#include "cli/cluster_command.h"

#include <CLI/CLI.hpp>

namespace trailmap {

CLI::App* AddClusterCommand(CLI::App* app, ClusterFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "cluster",
      "Every aggregator of the cluster and its health: zone, epoch, up, down or in error, hosts "
      "it holds, agents, ingest lag, bytes on disk, rollups behind, last error");
  AddShardFlags(cmd, &flags->query);
  AddTableOrJsonFormat(cmd, &flags->format);
  cmd->footer(
      "Exit status 3 when an aggregator does not answer (it is listed as down).\n"
      "Examples:\n  trailmap cluster\n  trailmap cluster --cluster /etc/trailmap/cluster.toml\n"
      "  trailmap cluster --format json --aggregators agg-1,agg-2");
  return cmd;
}

int RunCluster(const ClusterFlags& flags, const CliContext& context) {
  return FinishView(context, "cluster", RunClusterView(flags, context), "");
}

}  // namespace trailmap
