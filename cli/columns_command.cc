#include "cli/columns_command.h"

#include <CLI/CLI.hpp>

namespace trailmap {

CLI::App* AddColumnsCommand(CLI::App* app, ColumnsFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "columns",
      "One column per host (value on y, shaded by how many events), hosts sorted by a statistic");
  AddQueryFlags(cmd, &flags->query);
  cmd->add_option("--sort", flags->sort,
                  "Order hosts by cov (stddev / mean), p50, p90, p99, mean, max, count, "
                  "bimodality (largest first) or name")
      ->capture_default_str();
  cmd->add_flag("--reverse", flags->reverse, "Smallest first (or Z to A for name)");
  cmd->add_option("--limit", flags->limit, "Keep the first N hosts after sorting");
  cmd->add_option("--shading", flags->shading,
                  "column: each column shaded by its own counts; global: all cells together")
      ->capture_default_str();
  cmd->add_option("--coloring", flags->coloring,
                  "rank: shade by the rank of a cell's count; linear: by count / max")
      ->capture_default_str()
      ->check(CLI::IsMember({"rank", "linear"}));
  cmd->add_option("--rows", flags->rows, "Rows of the value axis")
      ->capture_default_str()
      ->check(CLI::Range(1, 2000));
  cmd->add_option("--ymax", flags->ymax,
                  "Top of the value axis, with a unit (20ms, 4KiB); default: the largest value, "
                  "rounded up to 1, 2 or 5 x 10^k");
  cmd->add_option("--clip", flags->clip, "Leave the top P% of events above the axis: 0.1%");
  cmd->add_option("--format,-f", flags->format,
                  "ansi, svg, json (docs/json.md) or png; default ansi, or from -o's extension")
      ->check(CLI::IsMember({"ansi", "svg", "json", "png"}));
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->footer(
      "Examples:\n"
      "  trailmap columns --metric disk.latency --from -10m --sort p99 --limit 100\n"
      "  trailmap columns --metric disk.latency --from -10m --clip 0.1% -o fleet.svg\n"
      "  trailmap columns --metric disk.latency --hosts db-1,db-2 --format json\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer (the view is "
      "drawn from the others).");
  return cmd;
}

int RunColumns(const ColumnsFlags& flags, const CliContext& context) {
  ColumnsRequest request = flags;
  request.format = OutputFormat(flags.format, flags.output, "ansi");
  return FinishView(context, "columns", RunColumnsView(request, context), flags.output);
}

}  // namespace trailmap
