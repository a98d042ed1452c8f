// Renderers of the sorted server columns (query/views/columns.h): pure functions from an assembled
// ColumnsView to bytes, and the words they share.
//
// SVG: a title, the plot (hosts on x in sort order, value on y in the metric's unit), the host
// names rotated under the columns (every n-th when they do not fit: a name needs ~12 px), and the
// shade ramp. Columns are max(1, plot_width / hosts) pixels wide, so 1,000 hosts make a plot
// ~1,000 px wide. Each column is a <g> whose <title> gives the host's statistics (shown on hover
// anywhere in the column) and each non-empty cell a <rect> whose <title> gives the host, its
// value range and count.
//
// ANSI: one terminal column per host, two value rows per line as upper half blocks (as the heat
// map); host names under the columns where they fit. A terminal holds few hosts: the command
// limits the view to what fits and the subtitle says how many are shown.
//
// PNG: the SVG's layout drawn on a raster canvas, host names turned to read upwards.
//
// JSON: documented in docs/json.md ("columns").
#pragma once

#include "query/draw/grid_layout.h"

#include <string>

#include "query/views/columns.h"

namespace trailmap {

// "disk.latency by host, sorted by p99".
std::string ColumnsTitle(const ColumnsView& view);
// "2026-11-22T16:00:00Z + 10m · 60 hosts · largest first · per-column rank shading · 1,234 events";
// "60 of 1,000 hosts" when --limit cut some.
std::string ColumnsSubtitle(const ColumnsView& view);
// Under the host names: "hosts, sorted by cov, largest first; every 12th named".
std::string ColumnsCaption(const ColumnsView& view, uint32_t label_every);
// A host's hover text: name, events, mean and percentiles, CoV, bimodality.
std::string HostDescription(const ColumnsView& view, uint32_t column);
// A row's value range, the middle line of its cells' hover text ("host\nrange\ncount events"):
// "100ms to 200ms".
std::string ColumnRowRange(const ColumnsView& view, uint32_t row);
// What the shades mean: "per column, rank: each column shaded by the rank of its cells' counts".
std::string ShadingLegend(const ColumnsView& view);
// How many columns apart host labels go so that labels `min_gap` px apart fit in columns
// `column_px` wide: 1 = every host.
uint32_t LabelEvery(int column_px, int min_gap);

struct ColumnsSvgOptions {
  int plot_width = 960;   // columns are max(1, plot_width / hosts) px wide
  int plot_height = 450;  // rows are max(3, plot_height / rows) px high
};

// Where everything of a columns image goes, one layout for SVG and PNG (both draw DejaVu Sans at
// the same sizes, query/draw/font.h), so a cell is the same rectangle in both: the plot's cells
// (query/draw/grid_layout.h, one per host and row), the band of host names turned under them
// (every `label_every`-th host), the caption under the band and the shade ramp.
inline constexpr GridMargins kColumnsMargins{84, 76, 28, 0, 1, 3, 720};
inline constexpr int kColumnsLabelGap = 12;       // px between host names (11 px text, turned)
inline constexpr size_t kColumnsLabelChars = 24;  // longer names end in "…"
struct ColumnsLayout {
  GridLayout grid;
  uint32_t label_every = 1;
  int labels_h = 0;   // the band of names below the plot
  int caption_y = 0;  // baseline of "hosts, sorted by ..."
  int legend_y = 0;   // top of the shade ramp
  int width = 0, height = 0;
};
ColumnsLayout LayoutColumns(const ColumnsView& view, const ColumnsSvgOptions& options = {});
// A host's name as it is drawn under its column: at most kColumnsLabelChars characters.
std::string ColumnLabel(const std::string& host);
std::string RenderColumnsSvg(const ColumnsView& view, const ColumnsSvgOptions& options = {});

// The same layout as a PNG (query/draw/raster.h; text in DejaVu Sans, query/draw/font.h). Fails if
// the font is missing (the error names its package) or the PNG cannot be encoded.
Result<std::string> RenderColumnsPng(const ColumnsView& view,
                                     const ColumnsSvgOptions& options = {});

std::string RenderColumnsAnsi(const ColumnsView& view);

// Pretty-printed (a key a line, a matrix row a line) when `pretty`, else one line.
std::string RenderColumnsJson(const ColumnsView& view, bool pretty = true);

}  // namespace trailmap
