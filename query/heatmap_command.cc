#include "query/heatmap_command.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <ostream>

#include "core/units.h"
#include "query/heatmap.h"
#include "query/render_ansi.h"
#include "query/render_json.h"
#include "query/render_png.h"
#include "query/render_svg.h"

namespace trailmap {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<uint32_t> ParseStep(const std::string& text) {
  if (text.empty()) return 0u;
  bool digits = text.size() <= 9;
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  Result<uint64_t> ns =
      digits ? Result<uint64_t>(std::stoull(text) * 1'000'000'000ull) : ParseDuration(text);
  if (!ns.ok()) return Status::InvalidArgument("--step: " + ns.status().message());
  if (*ns < 1'000'000'000ull || *ns % 1'000'000'000ull != 0 ||
      *ns / 1'000'000'000ull > 86400 * 366) {
    return Status::InvalidArgument("--step " + text +
                                   ": a step is whole seconds, at least 1s (e.g. 1s, 10s, 1m)");
  }
  return static_cast<uint32_t>(*ns / 1'000'000'000ull);
}

// "p99" or "99.9" → the percentile.
Result<double> ParseOverlay(const std::string& text) {
  std::string digits = text;
  if (!digits.empty() && (digits[0] == 'p' || digits[0] == 'P')) digits.erase(0, 1);
  char* end = nullptr;
  const double p = digits.empty() ? -1 : std::strtod(digits.c_str(), &end);
  if (digits.empty() || *end != '\0' || !(p > 0 && p <= 100)) {
    return Status::InvalidArgument("--overlay " + text +
                                   ": give percentiles like p50,p99,p99.9 (above 0, at most 100)");
  }
  return p;
}

int Fail(const CliContext& context, const Status& status) {
  *context.err << "trailmap heatmap: " << status.message() << "\n";
  return ExitCodeFor(status);
}

}  // namespace

CLI::App* AddHeatmapCommand(CLI::App* app, HeatmapFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "heatmap", "Heat map of a metric: time on x, value on y, cells shaded by how many events");
  AddQueryFlags(cmd, &flags->query);
  cmd->add_option("--rows", flags->rows, "Rows of the value axis")
      ->capture_default_str()
      ->check(CLI::Range(1, 2000));
  cmd->add_option("--cols", flags->cols,
                  "Columns of the time axis (default: fit the range, 1s each, "
                  "at most 120 in a terminal or 600 in SVG/JSON)")
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
  // Everything a user typed is checked before any shard is asked.
  Result<TimeRange> range = ParseTimeRange(flags.query, context.now);
  if (!range.ok()) return Fail(context, range.status());
  Result<uint32_t> step = ParseStep(flags.step);
  if (!step.ok()) return Fail(context, step.status());
  if (*step && flags.cols)
    return Fail(context, Status::InvalidArgument("give --cols or --step, not both"));
  Result<Coloring> coloring = ParseColoring(flags.coloring);
  if (!coloring.ok()) return Fail(context, coloring.status());
  Result<Palette> palette = ParsePalette(flags.palette);
  if (!palette.ok()) return Fail(context, palette.status());
  Result<ValueScale> scale = ParseValueScale(flags.scale);
  if (!scale.ok()) return Fail(context, scale.status());
  HeatmapOptions options;
  options.rows = flags.rows;
  options.coloring = *coloring;
  options.per_column = flags.per_column;
  options.palette = *palette;
  options.scale = *scale;
  options.select = SplitList(flags.select);
  options.selection = flags.isolate   ? Selection::kIsolate
                      : flags.exclude ? Selection::kExclude
                                      : Selection::kHue;
  if (!options.select.empty() && flags.query.by.empty()) {
    return Fail(context, Status::InvalidArgument("--select needs --by host or --by FIELD"));
  }
  if ((flags.isolate || flags.exclude) && options.select.empty()) {
    return Fail(context, Status::InvalidArgument("--isolate and --exclude need --select a,b"));
  }
  for (const std::string& p : SplitList(flags.overlay)) {
    Result<double> percentile = ParseOverlay(p);
    if (!percentile.ok()) return Fail(context, percentile.status());
    options.overlay.push_back(*percentile);
  }
  if (!flags.clip.empty()) {
    Result<double> clip = ParsePercent(flags.clip);
    if (!clip.ok())
      return Fail(context, Status::InvalidArgument("--clip: " + clip.status().message()));
    options.clip_percent = *clip;
  }
  for (const auto& [name, text] : {std::pair{"--ymin", &flags.ymin}, {"--ymax", &flags.ymax}}) {
    if (!text->empty() && !ParseQuantity(*text, "ns").ok() && !ParseQuantity(*text, "B").ok()) {
      return Fail(context, Status::InvalidArgument(std::string(name) + ": " +
                                                   ParseQuantity(*text, "ns").status().message()));
    }
  }
  std::string format = flags.format;
  if (format.empty()) {
    format = EndsWith(flags.output, ".svg")    ? "svg"
             : EndsWith(flags.output, ".png")  ? "png"
             : EndsWith(flags.output, ".json") ? "json"
                                               : "ansi";
  }
  if (format == "png" && flags.output.empty() && context.stdout_is_terminal) {
    return Fail(context, Status::InvalidArgument(
                             "--format png writes binary: give -o FILE.png or redirect stdout"));
  }
  uint32_t max_columns = 600;
  if (format == "ansi") {
    max_columns = 120;
    if (context.terminal_columns > 20) {
      max_columns =
          std::min<uint32_t>(max_columns, static_cast<uint32_t>(context.terminal_columns) - 10);
    }
  }
  Result<ColumnPlan> plan = PlanColumns(range->from, range->to, flags.cols, *step, max_columns);
  if (!plan.ok()) return Fail(context, plan.status());

