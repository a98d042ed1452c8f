// PNG heat map: a pure function from an assembled HeatmapView to the bytes of a PNG file, drawn
// on a query/draw/raster.h canvas.
//
// Layout, left to right: the side panel (seed 003: the average events per second of each row
// over the time range, and of the whole visible range below it), the value labels, the plot.
// Top to bottom: the title (metric, range, coloring, events, what is not drawn), the plot (time
// on x with UTC clock labels), the time caption and the legend (the shade ramp of the view's
// palette, or the group hues of a --by view). Every non-empty cell is one filled rectangle; empty
// cells leave the white background. Percentile overlays (HeatmapView::overlay) are 2-px lines
// through the columns' percentile values.
//
// Cells are whole pixels as in the SVG (query/render/heatmap_svg.h): the plot aims at plot_width ×
// plot_height, each cell at least 1 × 1 (the PNG has no hover text to keep cells clickable),
// so the image is exactly the requested plot size when rows and columns divide it.
#pragma once

#include <string>

#include "core/status.h"
#include "query/render/heatmap_layout.h"
#include "query/views/heatmap.h"
#include "query/draw/raster.h"

namespace trailmap {

using PngOptions = HeatmapImageOptions;  // query/render/heatmap_layout.h

// Where the plot is: cell (row r, column c) is the rectangle x = left + c * cell_w,
// y = top + (rows - 1 - r) * cell_h, cell_w × cell_h.
using PngLayout = GridLayout;
PngLayout LayoutHeatmapPng(const HeatmapView& view, const PngOptions& options = {});

// The drawn canvas (tests check its pixels) and the encoded file.
Canvas DrawHeatmap(const HeatmapView& view, const PngOptions& options = {});
Result<std::string> RenderHeatmapPng(const HeatmapView& view, const PngOptions& options = {});

}  // namespace trailmap
