#include "cli/subsecond_command.h"

#include <CLI/CLI.hpp>

#include "cli/cli_options.h"
#include "query/render/flame.h"
#include "query/render/subsecond.h"
#include "query/run/subsecond.h"
#include "query/views/flame.h"
#include "query/views/subsecond.h"

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
  const PerfSamples samples = ReadPerfSamples(*text, flags.include_idle);
  if (samples.samples.empty() && samples.idle > 0) {
    return Usage(context, flags.input + " holds only idle samples (" +
                              std::to_string(samples.idle) + "); --include-idle draws them");
  }
  if (samples.samples.empty()) {
    return Usage(context, flags.input +
                              " holds no timed samples (perf script prints the time "
                              "column by default; with -F give `time`)");
  }
  if (samples.untimed > 0) {
    *context.err << "trailmap subsecond: " << samples.untimed
                 << " samples without a time left out\n";
  }
  Result<SubsecondView> view = BuildSubsecondView(samples, flags.rows);
  if (!view.ok()) return Usage(context, view.status().message());

  std::string bytes;
  if (!flags.range.empty()) {
    Result<SubsecondRange> range = ParseSubsecondRange(flags.range);
    if (!range.ok()) return Usage(context, range.status().message());
    const std::string format = OutputFormat(flags.format, flags.output, "svg");
    const FoldedStacks stacks = FoldSubsecondRange(samples, view->start_second, *range);
    const FlameTree tree = BuildFlameTree(stacks);
    if (format == "folded") {
      bytes = FormatFolded(stacks);
    } else if (format == "json") {
      bytes = RenderFlameJson(tree);
    } else if (format == "svg") {
      FlameSvgOptions options;
      options.title = "Flame Graph, " + flags.range + " s";
      options.subtitle = flags.input + ": seconds from " + std::to_string(view->start_second);
      bytes = RenderFlameSvg(tree, options);
    } else {
      return Usage(context, "--range draws svg, folded or json, not " + format);
    }
  } else {
    const std::string format = OutputFormat(flags.format, flags.output, "text");
    SubsecondDrawOptions options;
    options.subtitle = flags.input;
    if (format == "svg") {
      bytes = RenderSubsecondSvg(*view, options);
    } else if (format == "png") {
      Result<std::string> png = RenderSubsecondPng(*view, options);
      if (!png.ok()) {
        *context.err << "trailmap subsecond: " << png.status().message() << "\n";
        return kExitError;
      }
      bytes = std::move(png).value();
    } else if (format == "json") {
      bytes = RenderSubsecondJson(*view);
    } else if (format == "text") {
      bytes = RenderSubsecondText(*view);
    } else {
      return Usage(context, "the map is drawn as text, svg, png or json, not " + format);
    }
  }
  const Status written = WriteOutput(context, flags.output, bytes);
  if (!written.ok()) {
    *context.err << "trailmap subsecond: " << written.message() << "\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace trailmap
