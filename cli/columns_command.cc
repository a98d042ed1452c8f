#include "cli/columns_command.h"

#include <CLI/CLI.hpp>

#include "cli/cli_options.h"

namespace trailmap {

CLI::App* AddColumnsCommand(CLI::App* app, ColumnsFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "columns",
      "One column per host (value on y, shaded by how many events), hosts sorted by a statistic");
  AddOptions(cmd, ColumnsParameters(), static_cast<ColumnsRequest*>(flags));
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
