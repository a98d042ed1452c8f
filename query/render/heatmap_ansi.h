// ANSI heat map: a pure function from a HeatmapView to text for a truecolor terminal.
//
// Two value rows share one line: each character is an upper half block (▀) whose foreground is
// the upper row's color and whose background is the lower row's, so 50 rows take 25 lines. The
// left margin holds round value labels in the metric's unit, each on the line holding it;
// below the plot a time axis carries UTC clock labels, then the shade ramp and what was not
// drawn. Cells use the palette of query/draw/palette.h, empty cells its white background, so the
// plot reads the same as the SVG on a dark or a light terminal.
#pragma once

#include <string>

#include "query/views/heatmap.h"

namespace trailmap {

struct AnsiOptions {
  // About one value label per this many lines: round values (1, 2 or 5 × 10^k steps), each on
  // the line whose range holds it. Default 5: 50 rows (25 lines) get about 5 labels.
  int label_every = 5;
};

std::string RenderHeatmapAnsi(const HeatmapView& view, const AnsiOptions& options = {});

}  // namespace trailmap
