#include "query/render/heatmap_png.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "query/draw/palette.h"
#include "query/render/heatmap_svg.h"
#include "query/render/shades.h"
#include "query/testing/svg_cells.h"
#include "query/testing/views.h"

namespace trailmap {
namespace {

// 20 columns, 10 rows up to 100: a band of large, distinct counts in row 1 and a lone outlier of
// count 1 in row 9, column 7.
HeatmapView BandAndOutlier(Coloring coloring, bool per_column = false) {
  MergedGrid grid;
  grid.metric = "disk.latency";
  grid.from = 1'795'363'200;
  grid.columns = 20;
  grid.to = grid.from + 20;
  grid.groups = {""};
  grid.cells.assign(1, std::vector<Histogram>(20));
  for (uint32_t c = 0; c < 20; ++c) grid.cells[0][c].Record(10, 1000 + c);
  for (uint32_t c = 0; c < 20; ++c) grid.cells[0][c].Record(50, 3 + c % 4);
  grid.cells[0][7].Record(90, 1);
  HeatmapOptions options;
  options.rows = 10;
  options.ymax = 100;
  options.coloring = coloring;
  options.per_column = per_column;
  return *AssembleHeatmap(grid, options);
}

// Encodes, decodes (so the test reads what a viewer reads) and returns the decoded image; when
// TRAILMAP_KEEP_PNG is set, also writes it there to look at.
Canvas RoundTrip(const HeatmapView& view, const std::string& name) {
  Result<std::string> png = RenderHeatmapPng(view);
  EXPECT_TRUE(png.ok()) << png.status().message();
  if (const char* dir = std::getenv("TRAILMAP_KEEP_PNG")) {
    std::ofstream(std::string(dir) + "/" + name, std::ios::binary) << *png;
  }
  Result<Canvas> canvas = DecodePng(*png);
  EXPECT_TRUE(canvas.ok()) << canvas.status().message();
  return *canvas;
}

Rgb CellPixel(const Canvas& canvas, const HeatmapView& view, uint32_t row, uint32_t column) {
  const GridLayout l = LayoutHeatmap(view);
  return canvas.At(l.left + static_cast<int>(column) * l.cell_w + l.cell_w / 2,
                   l.top + static_cast<int>(view.rows - 1 - row) * l.cell_h + l.cell_h / 2);
}

TEST(RenderPng, RankKeepsALoneOutlierVisible) {
  const HeatmapView view = BandAndOutlier(Coloring::kRank);
  const Canvas canvas = RoundTrip(view, "rank_outlier.png");
  const GridLayout l = LayoutHeatmap(view);
  EXPECT_EQ(canvas.width(), l.width);
  const Rgb outlier = CellPixel(canvas, view, 9, 7);
  EXPECT_NE(outlier, Rgb{});  // not the background
  EXPECT_EQ(outlier, PaletteColor(Palette::kHeat, view.levels[view.Index(9, 7)]));
  EXPECT_EQ(CellPixel(canvas, view, 4, 7), Rgb{});  // an empty cell is the background
}

TEST(RenderPng, LinearMayGiveTheOutlierTheFaintestShade) {
  const HeatmapView view = BandAndOutlier(Coloring::kLinear);
  const Canvas canvas = RoundTrip(view, "linear_outlier.png");
  EXPECT_EQ(CellPixel(canvas, view, 9, 7), PaletteColor(Palette::kHeat, 1));
  EXPECT_EQ(CellPixel(canvas, view, 1, 19), PaletteColor(Palette::kHeat, kShadeLevels - 1));
}

TEST(RenderPng, PerColumnDarkestCellIsThePalettesDarkest) {
  for (Coloring coloring : {Coloring::kRank, Coloring::kLinear}) {
    const HeatmapView view = BandAndOutlier(coloring, /*per_column=*/true);
    const Canvas canvas = RoundTrip(view, "per_column.png");
    for (uint32_t c = 0; c < view.columns; ++c) {
      EXPECT_EQ(CellPixel(canvas, view, 1, c), PaletteColor(Palette::kHeat, kShadeLevels - 1))
          << "column " << c;
    }
  }
}

// One layout (LayoutHeatmap): the PNG is the SVG's size and every cell the same rectangle, with
// and without the side panel, and for a plot whose size the columns do not divide.
TEST(RenderPng, SvgAndPngCellsAreTheSameRectangles) {
  const HeatmapView view = BandAndOutlier(Coloring::kRank);
  for (const HeatmapImageOptions& options :
       {HeatmapImageOptions{}, HeatmapImageOptions{.side_panel = false},
        HeatmapImageOptions{.plot_width = 333, .plot_height = 97}}) {
    Result<std::string> png = RenderHeatmapPng(view, options);
    ASSERT_TRUE(png.ok()) << png.status().message();
    Result<Canvas> canvas = DecodePng(*png);
    ASSERT_TRUE(canvas.ok());
    testing_svg::ExpectSameCells(RenderHeatmapSvg(view, options), *canvas, view.nonzero_cells);
  }
}

TEST(RenderPng, DrawsTextAxesAndPanel) {
  HeatmapView view = testing_views::Small();
  const Canvas canvas = RoundTrip(view, "small.png");
  const GridLayout l = LayoutHeatmap(view);
  // Some ink in the title band, the value-label column and the side panel.
  auto ink = [&](int x0, int y0, int x1, int y1) {
    int n = 0;
    for (int y = y0; y < y1; ++y) {
      for (int x = x0; x < x1; ++x) {
        const Rgb p = canvas.At(x, y);
        n += p.r < 120 && p.g < 120 && p.b < 120;
      }
    }
    return n;
  };
  EXPECT_GT(ink(l.left, 0, l.left + 300, 30), 50);                 // title
  EXPECT_GT(ink(l.left - 64, l.top, l.left - 6, l.top + l.plot_h), 20);  // value labels
  EXPECT_GT(ink(0, l.top, 70, l.top + l.plot_h), 20);                    // side panel rates
}

}  // namespace
}  // namespace trailmap
