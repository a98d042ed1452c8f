#include "cli/outliers_command.h"

#include <CLI/CLI.hpp>

#include "cli/cli_options.h"

namespace trailmap {

CLI::App* AddOutliersCommand(CLI::App* app, OutliersFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "outliers",
      "Hosts whose p99 (or --stat) is far above the fleet's, by a robust score (median/MAD)");
  AddOptions(cmd, OutliersParameters(), static_cast<OutliersRequest*>(flags));
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->footer(
      "Score: 0.6745 * (x - median) / MAD over the hosts' statistic (docs/outliers.md).\n"
      "Examples:\n"
      "  trailmap outliers --metric http.server.latency --from -10m\n"
      "  trailmap outliers --metric http.server.latency --from -10m --flame -o slow-vs-rest.svg\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer.");
  return cmd;
}

int RunOutliers(const OutliersFlags& flags, const CliContext& context) {
  return FinishView(context, "outliers", RunOutliersView(flags, context), flags.output);
}

}  // namespace trailmap
