// GridLayout: where the plot of a grid view (heat map, columns) goes in an image, computed once
// for every image format. Cells are whole pixels: the plot aims at plot_width × plot_height and
// each cell is at least min_cell_w × min_cell_h (SVG keeps cells large enough to hover, PNG does
// not need to), so a view with many rows or columns comes out larger than asked.
//
// Cell (row r, column c) is the rectangle x = CellX(c), y = CellY(r), cell_w × cell_h: row 0 at
// the bottom. Pure function; value types.
#pragma once

#include <cstdint>

namespace trailmap {

// A format's margins around the plot, in pixels.
struct GridMargins {
  int left = 0;  // value labels (and a side panel) left of the plot
  int top = 0;   // title lines above it
  int right = 0;
  int bottom = 0;  // below it: time or host labels, legend
  int min_cell_w = 1;
  int min_cell_h = 1;
  int min_width = 0;  // the image is at least this wide (room for the title)
};

struct GridLayout {
  int left = 0, top = 0, cell_w = 1, cell_h = 1, plot_w = 0, plot_h = 0, width = 0, height = 0;
  int bottom() const { return top + plot_h; }
  int CellX(uint32_t column) const { return left + static_cast<int>(column) * cell_w; }
  int CellY(uint32_t row) const { return bottom() - static_cast<int>(row + 1) * cell_h; }
};

// `rows` and `columns` of 0 count as 1. height = top + plot_h + margins.bottom.
GridLayout LayoutGrid(uint32_t rows, uint32_t columns, int plot_width, int plot_height,
                      const GridMargins& margins);

}  // namespace trailmap
