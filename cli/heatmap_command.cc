#include "cli/heatmap_command.h"

#include <CLI/CLI.hpp>

#include "cli/cli_options.h"

namespace trailmap {

CLI::App* AddHeatmapCommand(CLI::App* app, HeatmapFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "heatmap", "Heat map of a metric: time on x, value on y, cells shaded by how many events");
  AddOptions(cmd, HeatmapParameters(), static_cast<HeatmapRequest*>(flags));
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->footer(
      "Examples:\n"
      "  trailmap heatmap --metric disk.latency --from -10m\n"
      "  trailmap heatmap --metric disk.latency --from -1h --step 10s --clip 0.1% -o lat.svg\n"
      "  trailmap heatmap --metric http.server.latency --by host --ymax 50ms --format json\n"
      "  trailmap heatmap --metric disk.latency --ymax 50us --per-column --overlay p50,p99 "
      "-o fast.png\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer (the view is "
      "drawn from the others).");
  return cmd;
}

int RunHeatmap(const HeatmapFlags& flags, const CliContext& context) {
  HeatmapRequest request = flags;
  request.format = OutputFormat(flags.format, flags.output, "ansi");
  if (request.format == "png" && flags.output.empty() && context.stdout_is_terminal) {
    return FinishView(
        context, "heatmap",
        Status::InvalidArgument("--format png writes binary: give -o FILE.png or redirect stdout"),
        flags.output);
  }
  return FinishView(context, "heatmap", RunHeatmapView(request, context), flags.output);
}

}  // namespace trailmap
