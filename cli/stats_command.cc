#include "cli/stats_command.h"

#include <CLI/CLI.hpp>

namespace trailmap {

CLI::App* AddStatsCommand(CLI::App* app, StatsFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "stats", "Percentiles (count, mean, min, p50, p90, p99, p99.9, max) per host or field value");
  AddQueryFlags(cmd, &flags->query);
  cmd->add_option("--format,-f", flags->format,
                  "table (values with units), json or csv (base units)")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option(
         "--sort", flags->sort,
         "Order rows by name, or largest first by count, mean, min, p50, p90, p99, p99.9, max")
      ->capture_default_str();
  cmd->add_option("--top", flags->top, "Keep the first N rows after sorting");
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
