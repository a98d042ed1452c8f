#include "query/render/heatmap_svg.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/timespec.h"
#include "core/units.h"
#include "query/draw/axis.h"
#include "query/draw/palette.h"
#include "query/draw/svg_text.h"
#include "query/draw/view_text.h"
#include "query/render/heatmap_text.h"
#include "query/render/shades.h"

namespace trailmap {
namespace {

constexpr int kPanel = kHeatmapMargins.panel;  // the side panel of events per second
constexpr int kTop = kHeatmapMargins.top;      // up to three title lines

}  // namespace

std::string RenderHeatmapSvg(const HeatmapView& view, const SvgOptions& options) {
  const GridLayout l = LayoutHeatmap(view, options);
  const int cell_w = l.cell_w, cell_h = l.cell_h, plot_w = l.plot_w, plot_h = l.plot_h;
  const int kLeft = l.left, width = l.width, height = l.height, bottom = l.bottom();

  std::string out;
  out.reserve(4096 + size_t{view.nonzero_cells} * 160);
  out += SvgOpen(width, height);
  out += SvgHeading(kLeft, HeatmapTitle(view), HeatmapSubtitle(view), HeatmapNotDrawn(view));

  // Plot frame and cells.
  out += "<rect x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(kTop) + "\" width=\"" +
         std::to_string(plot_w) + "\" height=\"" + std::to_string(plot_h) +
         "\" fill=\"#ffffff\" stroke=\"#999999\" stroke-width=\"1\"/>\n";
  out += "<g shape-rendering=\"crispEdges\">\n";
  // A view has up to a million cells: the pieces every cell of a row or column shares (its
  // position and the lines of its hover text, as CellDescription writes them) are made once, so
  // a cell costs a few appends (bench/render_bench.cc).
  std::vector<std::string> column_head(view.columns), column_text(view.columns);
  for (uint32_t c = 0; c < view.columns; ++c) {
    column_head[c] = "<rect x=\"" + std::to_string(kLeft + static_cast<int>(c) * cell_w) + "\" y=\"";
    column_text[c] = XmlEscape(FormatClock(view.ColumnStart(c)) + "–" +
                            FormatClock(view.ColumnEnd(c)) + " UTC\n");
  }
  const std::string size = "\" width=\"" + std::to_string(cell_w) + "\" height=\"" +
                           std::to_string(cell_h) + "\" fill=\"";
  const bool grouped = !view.groups.empty() && !view.breakdown.empty();
  std::vector<std::string> level_fill(kShadeLevels);
  for (int level = 0; level < kShadeLevels; ++level) {
    level_fill[level] = HexColor(PaletteColor(view.palette, level));
  }
  for (uint32_t r = 0; r < view.rows; ++r) {
    const std::string y = std::to_string(bottom - static_cast<int>(r + 1) * cell_h);
    const std::string row_text = XmlEscape(FormatQuantity(view.RowLow(r), view.unit) + " to " +
                                        FormatQuantity(view.RowHigh(r), view.unit) + "\n");
    for (uint32_t c = 0; c < view.columns; ++c) {
      const size_t i = view.Index(r, c);
      const uint64_t n = view.counts[i];
      if (n == 0) continue;
      out += column_head[c];
      out += y;
      out += size;
      out += grouped ? HexColor(CellColor(view, i)) : level_fill[view.levels[i]];
      out += "\"><title>";
      if (grouped) {
        out += XmlEscape(CellDescription(view, r, c));
      } else {
        out += column_text[c];
        out += row_text;
        out += FormatCount(n);
        out += " " + CountNoun(view.kind, n);
      }
      out += "</title></rect>\n";
    }
  }
  out += "</g>\n";

  // Percentile overlays: one polyline a percentile through the columns' middles, broken at
  // empty columns and values off the axis.
  for (size_t p = 0; p < view.overlay.size(); ++p) {
    const auto& line = view.overlay[p];
    std::string points;
    auto flush = [&out, &points, p, &line]() {
      if (points.empty()) return;
      out += "<polyline fill=\"none\" stroke=\"" + HexColor(OverlayColor(p)) +
             "\" stroke-width=\"2\" points=\"" + points + "\"><title>" + line.name +
             "</title></polyline>\n";
      points.clear();
    };
    for (uint32_t c = 0; c < view.columns && c < line.values.size(); ++c) {
      const double f = ValueFraction(view, static_cast<double>(line.values[c]));
      if (line.values[c] == 0 || f < 0 || f > 1) {
        flush();
        continue;
      }
      points += (points.empty() ? "" : " ") + SvgNumber(kLeft + (c + 0.5) * cell_w) + "," +
                SvgNumber(bottom - f * plot_h);
    }
    flush();
  }

  // Value axis: round ticks in the metric's unit.
  out += "<g fill=\"#222222\" text-anchor=\"end\">\n";
  for (const ValueTick& tick : ValueAxisTicks(view, std::max(2, std::min(8, plot_h / 50)))) {
    const double y = bottom - tick.fraction * plot_h;
    out += "<line x1=\"" + std::to_string(kLeft - 5) + "\" x2=\"" + std::to_string(kLeft) +
           "\" y1=\"" + SvgNumber(y) + "\" y2=\"" + SvgNumber(y) + "\" stroke=\"#555555\"/>";
    out += "<text x=\"" + std::to_string(kLeft - 8) + "\" y=\"" + SvgNumber(y + 4) + "\">" +
           XmlEscape(tick.label) + "</text>\n";
  }
  out += "</g>\n";

  // Side panel (seed 003): each row's average events per second over the range, every k-th row
  // when rows are too thin to label, and the visible range's average below.
  if (options.side_panel) {
    const std::vector<double> rates = RowEventsPerSecond(view);
    out += "<rect x=\"0\" y=\"" + std::to_string(kTop) + "\" width=\"" +
           std::to_string(kPanel - 10) + "\" height=\"" + std::to_string(plot_h) +
           "\" fill=\"#f6f6f6\"/>\n";
    out += "<text x=\"4\" y=\"" + std::to_string(kTop - 6) +
           "\" fill=\"#444444\" font-size=\"11\">" + RateHeading(view.kind) + "</text>\n";
    out += "<g fill=\"#222222\" text-anchor=\"end\" font-size=\"11\">\n";
    const int every = std::max(1, (12 + cell_h - 1) / cell_h);
    for (uint32_t r = 0; r < view.rows; r += every) {
      const double y = bottom - (r + 0.5) * cell_h + 4;
      out += "<text x=\"" + std::to_string(kPanel - 14) + "\" y=\"" + SvgNumber(y) + "\">" +
             XmlEscape(FormatRate(rates[r])) + "</text>\n";
    }
    out += "</g>\n";
    out += "<text x=\"4\" y=\"" + std::to_string(bottom + 18) +
           "\" fill=\"#444444\" font-size=\"11\">range avg:</text>\n";
    out += "<text x=\"4\" y=\"" + std::to_string(bottom + 32) + "\" font-size=\"11\">" +
           XmlEscape(FormatRate(RangeEventsPerSecond(view)) + RateSuffix(view.kind)) + "</text>\n";
  }

  // Time axis: clock-aligned UTC labels at least ~90 px apart.
  const double px_per_second = static_cast<double>(cell_w) / view.step;
  const int64_t interval = TimeTickInterval(90.0 / px_per_second);
  out += "<g fill=\"#222222\" text-anchor=\"middle\">\n";
  for (int64_t t : TimeTicks(view.from, view.to, interval)) {
    const double x = kLeft + static_cast<double>(t - view.from) * px_per_second;
    out += "<line x1=\"" + SvgNumber(x) + "\" x2=\"" + SvgNumber(x) + "\" y1=\"" + std::to_string(bottom) +
           "\" y2=\"" + std::to_string(bottom + 5) + "\" stroke=\"#555555\"/>";
    out += "<text x=\"" + SvgNumber(x) + "\" y=\"" + std::to_string(bottom + 18) + "\">" +
           TimeTickLabel(t, interval) + "</text>\n";
  }
  out += "</g>\n";
  out += "<text x=\"" + std::to_string(kLeft + plot_w) + "\" y=\"" + std::to_string(bottom + 34) +
         "\" text-anchor=\"end\" fill=\"#444444\">time (UTC), " + std::to_string(view.step) +
         " s per column</text>\n";

  // Legend.
  const int ly = bottom + 50;
  const int next_y = ly + (view.groups.empty() ? 40 : 24);  // overlays, then missing shards
  if (view.groups.empty()) {
    out += "<text x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(ly + 11) +
           "\" fill=\"#444444\">fewer</text>\n";
    const int ramp_x = kLeft + 40;
    for (int level = 1; level < kShadeLevels; ++level) {
      out += "<rect x=\"" + std::to_string(ramp_x + (level - 1) * 8) + "\" y=\"" +
             std::to_string(ly) + "\" width=\"8\" height=\"14\" fill=\"" +
             HexColor(PaletteColor(view.palette, level)) + "\"/>";
    }
    // The coloring's explanation goes under the ramp, where it fits however narrow the image.
    out += "\n<text x=\"" + std::to_string(ramp_x + (kShadeLevels - 1) * 8 + 6) + "\" y=\"" +
           std::to_string(ly + 11) + "\" fill=\"#444444\">more</text>\n";
    out += "<text x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(ly + 29) +
           "\" fill=\"#444444\">(" + XmlEscape(ColoringLegend(view)) + ")</text>\n";
  } else {
    int x = kLeft;
    for (const LegendEntry& e : GroupLegend(view, 10)) {
      if (e.name[0] != '+') {
        out += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(ly) +
               "\" width=\"12\" height=\"12\" fill=\"" + HexColor(e.color) + "\"/>";
      }
      out += "<text x=\"" + std::to_string(x + 16) + "\" y=\"" + std::to_string(ly + 11) + "\">" +
             XmlEscape(e.name) + "</text>\n";
      x += 28 + 7 * static_cast<int>(std::min<size_t>(e.name.size(), 24));
    }
  }
  if (!view.overlay.empty()) {
    int x = kLeft;
    for (size_t p = 0; p < view.overlay.size(); ++p) {
      out += "<line x1=\"" + std::to_string(x) + "\" x2=\"" + std::to_string(x + 16) +
             "\" y1=\"" + std::to_string(next_y + 1) + "\" y2=\"" + std::to_string(next_y + 1) +
             "\" stroke=\"" + HexColor(OverlayColor(p)) + "\" stroke-width=\"2\"/>";
      out += "<text x=\"" + std::to_string(x + 20) + "\" y=\"" + std::to_string(next_y + 5) + "\">" +
             view.overlay[p].name + "</text>\n";
      x += 40 + 7 * static_cast<int>(view.overlay[p].name.size());
    }
  }
  if (!view.missing_shards.empty()) {
    out += "<text x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(next_y + 20) +
           "\" fill=\"#b00000\">partial: " + XmlEscape(MissingShardsText(view)) + "</text>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace trailmap
