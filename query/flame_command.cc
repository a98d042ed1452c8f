#include "query/flame_command.h"

#include <CLI/CLI.hpp>
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
  cmd->footer(
      "Examples:\n"
      "  perf script | trailmap collapse | trailmap flame --folded - -o cpu.svg\n"
      "  trailmap flame --folded out.folded --inverted --palette self -o icicle.svg\n"
      "  trailmap flame --folded out.folded --format json > d3.json\n"
      "Exit codes: 0 ok, 1 error, 2 usage error.");
  return cmd;
}

int RunFlame(const FlameFlags& flags, const CliContext& context, std::istream& in) {
  Result<FlamePalette> palette = ParseFlamePalette(flags.palette);
  if (!palette.ok()) return Fail(context, palette.status());
  std::string text;
  if (flags.folded == "-") {
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else {
    std::ifstream file(flags.folded, std::ios::binary);
    if (!file) return Fail(context, Status::IOError("cannot open " + flags.folded));
    std::ostringstream buf;
    buf << file.rdbuf();
    text = std::move(buf).str();
  }
  const FlameTree tree = BuildFlameTree(text);
  if (tree.invalid_lines > 0) {
    *context.err << "trailmap flame: ignored " << tree.invalid_lines
                 << " lines with invalid format\n";
  }
  std::string bytes;
  if (flags.format == "json") {
    bytes = RenderFlameJson(tree);
  } else if (flags.format == "folded") {
    bytes = RenderFlameFolded(tree);
  } else {
    FlameSvgOptions options;
    options.title = flags.title;
    options.inverted = flags.inverted;
    options.min_width = flags.min_width;
    options.width = flags.width;
    options.palette = *palette;
    options.count_name = flags.count_name;
    bytes = RenderFlameSvg(tree, options);
  }
  const Status written = WriteOutput(context, flags.output, bytes);
  if (!written.ok()) return Fail(context, written);
  return kExitOk;
}

}  // namespace trailmap
