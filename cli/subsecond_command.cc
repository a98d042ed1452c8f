#include "cli/subsecond_command.h"

#include <CLI/CLI.hpp>

#include "cli/cli_options.h"
#include "query/run/subsecond.h"

namespace trailmap {
namespace {

int Usage(const CliContext& context, const std::string& message) {
  *context.err << "trailmap subsecond: " << message << "\n";
  return kExitUsage;
}

}  // namespace

CLI::App* AddSubsecondCommand(CLI::App* app, SubsecondFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "subsecond",
      "FlameScope's sub-second offset heat map of perf script samples: a column per second, "
      "rows of offsets within it; --range gives a range's flame graph");
  cmd->add_option("input", flags->input,
                  "perf script text: FILE, or - for standard input; none: the fleet's map");
  AddOptions(cmd, SubsecondParameters(), static_cast<SubsecondFleetRequest*>(flags));
  cmd->add_flag("--include-idle", flags->include_idle,
                "Keep the idle samples (swapper in an idle function) FlameScope leaves out");
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->footer(
      "Examples:\n"
      "  perf record -F 49 -a -g -- sleep 120 && perf script > stacks.txt\n"
      "  trailmap subsecond stacks.txt -o map.svg\n"
      "  trailmap subsecond stacks.txt --range 12.340..13.020 -o range.svg\n"
      "  trailmap subsecond --from -1m --hosts web-1 -o fleet.png   (agents with --perf)\n"
      "  trailmap subsecond --from -1m --range 12.340..13.020 -o range.svg   (seconds 12 and 13)\n"
      "Exit codes: 0 ok, 1 the input cannot be read, 2 usage error, 3 a shard did not answer.");
  return cmd;
}

int RunSubsecond(const SubsecondFlags& flags, const CliContext& context, std::istream& in) {
  if (flags.input.empty() || !flags.query.metric.empty()) {
    if (!flags.input.empty()) {
      return Usage(context, "give a FILE or --metric (the fleet's map), not both");
    }
    SubsecondFleetRequest request = flags;
    if (request.query.metric.empty()) request.query.metric = SubsecondFleetRequest().query.metric;
    request.format = OutputFormat(flags.format, flags.output, "");
    return FinishView(context, "subsecond", RunSubsecondFleetView(request, context), flags.output);
  }
  Result<std::string> text = ReadInputText(flags.input, in);
  if (!text.ok()) {
    *context.err << "trailmap subsecond: " << text.status().message() << "\n";
    return kExitError;
  }
  SubsecondFileRequest request;
  request.name = flags.input;
  request.rows = flags.rows;
  request.range = flags.range;
  request.include_idle = flags.include_idle;
  request.format = OutputFormat(flags.format, flags.output, "");
  return FinishView(context, "subsecond", RunSubsecondFileView(request, *text), flags.output);
}

}  // namespace trailmap
