// LayoutColumns (query/render/columns.h): one layout of the columns image for SVG and PNG.
#include <algorithm>

#include "query/render/columns.h"

namespace trailmap {

std::string ColumnLabel(const std::string& host) {
  return host.size() <= kColumnsLabelChars ? host : host.substr(0, kColumnsLabelChars - 1) + "…";
}

ColumnsLayout LayoutColumns(const ColumnsView& view, const ColumnsSvgOptions& options) {
  const HeatmapView& grid = view.grid;
  ColumnsLayout l;
  l.grid =
      LayoutGrid(grid.rows, grid.columns, options.plot_width, options.plot_height, kColumnsMargins);
  l.label_every = LabelEvery(l.grid.cell_w, kColumnsLabelGap);
  size_t longest = 0;
  for (uint32_t c = 0; c < grid.columns && c < view.hosts.size(); c += l.label_every) {
    longest = std::max(longest, std::min(view.hosts[c].host.size(), kColumnsLabelChars));
  }
  l.labels_h = 14 + static_cast<int>(longest) * 7;  // turned names, ~7 px a character
  l.caption_y = l.grid.bottom() + l.labels_h + 14;
  l.legend_y = l.grid.bottom() + l.labels_h + 30;
  l.width = l.grid.width;
  l.height = l.legend_y + 44;
  return l;
}

}  // namespace trailmap
