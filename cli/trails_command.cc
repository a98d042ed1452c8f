#include "cli/trails_command.h"

#include <CLI/CLI.hpp>

#include "cli/cli_options.h"

namespace trailmap {

CLI::App* AddTrailsCommand(CLI::App* app, TrailsFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "trails",
      "Frequency trails: each host's distribution as a line where dense and rug ticks where "
      "sparse, in a waterfall sorted by CoV");
  AddOptions(cmd, TrailsParameters(), static_cast<TrailsRequest*>(flags));
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->footer(
      "Examples:\n"
      "  trailmap trails --metric disk.latency --from -10m -o trails.svg\n"
      "  trailmap trails --metric disk.latency --range 0..20ms --sort p99 --fill --border -o "
      "t.png\n"
      "  trailmap trails --metric http.server.latency --by url --format json\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer (the view is "
      "drawn from the others).");
  return cmd;
}

int RunTrails(const TrailsFlags& flags, const CliContext& context) {
  TrailsRequest request = flags;
  request.format = OutputFormat(flags.format, flags.output, "svg");
  return FinishView(context, "trails", RunTrailsView(request, context), flags.output);
}

}  // namespace trailmap
