// SVG heat map: a pure function from an assembled HeatmapView to the bytes of an SVG document.
//
// Layout, top to bottom: a title (metric, time range, coloring, events, what is not drawn), the
// plot (time on x with UTC clock labels, value on y with labels in the metric's unit), and a
// legend (the shade ramp, or the group hues of a --by view). Every non-empty cell is one <rect>
// with a <title> child that a browser shows on hover: its time range, value range and count
// (and per-group counts in a grouped view). Empty cells are not drawn: the plot's white
// background shows through. The output depends only on the view, so it is golden-tested.
#pragma once

#include <string>

#include "query/heatmap.h"

namespace trailmap {

struct SvgOptions {
  // The plot aims at this many pixels wide and high; cells are whole pixels, at least 2 wide and
  // 3 high, so a view with many columns or rows comes out larger.
  int plot_width = 960;
  int plot_height = 450;
  bool side_panel = true;  // average events per second per row, left of the plot (seed 003)
};

std::string RenderHeatmapSvg(const HeatmapView& view, const SvgOptions& options = {});

}  // namespace trailmap
