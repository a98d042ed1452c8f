#include "query/draw/grid_layout.h"

#include <algorithm>

namespace trailmap {

GridLayout LayoutGrid(uint32_t rows, uint32_t columns, int plot_width, int plot_height,
                      const GridMargins& margins) {
  const int cols = static_cast<int>(std::max<uint32_t>(columns, 1));
  const int rws = static_cast<int>(std::max<uint32_t>(rows, 1));
  GridLayout l;
  l.cell_w = std::max(margins.min_cell_w, plot_width / cols);
  l.cell_h = std::max(margins.min_cell_h, plot_height / rws);
  l.plot_w = l.cell_w * cols;
  l.plot_h = l.cell_h * rws;
  l.left = margins.left;
  l.top = margins.top;
  l.width = std::max(l.left + l.plot_w + margins.right, margins.min_width);
  l.height = l.top + l.plot_h + margins.bottom;
  return l;
}

}  // namespace trailmap
