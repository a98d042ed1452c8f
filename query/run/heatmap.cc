#include "query/run/heatmap.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ostream>

#include "core/failpoint.h"
#include "core/timespec.h"
#include "core/units.h"
#include "query/fetch/request_checks.h"
#include "query/render/heatmap_ansi.h"
#include "query/render/heatmap_cell.h"
#include "query/render/heatmap_json.h"
#include "query/render/heatmap_png.h"
#include "query/render/heatmap_svg.h"
#include "query/run/catalog.h"
#include "query/run/words.h"
#include "query/views/heatmap.h"
#include "query/views/heatmap_cell.h"

namespace trailmap {
namespace {

// --at: the cell's count, its --by values (from the view) and its hosts (a second query of that
// one column grouped by host), as text or JSON.
Result<ViewDocument> RunCellDetails(const HeatmapRequest& flags, const QueryContext& context,
                                    HistogramQuery query, const HeatmapView& view,
                                    const std::string& format) {
  const size_t comma = flags.at.rfind(',');
  if (comma == std::string::npos) {
    return Status::InvalidArgument("--at " + flags.at + ": give TIME,VALUE, e.g. 16:05:03,12ms");
  }
  Result<int64_t> t = ParseClockOrTime(flags.at.substr(0, comma), view.from, context.now);
  if (!t.ok()) return Status::InvalidArgument("--at: " + t.status().message());
  Result<uint64_t> v = ParseQuantity(flags.at.substr(comma + 1), view.unit);
  if (!v.ok()) return Status::InvalidArgument("--at: " + v.status().message());
  if (*t < view.from || *t >= view.to) {
    return Status::InvalidArgument("--at: " + FormatRfc3339(*t) + " is outside the range " +
                                   FormatRfc3339(view.from) + " + " +
                                   std::to_string(view.to - view.from) + "s");
  }
  const int64_t row = RowOf(view, static_cast<double>(*v));
  if (row < 0) {
    return Status::InvalidArgument(
        "--at: " + FormatQuantity(static_cast<double>(*v), view.unit) +
        " is outside the value axis [" + FormatQuantity(static_cast<double>(view.ymin), view.unit) +
        ", " + FormatQuantity(static_cast<double>(view.ymax), view.unit) + ")");
  }
  const auto column = static_cast<uint32_t>((*t - view.from) / view.step);
  const auto r = static_cast<uint32_t>(row);

  query.from = view.ColumnStart(column);
  query.to = view.ColumnEnd(column);
  query.step = view.step;
  query.group_by = "host";
  Result<Fetched> hosts = FetchGrid(context, flags.query, query);
  if (!hosts.ok()) return hosts.status();
  std::vector<std::string> missing = view.missing_shards;
  missing.insert(missing.end(), hosts->missing.begin(), hosts->missing.end());
  const HeatmapCell cell = AssembleHeatmapCell(view, r, column, hosts->grid, std::move(missing));
  ViewDocument doc;
  doc.bytes = format == "json" ? RenderHeatmapCellJson(cell) : RenderHeatmapCellText(cell);
  doc.format = format == "json" ? "json" : "text";
  doc.missing = cell.missing_shards;
  return doc;
}

}  // namespace

Result<ViewDocument> RunHeatmapView(const HeatmapRequest& flags, const QueryContext& context) {
  // Everything a user typed is checked before any shard is asked: the table's ranges and choices
  // (the CLI and the API read them with the same table), then what joins two options.
  if (Status s = HeatmapParameters().Check(flags); !s.ok()) return s;
  if (flags.isolate && flags.exclude) {
    return Status::InvalidArgument("--isolate excludes --exclude");
  }
  Result<TimeRange> range = ParseTimeRange(flags.query, context.now);
  if (!range.ok()) return range.status();
  Result<uint32_t> step = ParseStepWords(flags.step);
  if (!step.ok()) return step.status();
  if (*step && flags.cols) return Status::InvalidArgument("give --cols or --step, not both");
  Result<Coloring> coloring = ParseColoring(flags.coloring);
  if (!coloring.ok()) return coloring.status();
  Result<Palette> palette = ParsePalette(flags.palette);
  if (!palette.ok()) return palette.status();
  Result<ValueScale> scale = ParseValueScale(flags.scale);
  if (!scale.ok()) return scale.status();
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
    return Status::InvalidArgument("--select needs --by host or --by FIELD");
  }
  if ((flags.isolate || flags.exclude) && options.select.empty()) {
    return Status::InvalidArgument("--isolate and --exclude need --select a,b");
  }
  Result<std::vector<double>> overlay = ParsePercentiles(flags.overlay);
  if (!overlay.ok()) return overlay.status();
  options.overlay = std::move(overlay).value();
  if (!flags.clip.empty()) {
    Result<double> clip = ParsePercent(flags.clip);
    if (!clip.ok()) return Status::InvalidArgument("--clip: " + clip.status().message());
    options.clip_percent = *clip;
  }
  if (Status s = CheckAxisWords("--ymin", flags.ymin); !s.ok()) return s;
  if (Status s = CheckAxisWords("--ymax", flags.ymax); !s.ok()) return s;
  const std::string format = flags.format.empty() ? "ansi" : flags.format;
  if (format == "svg" || format == "png") {
    const std::string size =
        "--width " + std::to_string(flags.width) + " × --height " + std::to_string(flags.height);
    if (Status s = CheckImagePixels(size, flags.width, flags.height); !s.ok()) return s;
  }
  // At most one column per pixel of the plot, and 600 (the cost follows the pixels).
  uint32_t max_columns = static_cast<uint32_t>(std::clamp(flags.width, 1, 600));
  if (format == "ansi" && flags.at.empty()) {  // --at prints no map: plan columns as for SVG
    max_columns = 120;
    if (context.terminal_columns > 20) {
      max_columns =
          std::min<uint32_t>(max_columns, static_cast<uint32_t>(context.terminal_columns) - 10);
    }
  }
  Result<ColumnPlan> plan = PlanColumns(range->from, range->to, flags.cols, *step, max_columns);
  if (!plan.ok()) return plan.status();

