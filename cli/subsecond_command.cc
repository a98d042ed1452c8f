#include "cli/subsecond_command.h"

#include <CLI/CLI.hpp>

#include "query/render/flame.h"
#include "query/render/subsecond.h"
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
  cmd->add_option("input", flags->input, "perf script text: FILE, or - for standard input")
      ->capture_default_str();
  cmd->add_option("--rows", flags->rows, "Rows per second (50: 20 ms each)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--range", flags->range,
                  "FROM..TO in seconds from the first column (12.340..13.020): the flame graph "
                  "of the samples in that range instead of the map");
  cmd->add_flag("--include-idle", flags->include_idle,
                "Keep the idle samples (swapper in an idle function) FlameScope leaves out");
  cmd->add_option("--format,-f", flags->format,
                  "text, svg, png or json (default text, or as -o ends); with --range: svg "
                  "(default), folded or json")
      ->check(CLI::IsMember({"text", "svg", "png", "json", "folded"}));
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->footer(
      "Examples:\n"
      "  perf record -F 49 -a -g -- sleep 120 && perf script > stacks.txt\n"
      "  trailmap subsecond stacks.txt -o map.svg\n"
      "  trailmap subsecond stacks.txt --range 12.340..13.020 -o range.svg\n"
      "Exit codes: 0 ok, 1 the input cannot be read, 2 usage error.");
  return cmd;
}

int RunSubsecond(const SubsecondFlags& flags, const CliContext& context, std::istream& in) {
  Result<std::string> text = ReadInputText(flags.input, in);
  if (!text.ok()) {
    *context.err << "trailmap subsecond: " << text.status().message() << "\n";
    return kExitError;
  }
  const PerfSamples samples = ReadPerfSamples(*text, flags.include_idle);
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
