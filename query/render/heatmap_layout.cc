#include "query/render/heatmap_layout.h"

namespace trailmap {

GridLayout LayoutHeatmap(const HeatmapView& view, const HeatmapImageOptions& options) {
  constexpr HeatmapMargins margins = kHeatmapMargins;
  GridMargins grid;
  grid.left = (options.side_panel ? margins.panel : 0) + margins.labels;
  grid.top = margins.top;
  grid.right = margins.right;
  grid.bottom = margins.bottom;
  grid.min_cell_w = margins.min_cell_w;
  grid.min_cell_h = margins.min_cell_h;
  grid.min_width = 640;
  return LayoutGrid(view.rows, view.columns, options.plot_width, options.plot_height, grid);
}

}  // namespace trailmap
