#include "query/render/heatmap_svg.h"

#include <gtest/gtest.h>

#include "query/testing/golden.h"
#include "query/testing/views.h"

namespace trailmap {
namespace {

size_t CountOf(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

using testing_golden::ExpectGolden;

TEST(RenderSvg, Golden) {
  const HeatmapView view = testing_views::Small();
  const std::string svg = RenderHeatmapSvg(view);
  ExpectGolden("heatmap_small.svg", svg);
  // One rect per non-empty cell, inside the cells group.
  const size_t cells_at = svg.find("<g shape-rendering=\"crispEdges\">");
  const size_t cells_end = svg.find("</g>", cells_at);
  ASSERT_NE(cells_at, std::string::npos);
  EXPECT_EQ(CountOf(svg.substr(cells_at, cells_end - cells_at), "<rect "), view.nonzero_cells);
  EXPECT_EQ(view.nonzero_cells, 12u * 2 + 3 + 1);
  // The lone outlier's hover text: time range, value range, count.
  EXPECT_NE(svg.find("<title>16:00:09–16:00:10 UTC\n15ms to 17.5ms\n1 event</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("disk.latency heat map"), std::string::npos);
  EXPECT_NE(svg.find(">20ms</text>"), std::string::npos);      // y axis top
  EXPECT_NE(svg.find(">16:00:04</text>"), std::string::npos);  // x axis
}

TEST(RenderSvg, GroupedViewHasALegendOfGroups) {
  MergedGrid grid;
  grid.metric = "m";
  grid.from = 0;
  grid.to = 2;
  grid.columns = 2;
  grid.group_by = "op";
  grid.groups = {"read", "write<&>"};
  grid.cells.assign(2, std::vector<Histogram>(2));
  grid.cells[0][0].Record(10, 5);
  grid.cells[1][0].Record(10, 1);
  grid.cells[1][1].Record(40, 2);
  HeatmapView view = *AssembleHeatmap(grid, {});
  const std::string svg = RenderHeatmapSvg(view);
  EXPECT_NE(svg.find(">read</text>"), std::string::npos);
  EXPECT_NE(svg.find("write&lt;&amp;&gt;"), std::string::npos);
  EXPECT_NE(svg.find("\nread: 5\nwrite&lt;&amp;&gt;: 1</title>"), std::string::npos);
}

}  // namespace
}  // namespace trailmap
