#include "cli/outliers_command.h"

#include <CLI/CLI.hpp>

namespace trailmap {

CLI::App* AddOutliersCommand(CLI::App* app, OutliersFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "outliers",
      "Hosts whose p99 (or --stat) is far above the fleet's, by a robust score (median/MAD)");
  AddQueryFlags(cmd, &flags->query);
  cmd->add_option("--stat", flags->stat, "The statistic compared: p50, p90, p99, p99.9, mean, max")
      ->capture_default_str();
  cmd->add_option("--threshold", flags->threshold,
                  "Modified z-score above which a host is an outlier")
      ->capture_default_str();
  cmd->add_flag("--flame", flags->flame,
                "Instead of the list: a differential flame graph of the outliers' stacks against "
                "the other hosts' over the same range (red: more in the outliers)");
  cmd->add_option("--stacks", flags->stacks, "With --flame: the stacks metric")
      ->capture_default_str();
  cmd->add_option("--format,-f", flags->format,
                  "table or json; with --flame svg (default), json or folded")
      ->capture_default_str();
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
