#include "cli/flame_command.h"

#include <CLI/CLI.hpp>

#include "cli/cli_common.h"
#include "cli/cli_options.h"

namespace trailmap {

CLI::App* AddFlameCommand(CLI::App* app, FlameFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "flame", "Flame graph of folded stacks: interactive SVG, d3-flame-graph JSON or folded");
  cmd->add_option("--folded", flags->folded,
                  "Folded stacks (\"a;b;c 42\" lines) to draw: FILE, or - for standard input; "
                  "without it the stacks come from the aggregators (see Fleet below)");
  AddOptions(cmd, FlameParameters(), static_cast<FlameRequest*>(flags));
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->add_option("--baseline-folded", flags->baseline_folded,
                  "Differential graph: widths from --folded, each frame red where it grew and "
                  "blue where it shrank against these folded stacks (FILE or -; --palette is then "
                  "not used)");
  cmd->footer(
      "Examples:\n"
      "  trailmap flame --from -5m --by host --where 'host =~ \"db-.*\"' -o per-host.svg\n"
      "  perf script | trailmap collapse | trailmap flame --folded - -o cpu.svg\n"
      "  trailmap flame --folded out.folded --inverted --palette self -o icicle.svg\n"
      "  trailmap flame --folded out.folded --format json > d3.json\n"
      "  trailmap flame --from -5m --where 'host =~ \"web-1[0-9]\"' -o cpu.svg\n"
      "  trailmap flame --from -10m --where 'execname == \"nginx\"' --format folded\n"
      "  trailmap flame --from -5m --baseline-from -1h --baseline-to -55m -o diff.svg\n"
      "  trailmap flame --from -10m --where 'host =~ \"db-(3|7)\"' \\\n"
      "      --baseline-where 'not (host =~ \"db-(3|7)\")' -o slow-vs-rest.svg\n"
      "  trailmap flame --folded after.folded --baseline-folded before.folded -o diff.svg\n"
      "  trailmap flame --metric http.latency --from -10m --region -5m..-4m,50ms..200ms \\\n"
      "      --differential --format json\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer (the graph is "
      "drawn from the others).");
  return cmd;
}

int RunFlame(const FlameFlags& flags, const CliContext& context, std::istream& in) {
  return FinishView(context, "flame", RunFlameView(flags, context, in), flags.output);
}

}  // namespace trailmap
