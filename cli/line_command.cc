#include "cli/line_command.h"

#include <CLI/CLI.hpp>

namespace trailmap {

CLI::App* AddLineCommand(CLI::App* app, LineFlags* flags) {
  CLI::App* cmd = app->add_subcommand("line",
                                      "Line or area chart over time, one line per host or field "
                                      "value (scalars: cpu.usage, mem.rss, ...)");
  AddQueryFlags(cmd, &flags->query);
  cmd->add_option("--stat", flags->stat,
                  "What each point shows of its group's samples in its time step: avg, max, min or "
                  "sum (sum over hosts = the fleet's total)")
      ->capture_default_str()
      ->check(CLI::IsMember({"avg", "max", "min", "sum"}));
  cmd->add_option("--top", flags->top,
                  "Lines of their own (largest mean first); the other groups are merged into one "
                  "grey line \"other\"; 0 = every group")
      ->capture_default_str();
  cmd->add_flag("--area", flags->area, "Fill under each line");
  cmd->add_flag("--stacked", flags->stacked,
                "Stack the lines as areas (parts of a total, e.g. --by mode)");
  cmd->add_option("--step", flags->step,
                  "Seconds a point (default: the range over at most 300 points, in a step the "
                  "stored rollups serve exactly: 1, 2, 5, 10, 20, 30 s, 1, 2, 5, 10, 20, 30 min, "
                  "1, 2, 3, 6, 12 h or whole days, starting on a multiple of that rollup)");
  cmd->add_option("--format,-f", flags->format,
                  "svg, png, json or ansi; default from -o's extension, else ansi sparklines")
      ->check(CLI::IsMember({"svg", "png", "json", "ansi"}));
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
