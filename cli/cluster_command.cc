#include "cli/cluster_command.h"

#include <CLI/CLI.hpp>

namespace trailmap {

CLI::App* AddClusterCommand(CLI::App* app, ClusterFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "cluster", "Every aggregator and its health: up, down or in error, agents, rollups behind");
  AddShardFlags(cmd, &flags->query);
  AddTableOrJsonFormat(cmd, &flags->format);
  cmd->footer(
      "Exit status 3 when an aggregator does not answer (it is listed as down).\n"
      "Examples:\n  trailmap cluster\n  trailmap cluster --format json --aggregators agg-1,agg-2");
  return cmd;
}

int RunCluster(const ClusterFlags& flags, const CliContext& context) {
  return FinishView(context, "cluster", RunClusterView(flags, context), "");
}

}  // namespace trailmap
