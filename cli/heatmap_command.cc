#include "cli/heatmap_command.h"

#include <CLI/CLI.hpp>

namespace trailmap {

CLI::App* AddHeatmapCommand(CLI::App* app, HeatmapFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "heatmap", "Heat map of a metric: time on x, value on y, cells shaded by how many events");
  AddQueryFlags(cmd, &flags->query);
  cmd->add_option("--rows", flags->rows, "Rows of the value axis")
      ->capture_default_str()
      ->check(CLI::Range(1, 2000));
  cmd->add_option("--cols", flags->cols,
                  "Columns of the time axis (default: fit the range, 1s each, at most 120 in "
                  "a terminal or 600 in SVG/JSON, each a step the stored 1 s, 10 s, 1 min and "
                  "10 min rollups serve exactly: 1, 2, 5, 10, 20, 30 s, 1, 2, 5, 10, 20, 30 min, "
                  "1, 2, 3, 6, 12 h or whole days, the first starting on a multiple of that "
                  "rollup)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--step", flags->step, "Seconds per column instead of --cols: 1s, 10s, 1m");
  cmd->add_option("--ymin", flags->ymin,
                  "Bottom of the value axis, with a unit (5us); with --ymax, zoom into a band "
                  "redrawn from the stored histograms");
  cmd->add_option("--ymax", flags->ymax,
                  "Top of the value axis, with a unit (20ms, 4KiB) to zoom in; default: the "
                  "largest value, rounded up to 1, 2 or 5 x 10^k");
  cmd->add_option("--clip", flags->clip,
                  "Leave the top P% of events above the axis so outliers do not squash the rest: "
                  "0.1%");
  cmd->add_option("--coloring", flags->coloring,
                  "rank: shade by the rank of a cell's count (outliers stay visible); linear: "
                  "shade by count / max")
      ->capture_default_str()
      ->check(CLI::IsMember({"rank", "linear"}));
  cmd->add_flag("--per-column", flags->per_column,
                "Shade each column by its own largest count (or rank) so quiet seconds read as "
                "well as busy ones");
  cmd->add_option("--palette", flags->palette,
                  "heat: white to dark red, shade ~ count; false: false colors that bring out "
                  "faint detail (shades no longer compare counts)")
      ->capture_default_str()
      ->check(CLI::IsMember({"heat", "false"}));
  cmd->add_option("--scale", flags->scale, "Value axis: linear or log")
      ->capture_default_str()
      ->check(CLI::IsMember({"linear", "log"}));
  cmd->add_option("--overlay", flags->overlay,
                  "Percentile lines drawn over the SVG/PNG (and listed in JSON): p50,p99");
  cmd->add_option("--select", flags->select,
                  "With --by: these values keep their own hues, the rest are one grey \"other\" "
                  "(web-1,web-2)");
  auto* isolate = cmd->add_flag("--isolate", flags->isolate, "With --select: draw only them");
  cmd->add_flag("--exclude", flags->exclude, "With --select: draw only the other values")
      ->excludes(isolate);
  cmd->add_option("--at", flags->at,
                  "TIME,VALUE: instead of the map, list the cell holding that time and value: its "
                  "count, its --by values and its hosts (16:05:03,12ms; unix or RFC 3339 times)");
  cmd->add_option("--width", flags->width, "SVG/PNG plot width in pixels (cells are whole pixels)")
      ->capture_default_str()
      ->check(CLI::Range(100, 20000));
  cmd->add_option("--height", flags->height, "SVG/PNG plot height in pixels")
      ->capture_default_str()
      ->check(CLI::Range(50, 20000));
  cmd->add_flag("--panel,!--no-panel", flags->panel,
                "SVG/PNG: the side panel of average events per second per row (default on)");
  cmd->add_option("--format,-f", flags->format,
                  "ansi (a truecolor terminal), svg, png or json (docs/json.md); default ansi, or "
                  "svg / png / json when -o ends in .svg / .png / .json")
      ->check(CLI::IsMember({"ansi", "svg", "png", "json"}));
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
    return FinishView(context, "heatmap",
                      Status::InvalidArgument(
                          "--format png writes binary: give -o FILE.png or redirect stdout"),
                      flags.output);
  }
  return FinishView(context, "heatmap", RunHeatmapView(request, context), flags.output);
}

}  // namespace trailmap