  HistogramQuery query;
  query.metric = flags.query.metric;
  query.from = plan->from;
  query.to = plan->from + int64_t{plan->step} * plan->columns;
  query.to = std::min(query.to, range->to);
  query.step = plan->step;
  query.group_by = flags.query.by;
  query.hosts = SplitList(flags.query.hosts);

  const auto started = std::chrono::steady_clock::now();
  Result<Fetched> fetched = FetchGrid(context, flags.query, query);
  if (!fetched.ok()) return fetched.status();
  if (!flags.ymax.empty()) {
    Result<uint64_t> ymax = ParseAxisFlag("--ymax", flags.ymax, query.metric, fetched->grid.unit);
    if (!ymax.ok()) return ymax.status();
    if (*ymax == 0) return Status::InvalidArgument("--ymax must be above 0");
    options.ymax = *ymax;
  }
  if (!flags.ymin.empty()) {
    Result<uint64_t> ymin = ParseAxisFlag("--ymin", flags.ymin, query.metric, fetched->grid.unit);
    if (!ymin.ok()) return ymin.status();
    options.ymin = *ymin;
  }
  Result<HeatmapView> view = AssembleHeatmap(fetched->grid, options);
  if (!view.ok()) return view.status();
  if (Status s = GoOn(context, flags.query); !s.ok()) return s;
  view->missing_shards = fetched->missing;
  view->where = flags.query.where;
  if (!flags.at.empty()) return RunCellDetails(flags, context, query, *view, format);
  // The plan's second stage, within what is left of the first's deadline: the overflow note (not
  // when a shard is silent: it would count without it).
  std::optional<std::string> overflow;
  if (fetched->missing.empty()) {
    overflow = OverflowNoteFor(context, flags.query, query.from, query.to, started);
  }

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
    png.stop = [&context, &flags] { return !GoOn(context, flags.query).ok(); };
    (void)TRAILMAP_FAILPOINT("query.heatmap.draw");  // "sleep:MS": a drawing that takes long
    Result<std::string> encoded = RenderHeatmapPng(*view, png);
    if (!encoded.ok()) {
      if (Status s = GoOn(context, flags.query); !s.ok()) return s;
      return encoded.status();
    }
    bytes = std::move(*encoded);
  } else if (format == "json") {
    bytes = RenderHeatmapJson(*view);
  } else {
    bytes = RenderHeatmapAnsi(*view);
  }
  ViewDocument doc;
  doc.bytes = std::move(bytes);
  doc.format = format;
  doc.missing = fetched->missing;
  NoteSkipped(fetched->skipped, &doc);
  if (overflow) doc.notes.push_back(std::move(*overflow));
  return doc;
}

}  // namespace trailmap
