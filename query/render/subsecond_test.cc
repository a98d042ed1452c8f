#include "query/render/subsecond.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "query/draw/raster.h"

namespace trailmap {
namespace {

TEST(Subsecond, FlameScopeColorsAndRenderers) {
  EXPECT_EQ(SubsecondColor(0, 10), (Rgb{255, 255, 255}));
  EXPECT_EQ(SubsecondColor(5, 10), (Rgb{0xFF, 0x50, 0x32}));
  EXPECT_EQ(SubsecondColor(10, 10), (Rgb{0xE5, 0x09, 0x14}));
  EXPECT_EQ(SubsecondColor(1, 1), (Rgb{0xE5, 0x09, 0x14}));

  SubsecondView view;
  view.start_second = 100;
  view.rows = 5;
  view.counts = {{4, 0, 0, 0, 0}, {0, 0, 0, 0, 2}};
  view.max_count = 4;
  view.samples = 6;
  EXPECT_EQ(RenderSubsecondText(view),
            "   800 | +|\n"
            "   600 |  |\n"
            "   400 |  |\n"
            "   200 |  |\n"
            "     0 |@ |\n"
            "       ----\n"
            "ms / seconds from 100: 6 samples, largest cell 4\n");
  const auto j = nlohmann::json::parse(RenderSubsecondJson(view));
  EXPECT_EQ(j["view"], "subsecond");
  EXPECT_EQ(j["counts"], nlohmann::json::parse("[[4,0,0,0,0],[0,0,0,0,2]]"));
  EXPECT_EQ(j["row_ms"], 200.0);
  const std::string svg = RenderSubsecondSvg(view);
  EXPECT_NE(svg.find("fill=\"#e50914\"><title>second 0, 0-200 ms: 4 samples</title>"),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("fill=\"#ff5032\"><title>second 1, 800-1000 ms: 2 samples</title>"),
            std::string::npos);
  // PNG: column 0's bottom cell is the darkest red, column 1's top cell the middle red.
  Result<std::string> png = RenderSubsecondPng(view);
  ASSERT_TRUE(png.ok());
  Result<Canvas> canvas = DecodePng(*png);
  ASSERT_TRUE(canvas.ok());
  // The layout: plot at x 64, y 72; 2 columns are 12 px wide; 5 rows are 80 px high.
  EXPECT_EQ(canvas->At(64 + 6, 72 + 4 * 80 + 40), (Rgb{0xE5, 0x09, 0x14}));
  EXPECT_EQ(canvas->At(64 + 12 + 6, 72 + 40), (Rgb{0xFF, 0x50, 0x32}));
  EXPECT_EQ(canvas->At(64 + 6, 72 + 40), (Rgb{255, 255, 255}));
}

}  // namespace
}  // namespace trailmap
