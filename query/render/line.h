// Line and area charts of a LineView (query/views/line.h), as SVG, PNG, JSON and ANSI sparklines.
// Pure functions from the view to bytes.
//
// Layout (SVG and PNG alike): the heading (metric, statistic, decomposition, time range), the
// plot with the value axis on the left (round ticks in the metric's unit: "25%", "1.5MiB/s") and
// UTC clock labels below, and the legend on the right — one swatch per line in the order of the
// lines (largest mean first; "other" last, in grey), each with its mean. A column without data
// breaks its line. --area fills from each line down to zero (translucent in SVG, a paler tint in
// PNG, which has no alpha); --stacked stacks the lines, the first at the bottom. The value axis
// starts at 0 unless a value is negative: then it reaches down to a round tick below the lowest
// value, and a zero line is drawn across the plot.
//
// ANSI: one row per line — its name, a sparkline (▁▂▃▄▅▆▇█, a space for no data) on one scale for
// every row, so rows compare, and its last, mean and max values. With a negative value anywhere,
// each line takes two rows split by the zero line, on one scale (the larger of the highest value
// and the lowest's magnitude): above it the positive values' blocks grow up; below it ▔ marks zero
// under a value that is not negative, and a negative value hangs down from the zero line (eighths
// drawn as a lower block in reverse video, ESC[7m ... ESC[27m); a min column is added.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "query/draw/raster.h"
#include "query/views/line.h"

namespace trailmap {

struct LineStyle {
  int plot_width = 800;
  int plot_height = 320;
};

// Where the plot is, in pixels.
struct LineLayout {
  int left = 0, top = 0, plot_w = 0, plot_h = 0, width = 0, height = 0;
  double top_value = 1;     // the value at the top of the plot (a round number)
  double bottom_value = 0;  // at the bottom: 0, or a round number below the lowest value
  double tick_step = 0;     // with bottom_value < 0: the ticks' step (0 itself is a tick)
  // The pixel x of column c's middle, and the pixel y of a value.
  double X(const LineView& view, double column) const;
  double Y(double value) const;
  // The value axis' ticks, bottom to top.
  std::vector<double> Ticks(std::string_view unit) const;
};

LineLayout LayoutLine(const LineView& view, const LineStyle& style = {});
// The color of series i of the view: the group hues (query/draw/palette.h) without their grey,
// which is "other"'s.
Rgb LineColor(const LineView& view, size_t i);

std::string RenderLineSvg(const LineView& view, const LineStyle& style = {});
Canvas DrawLine(const LineView& view, const LineStyle& style = {});
Result<std::string> RenderLinePng(const LineView& view, const LineStyle& style = {});
std::string RenderLineJson(const LineView& view);
// `width`: sparkline characters (the columns are resampled to it by averaging).
std::string RenderLineAnsi(const LineView& view, int width = 60);

}  // namespace trailmap
