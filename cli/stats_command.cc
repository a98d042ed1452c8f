#include "cli/stats_command.h"

#include <CLI/CLI.hpp>

#include "cli/cli_options.h"

namespace trailmap {

CLI::App* AddStatsCommand(CLI::App* app, StatsFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "stats", "Percentiles (count, mean, min, p50, p90, p99, p99.9, max) per host or field value");
  AddOptions(cmd, StatsParameters(), static_cast<StatsRequest*>(flags));
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->footer(
      "Examples:\n"
      "  trailmap stats --metric http.server.latency --by host --sort p99 --top 20\n"
      "  trailmap stats --metric disk.latency --by op --from -1h --format csv\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer (the table is "
      "computed from the others).");
  return cmd;
}

int RunStats(const StatsFlags& flags, const CliContext& context) {
  StatsRequest request = flags;
  request.format = flags.format;
  return FinishView(context, "stats", RunStatsView(request, context), flags.output);
}

}  // namespace trailmap
