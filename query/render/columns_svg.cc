#include "query/render/columns.h"

#include <algorithm>
#include <cstdio>
#include <string>
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

constexpr int kLeft = kColumnsMargins.left;  // room for value labels
constexpr int kTop = kColumnsMargins.top;    // up to three title lines

std::string Direction(const ColumnsView& view) {
  if (view.sort == ColumnsSort::kName) return view.reverse ? "Z to A" : "A to Z";
  return view.reverse ? "smallest first" : "largest first";
}

}  // namespace

std::string ColumnsTitle(const ColumnsView& view) {
  return view.metric + " by host, sorted by " + ColumnsSortName(view.sort);
}

std::string ColumnsSubtitle(const ColumnsView& view) {
  std::string hosts = FormatCount(view.hosts.size());
  if (view.hosts.size() < view.hosts_total) hosts += " of " + FormatCount(view.hosts_total);
  hosts += view.hosts_total == 1 ? " host" : " hosts";
  return FormatRfc3339(view.from) + " + " + FormatSpan(view.to - view.from) + " · " + hosts +
         " · " + Direction(view) + " · " +
         (view.shading == ColumnShading::kPerColumn ? "per-column " : "global ") +
         ColoringName(view.coloring) + " shading · " + FormatCount(view.grid.total) + " " +
         CountNoun(view.kind, view.grid.total);
}

std::string ColumnsCaption(const ColumnsView& view, uint32_t label_every) {
  std::string caption =
      "hosts, sorted by " + std::string(ColumnsSortName(view.sort)) + ", " + Direction(view);
  if (label_every > 1) caption += "; every " + Ordinal(label_every) + " named";
  return caption;
}

std::string HostDescription(const ColumnsView& view, uint32_t column) {
  const HostColumn& h = view.hosts[column];
  auto q = [&view](double v) { return FormatQuantity(v, view.unit); };
  return h.host + "\n" + FormatCount(h.count) + " " + CountNoun(view.kind, h.count) +
         "\nmean " + q(h.mean) + " · p50 " + q(static_cast<double>(h.p50)) + " · p90 " +
         q(static_cast<double>(h.p90)) + " · p99 " + q(static_cast<double>(h.p99)) + " · max " +
         q(static_cast<double>(h.max)) + "\nCoV " + FormatSignificant(h.cov) + " · bimodality " +
         FormatSignificant(h.bimodality);
}

std::string ColumnRowRange(const ColumnsView& view, uint32_t row) {
  return FormatQuantity(view.grid.RowLow(row), view.unit) + " to " +
         FormatQuantity(view.grid.RowHigh(row), view.unit);
}

std::string ShadingLegend(const ColumnsView& view) {
  const bool rank = view.coloring == Coloring::kRank;
  if (view.shading == ColumnShading::kPerColumn) {
    return rank ? "per column, rank: each column shaded by the rank of its own cells' counts"
                : "per column, linear: shade = count / the column's fullest cell";
  }
  return rank ? "global rank: shade = rank of the count among " +
                    FormatCount(view.grid.nonzero_cells) + " non-empty cells"
              : "global linear: shade = count / " + FormatCount(view.grid.max_count) +
                    ", the fullest cell";
}

uint32_t LabelEvery(int column_px, int min_gap) {
  return static_cast<uint32_t>(std::max(1, (min_gap + column_px - 1) / std::max(1, column_px)));
}

