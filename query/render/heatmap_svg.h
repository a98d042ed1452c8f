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

#include "query/render/heatmap_layout.h"
#include "query/views/heatmap.h"

namespace trailmap {

using SvgOptions = HeatmapImageOptions;  // query/render/heatmap_layout.h

std::string RenderHeatmapSvg(const HeatmapView& view, const SvgOptions& options = {});

}  // namespace trailmap
