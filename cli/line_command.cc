#include "cli/line_command.h"

#include <CLI/CLI.hpp>

#include "cli/cli_options.h"

namespace trailmap {

CLI::App* AddLineCommand(CLI::App* app, LineFlags* flags) {
  CLI::App* cmd = app->add_subcommand("line",
                                      "Line or area chart over time, one line per host or field "
                                      "value (scalars: cpu.usage, mem.rss, ...)");
  AddOptions(cmd, LineParameters(), static_cast<LineRequest*>(flags));
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->footer(
      "Examples:\n"
      "  trailmap line --metric cpu.usage --by host --where 'mode == \"user\"' --from -10m\n"
      "  trailmap line --metric cpu.usage --by mode --stacked --where 'host == \"web-1\"' -o "
      "cpu.png\n"
      "  trailmap line --metric mem.rss --by host --stat max --top 5 -o rss.svg\n"
      "  trailmap line --metric net.rx.bytes --stat sum --format json\n"
      "Values keep the metric's unit (%, B, B/s). A scalar's host-seconds are its samples: "
      "--by host --stat avg at a 1 s step is each host's own value.\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer (drawn from the "
      "others).");
  return cmd;
}

int RunLine(const LineFlags& flags, const CliContext& context) {
  LineRequest request = flags;
  request.format = OutputFormat(flags.format, flags.output, flags.output.empty() ? "ansi" : "svg");
  return FinishView(context, "line", RunLineView(request, context), flags.output);
}

}  // namespace trailmap
