#include "query/render/columns.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "query/draw/palette.h"
#include "query/draw/raster.h"
#include "query/render/shades.h"
#include "query/testing/golden.h"
#include "query/testing/svg_cells.h"
#include "query/testing/views.h"

namespace trailmap {
namespace {

// Six hosts over ten minutes from 2026-11-22T16:00:00Z, 8 rows up to 20 ms: a fast band and a
// disk band in different proportions (no bucket straddles a row boundary), one slow host (db-3) and one bimodal (web-2).
ColumnsView Small(ColumnsSort sort = ColumnsSort::kP99) {
  MergedGrid grid = testing_views::HostGrid({"db-1", "db-2", "db-3", "web-1", "web-2", "web<&>"});
  for (size_t g = 0; g < grid.groups.size(); ++g) {
    Histogram& h = grid.cells[g][0];
    h.Record(1'000'000 + g * 200'000, 400 + g * 50);
    h.Record(6'000'000, 60 + g * 10);
  }
  grid.cells[2][0].Record(11'000'000, 80);  // db-3: slow
  grid.cells[2][0].Record(17'000'000, 4);
  grid.cells[4][0].Record(8'000'000, 450);  // web-2: two modes
  ColumnsOptions options;
  options.rows = 8;
  options.sort = sort;
  return *AssembleColumns(grid, options);
}

using testing_golden::ExpectGolden;

TEST(RenderColumnsSvg, Golden) {
  const ColumnsView view = Small();
  ASSERT_EQ(view.hosts[0].host, "db-3");
  const std::string svg = RenderColumnsSvg(view);
  ExpectGolden("columns_small.svg", svg);
  EXPECT_NE(svg.find("disk.latency by host, sorted by p99"), std::string::npos);
  EXPECT_NE(svg.find("<title>db-3\n15ms to 17.5ms\n4 events</title>"), std::string::npos);
  EXPECT_NE(svg.find("<g><title>db-3\n"), std::string::npos);  // the host's statistics
  EXPECT_NE(svg.find(">web&lt;&amp;&gt;</text>"), std::string::npos);
  EXPECT_NE(svg.find(">20ms</text>"), std::string::npos);
}

TEST(RenderColumnsSvg, ThousandHostsTakeAPixelEachAndLabelsThin) {
  EXPECT_EQ(LabelEvery(1, 12), 12u);
  EXPECT_EQ(LabelEvery(12, 12), 1u);
  EXPECT_EQ(LabelEvery(5, 12), 3u);
}

TEST(RenderColumnsPng, CellsHaveTheirShadeAndTheFirstHostsDarkestCellIsTheDarkestLevel) {
  const ColumnsView view = Small();
  Result<std::string> png = RenderColumnsPng(view);
  ASSERT_TRUE(png.ok()) << png.status().message();
  Result<Canvas> canvas = DecodePng(*png);
  ASSERT_TRUE(canvas.ok()) << canvas.status().message();
  EXPECT_GE(canvas->width(), 960);
  // 6 columns of 160 px from x = 70, 8 rows of 56 px above y = 64 + 448. db-3 (column 0) has its
  // fullest cell in row 0 (1 ms): per-column rank puts it at the darkest level.
  const int x = 70 + 80, y = 64 + 448 - 28;
  EXPECT_EQ(view.grid.levels[view.grid.Index(0, 0)], kShadeLevels - 1);
  EXPECT_EQ(canvas->At(x, y), ShadeColor(kShadeLevels - 1));
  EXPECT_EQ(canvas->At(x, 64 + 28), Rgb{});  // row 7 of db-3 is empty: background
}

// One layout (LayoutColumns): the PNG is the SVG's size and every cell the same rectangle, for a
// few hosts (wide columns) and for 1,000 (a pixel each).
TEST(RenderColumns, SvgAndPngCellsAreTheSameRectangles) {
  for (ColumnsView view : {Small(), Small(ColumnsSort::kName)}) {
    Result<std::string> png = RenderColumnsPng(view);
    ASSERT_TRUE(png.ok()) << png.status().message();
    Result<Canvas> canvas = DecodePng(*png);
    ASSERT_TRUE(canvas.ok());
    testing_svg::ExpectSameCells(RenderColumnsSvg(view), *canvas, view.grid.nonzero_cells);
  }
  std::vector<std::string> hosts;
  for (int i = 0; i < 1000; ++i) hosts.push_back("host-" + std::to_string(i));
  MergedGrid grid = testing_views::HostGrid(hosts);
  for (size_t g = 0; g < grid.groups.size(); ++g) {
    grid.cells[g][0].Record(1'000'000 + g * 7'000, 100 + g % 13);
    grid.cells[g][0].Record(4'000'000 + (g % 50) * 100'000, 1 + g % 5);
  }
  ColumnsOptions options;
  options.rows = 40;
  const ColumnsView big = *AssembleColumns(grid, options);
  Result<std::string> png = RenderColumnsPng(big);
  ASSERT_TRUE(png.ok());
  Result<Canvas> canvas = DecodePng(*png);
  ASSERT_TRUE(canvas.ok());
  testing_svg::ExpectSameCells(RenderColumnsSvg(big), *canvas, big.grid.nonzero_cells);
}

TEST(RenderColumnsJson, Shape) {
  const ColumnsView view = Small();
  const auto j = nlohmann::json::parse(RenderColumnsJson(view));
  EXPECT_EQ(j["view"], "columns");
  EXPECT_EQ(j["sort"], "p99");
  EXPECT_EQ(j["shading"], "column");
  EXPECT_EQ(j["coloring"], "rank");
  EXPECT_EQ(j["columns"], 6);
  EXPECT_EQ(j["rows"], 8);
  EXPECT_EQ(j["ymax"], 20'000'000);
  ASSERT_EQ(j["hosts"].size(), 6u);
  EXPECT_EQ(j["hosts"][0]["host"], "db-3");
  for (const char* key : {"count", "mean", "min", "p50", "p90", "p99", "max", "stddev", "cov",
                          "skewness", "kurtosis", "bimodality", "max_cell"}) {
    EXPECT_TRUE(j["hosts"][0].contains(key)) << key;
  }
  ASSERT_EQ(j["counts"].size(), 8u);
  ASSERT_EQ(j["counts"][0].size(), 6u);
  uint64_t sum = 0;
  for (const auto& row : j["counts"]) {
    for (const auto& n : row) sum += n.get<uint64_t>();
  }
  EXPECT_EQ(sum + j["above"].get<uint64_t>(), j["total"].get<uint64_t>());
  EXPECT_EQ(j["palette"].size(), 32u);
  EXPECT_TRUE(j["missing_shards"].empty());
  EXPECT_EQ(nlohmann::json::parse(RenderColumnsJson(view, false)), j);
}

TEST(RenderColumnsAnsi, OneCharacterPerHostAndNames) {
  const std::string text = RenderColumnsAnsi(Small());
  EXPECT_NE(text.find("disk.latency by host, sorted by p99"), std::string::npos);
  EXPECT_NE(text.find("db-3"), std::string::npos);
  EXPECT_NE(text.find("per column, rank"), std::string::npos);
  size_t blocks = 0;
  for (size_t at = text.find("▀"); at != std::string::npos; at = text.find("▀", at + 1)) ++blocks;
  EXPECT_EQ(blocks, 6u * 4);  // 6 hosts x 4 lines (8 rows)
}

}  // namespace
}  // namespace trailmap
