// The heat map's layout, one for SVG and PNG: the plot's cells (query/draw/grid_layout.h) inside
// margins that hold, left to right, the side panel (seed 003: average events per second per row)
// and the value labels, and top to bottom the title lines, the plot, the time labels and the
// legend. Both formats draw their text in DejaVu Sans at the same sizes (query/draw/font.h), so
// one set of margins serves both, and a cell is the same rectangle in the SVG and in the PNG
// (render/heatmap_png_test.cc checks it).
#pragma once

#include <functional>

#include "query/draw/grid_layout.h"
#include "query/views/heatmap.h"

namespace trailmap {

// What a caller asks of a heat-map image (SVG or PNG).
struct HeatmapImageOptions {
  // The plot aims at this many pixels wide and high (cells are whole pixels, see GridLayout).
  int plot_width = 960;
  int plot_height = 450;
  bool side_panel = true;  // average events per second per row, left of the plot (seed 003)
  // Set: asked between rows of cells; once true the PNG stops drawing and RenderHeatmapPng fails
  // (a server's deadline: the renderer reads no clock itself).
  std::function<bool()> stop;
};

struct HeatmapMargins {
  int panel;   // the side panel, with its gap
  int labels;  // value labels
  int right, top, bottom;
  int min_cell_w, min_cell_h;  // cells large enough to hover in the SVG (and alike in the PNG)
};
inline constexpr HeatmapMargins kHeatmapMargins{84, 84, 28, 76, 116, 2, 3};

// The image is at least 640 px wide, room for the title. Cell (row r, column c) is
// GridLayout::CellX(c), CellY(r), cell_w × cell_h in both formats.
GridLayout LayoutHeatmap(const HeatmapView& view, const HeatmapImageOptions& options = {});

}  // namespace trailmap