  HistogramQuery query;
  query.metric = flags.query.metric;
  query.from = range->from;
  query.to = range->from + int64_t{plan->step} * plan->columns;
  query.to = std::min(query.to, range->to);
  query.step = plan->step;
  query.group_by = flags.query.by;
  query.hosts = SplitList(flags.query.hosts);

  Result<Fetched> fetched = FetchGrid(context, flags.query, query);
  if (!fetched.ok()) return Fail(context, fetched.status());
  if (!flags.ymax.empty()) {
    Result<uint64_t> ymax = ParseQuantity(flags.ymax, fetched->grid.unit);
    if (!ymax.ok()) {
      return Fail(context,
                  Status::InvalidArgument("--ymax: " + query.metric + " is in " +
                                          fetched->grid.unit + ": " + ymax.status().message()));
    }
    if (*ymax == 0) return Fail(context, Status::InvalidArgument("--ymax must be above 0"));
    options.ymax = *ymax;
  }
  if (!flags.ymin.empty()) {
    Result<uint64_t> ymin = ParseQuantity(flags.ymin, fetched->grid.unit);
    if (!ymin.ok()) {
      return Fail(context,
                  Status::InvalidArgument("--ymin: " + query.metric + " is in " +
                                          fetched->grid.unit + ": " + ymin.status().message()));
    }
    options.ymin = *ymin;
  }
  Result<HeatmapView> view = AssembleHeatmap(fetched->grid, options);
  if (!view.ok()) return Fail(context, view.status());
  view->missing_shards = fetched->missing;

  std::string bytes;
  if (format == "svg") {
    SvgOptions svg;
    svg.plot_width = flags.width;
    svg.plot_height = flags.height;
    svg.side_panel = flags.panel;
    bytes = RenderHeatmapSvg(*view, svg);
  } else if (format == "png") {
    PngOptions png;
    png.plot_width = flags.width;
    png.plot_height = flags.height;
    png.side_panel = flags.panel;
    Result<std::string> encoded = RenderHeatmapPng(*view, png);
    if (!encoded.ok()) return Fail(context, encoded.status());
    bytes = std::move(*encoded);
  } else if (format == "json") {
    bytes = RenderHeatmapJson(*view);
  } else {
    bytes = RenderHeatmapAnsi(*view);
  }
  if (Status s = WriteOutput(context, flags.output, bytes); !s.ok()) return Fail(context, s);
  return ReportMissing(context, fetched->missing);
}

}  // namespace trailmap