std::string RenderColumnsSvg(const ColumnsView& view, const ColumnsSvgOptions& options) {
  const HeatmapView& grid = view.grid;
  const ColumnsLayout layout = LayoutColumns(view, options);
  const GridLayout& l = layout.grid;
  const int cell_w = l.cell_w, cell_h = l.cell_h, plot_w = l.plot_w, plot_h = l.plot_h;
  const int bottom = l.bottom();
  const uint32_t every = layout.label_every;
  const int legend_y = layout.legend_y;
  const int width = layout.width;
  const int height = layout.height;

  std::string out;
  out.reserve(4096 + size_t{grid.nonzero_cells} * 120 + size_t{grid.columns} * 300);
  out += SvgOpen(width, height);
  out += SvgHeading(kLeft, ColumnsTitle(view), ColumnsSubtitle(view), HeatmapNotDrawn(grid));

  // Plot frame, then one group per column: the host's statistics as the group's title, a
  // transparent full-height rect so hovering anywhere in the column shows them, and the cells.
  out += "<rect x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(kTop) + "\" width=\"" +
         std::to_string(plot_w) + "\" height=\"" + std::to_string(plot_h) +
         "\" fill=\"#ffffff\" stroke=\"#999999\" stroke-width=\"1\"/>\n";
  out += "<g shape-rendering=\"crispEdges\">\n";
  // A cell's hover text is its host, its row's range and its count: the ranges are formatted
  // once a row, not once a cell (~10,000 cells at 1,000 hosts).
  std::vector<std::string> row_ranges(grid.rows);
  for (uint32_t r = 0; r < grid.rows; ++r) row_ranges[r] = XmlEscape(ColumnRowRange(view, r));
  const std::string cell_w_text = std::to_string(cell_w), cell_h_text = std::to_string(cell_h);
  for (uint32_t c = 0; c < grid.columns; ++c) {
    const int x = kLeft + static_cast<int>(c) * cell_w;
    const std::string x_text = std::to_string(x);
    out += "<g><title>" + XmlEscape(HostDescription(view, c)) + "</title><rect x=\"" + x_text +
           "\" y=\"" + std::to_string(kTop) + "\" width=\"" + cell_w_text + "\" height=\"" +
           std::to_string(plot_h) + "\" fill=\"#ffffff\" fill-opacity=\"0\"/>\n";
    const std::string host = XmlEscape(view.hosts[c].host);
    for (uint32_t r = 0; r < grid.rows; ++r) {
      const size_t i = grid.Index(r, c);
      const uint64_t n = grid.counts[i];
      if (n == 0) continue;
      const int y = bottom - static_cast<int>(r + 1) * cell_h;
      out.append("<rect x=\"").append(x_text).append("\" y=\"").append(std::to_string(y));
      out.append("\" width=\"").append(cell_w_text).append("\" height=\"").append(cell_h_text);
      out.append("\" fill=\"").append(HexColor(ShadeColor(grid.levels[i]))).append("\"><title>");
      out.append(host).append("\n").append(row_ranges[r]).append("\n");
      out.append(XmlEscape(FormatCount(n) + " " + CountNoun(view.kind, n)));
      out.append("</title></rect>\n");
    }
    out += "</g>\n";
  }
  out += "</g>\n";

  // Value axis: round ticks in the metric's unit.
  out += "<g fill=\"#222222\" text-anchor=\"end\">\n";
  const double span = static_cast<double>(grid.ymax - grid.ymin);
  for (double v : ValueTicks(span, std::max(2, std::min(8, plot_h / 50)), view.unit)) {
    const double y = bottom - v / span * plot_h;
    out += "<line x1=\"" + std::to_string(kLeft - 5) + "\" x2=\"" + std::to_string(kLeft) +
           "\" y1=\"" + SvgNumber(y) + "\" y2=\"" + SvgNumber(y) + "\" stroke=\"#555555\"/>";
    out += "<text x=\"" + std::to_string(kLeft - 8) + "\" y=\"" + SvgNumber(y + 4) + "\">" +
           XmlEscape(FormatQuantity(static_cast<double>(grid.ymin) + v, view.unit)) + "</text>\n";
  }
  out += "</g>\n";

  // Host names, rotated to read upwards from the column's foot; every n-th when they do not fit.
  out += "<g fill=\"#222222\" font-size=\"11\" text-anchor=\"end\">\n";
  for (uint32_t c = 0; c < grid.columns; c += every) {
    const double x = kLeft + (c + 0.5) * cell_w;
    const double y = bottom + 6;
    out += "<line x1=\"" + SvgNumber(x) + "\" x2=\"" + SvgNumber(x) + "\" y1=\"" + std::to_string(bottom) +
           "\" y2=\"" + std::to_string(bottom + 3) + "\" stroke=\"#555555\"/>";
    out += "<text transform=\"translate(" + SvgNumber(x + 4) + "," + SvgNumber(y) +
           ") rotate(-90)\">" + XmlEscape(ColumnLabel(view.hosts[c].host)) + "</text>\n";
  }
  out += "</g>\n";
  const std::string caption = ColumnsCaption(view, every);
  out += "<text x=\"" + std::to_string(kLeft + plot_w) + "\" y=\"" +
         std::to_string(layout.caption_y) + "\" text-anchor=\"end\" fill=\"#444444\">" +
         XmlEscape(caption) + "</text>\n";

  // Legend: the shade ramp.
  out += "<text x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(legend_y + 11) +
         "\" fill=\"#444444\">fewer</text>\n";
  const int ramp_x = kLeft + 40;
  for (int level = 1; level < kShadeLevels; ++level) {
    out += "<rect x=\"" + std::to_string(ramp_x + (level - 1) * 8) + "\" y=\"" +
           std::to_string(legend_y) + "\" width=\"8\" height=\"14\" fill=\"" +
           HexColor(ShadeColor(level)) + "\"/>";
  }
  out += "\n<text x=\"" + std::to_string(ramp_x + (kShadeLevels - 1) * 8 + 6) + "\" y=\"" +
         std::to_string(legend_y + 11) + "\" fill=\"#444444\">more  (" +
         XmlEscape(ShadingLegend(view)) + ")</text>\n";
  if (!view.missing_shards.empty()) {
    std::string missing;
    for (const std::string& m : view.missing_shards) missing += (missing.empty() ? "" : "; ") + m;
    out += "<text x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(legend_y + 34) +
           "\" fill=\"#b00000\">partial: shards missing: " + XmlEscape(missing) + "</text>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace trailmap
