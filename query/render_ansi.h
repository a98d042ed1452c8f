// ANSI heat map: a pure function from a HeatmapView to text for a truecolor terminal.
//
// Two value rows share one line: each character is an upper half block (▀) whose foreground is
// the upper row's color and whose background is the lower row's, so 50 rows take 25 lines. The
// left margin holds value labels in the metric's unit (the value at the top edge of the line);
// below the plot a time axis carries UTC clock labels, then the shade ramp and what was not
// drawn. Cells use the palette of query/palette.h, empty cells its white background, so the plot
// reads the same as the SVG on a dark or a light terminal.
#pragma once

#include <string>

#include "query/heatmap.h"

namespace trailmap {

struct AnsiOptions {
  // Label every n-th line of the plot (and the top one). Default 5: 50 rows → labels every 10
  // rows, a fifth of the range.
  int label_every = 5;
};

std::string RenderHeatmapAnsi(const HeatmapView& view, const AnsiOptions& options = {});

}  // namespace trailmap
