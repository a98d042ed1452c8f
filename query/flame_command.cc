#include "query/flame_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <istream>
#include <iterator>
#include <ostream>
#include <sstream>

#include "query/flame.h"
#include "query/render_flame.h"

namespace trailmap {
namespace {

int Fail(const CliContext& context, const Status& status) {
  *context.err << "trailmap flame: " << status.message() << "\n";
  return ExitCodeFor(status);
}

}  // namespace

CLI::App* AddFlameCommand(CLI::App* app, FlameFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "flame", "Flame graph of folded stacks: interactive SVG, d3-flame-graph JSON or folded");
  cmd->add_option("--folded", flags->folded,
                  "Folded stacks (\"a;b;c 42\" lines) to draw: FILE, or - for standard input")
      ->required();
  cmd->add_option("--format,-f", flags->format, "svg, json (d3-flame-graph) or folded")
      ->capture_default_str()
      ->check(CLI::IsMember({"svg", "json", "folded"}));
  cmd->add_option("--palette", flags->palette,
                  "hot, mem, io, java / js (by the _[j] _[i] _[k] annotations), self (self time)")
      ->capture_default_str()
      ->check(CLI::IsMember({"hot", "mem", "io", "java", "js", "self"}));
  cmd->add_option("--title", flags->title, "Title (default Flame Graph / Icicle Graph)");
  cmd->add_flag("--inverted", flags->inverted, "Icicle graph: root at the top");
  cmd->add_option("--minwidth", flags->min_width, "Omit frames narrower than this many pixels")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--width", flags->width, "Image width in pixels")
      ->capture_default_str()
      ->check(CLI::Range(100, 100000));
  cmd->add_option("--countname", flags->count_name, "What a count is, in tooltips")
      ->capture_default_str();
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->add_option("--baseline-folded", flags->baseline_folded,
                  "Differential graph: widths from --folded, each frame red where it grew and "
                  "blue where it shrank against these folded stacks (FILE or -; --palette is then "
                  "not used)");
  cmd->add_flag("--no-normalize", flags->no_normalize,
                "With --baseline-folded: compare raw counts instead of scaling the baseline to "
                "the target's total");
  cmd->footer(
      "Examples:\n"
      "  perf script | trailmap collapse | trailmap flame --folded - -o cpu.svg\n"
      "  trailmap flame --folded out.folded --inverted --palette self -o icicle.svg\n"
      "  trailmap flame --folded out.folded --format json > d3.json\n"
      "  trailmap flame --folded after.folded --baseline-folded before.folded -o diff.svg\n"
      "Exit codes: 0 ok, 1 error, 2 usage error.");
  return cmd;
}

static Result<std::string> ReadFolded(const std::string& path, std::istream& in) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return Status::IOError("cannot open " + path);
  std::ostringstream buf;
  buf << file.rdbuf();
  return std::move(buf).str();
}

int RunFlame(const FlameFlags& flags, const CliContext& context, std::istream& in) {
  Result<FlamePalette> palette = ParseFlamePalette(flags.palette);
  if (!palette.ok()) return Fail(context, palette.status());
  if (!flags.baseline_folded.empty() && flags.baseline_folded == "-" && flags.folded == "-") {
    return Fail(context, Status::InvalidArgument(
                             "--folded and --baseline-folded cannot both be standard input"));
  }
  Result<std::string> text = ReadFolded(flags.folded, in);
  if (!text.ok()) return Fail(context, text.status());
  FlameTree tree;
  std::string diff_folded;
  std::string subtitle;
  if (flags.baseline_folded.empty()) {
    tree = BuildFlameTree(*text);
  } else {
    Result<std::string> base_text = ReadFolded(flags.baseline_folded, in);
    if (!base_text.ok()) return Fail(context, base_text.status());
    uint64_t bad_target = 0, bad_base = 0;
    const FoldedMap target = ParseFoldedMap(*text, &bad_target);
    const FoldedMap baseline = ParseFoldedMap(*base_text, &bad_base);
    if (bad_base > 0) {
      *context.err << "trailmap flame: ignored " << bad_base
                   << " baseline lines with invalid format\n";
    }
    tree = BuildDiffFlameTree(baseline, target, !flags.no_normalize);
    tree.invalid_lines = bad_target;
    if (flags.format == "folded") diff_folded = FormatDiffFolded(baseline, target, !flags.no_normalize);
    char scale[64];
    snprintf(scale, sizeof scale, "%.4g", tree.baseline_scale);
    subtitle = "red: more than in " + flags.baseline_folded + ", blue: less" +
               (flags.no_normalize ? std::string(" (raw counts)")
                                   : " (baseline scaled by " + std::string(scale) +
                                         " to the same total)");
  }
  if (tree.invalid_lines > 0) {
    *context.err << "trailmap flame: ignored " << tree.invalid_lines
                 << " lines with invalid format\n";
  }
  std::string bytes;
  if (flags.format == "json") {
    bytes = RenderFlameJson(tree);
  } else if (flags.format == "folded") {
    bytes = tree.differential ? diff_folded : RenderFlameFolded(tree);
  } else {
    FlameSvgOptions options;
    options.title = flags.title;
    options.inverted = flags.inverted;
    options.min_width = flags.min_width;
    options.width = flags.width;
    options.palette = *palette;
    options.count_name = flags.count_name;
    options.subtitle = subtitle;
    bytes = RenderFlameSvg(tree, options);
  }
  const Status written = WriteOutput(context, flags.output, bytes);
  if (!written.ok()) return Fail(context, written);
  return kExitOk;
}

}  // namespace trailmap
