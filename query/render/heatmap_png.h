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
// The layout is the SVG's (query/render/heatmap_layout.h): the same image size and the same
// rectangle for every cell, text at the same places in the same font.
#pragma once

#include <string>

#include "core/status.h"
#include "query/draw/raster.h"
#include "query/render/heatmap_layout.h"
#include "query/views/heatmap.h"

namespace trailmap {

using PngOptions = HeatmapImageOptions;  // query/render/heatmap_layout.h

// The drawn canvas (tests check its pixels) and the encoded file; ResourceExhausted when
// options.stop said stop.
Canvas DrawHeatmap(const HeatmapView& view, const PngOptions& options = {});
Result<std::string> RenderHeatmapPng(const HeatmapView& view, const PngOptions& options = {});

}  // namespace trailmap
