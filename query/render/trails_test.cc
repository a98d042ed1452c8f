#include "query/render/trails.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "query/draw/raster.h"
#include "query/testing/golden.h"

namespace trailmap {
namespace {

// Three small hosts, deterministic: a fast one, a bimodal one with an outlier, a slow one.
TrailsView SmallView() {
  MergedGrid grid;
  grid.metric = "disk.latency";
  grid.from = 1'795'363'200;
  grid.to = grid.from + 600;
  grid.step = 600;
  grid.columns = 1;
  grid.group_by = "host";
  grid.groups = {"db-1", "db-2", "db-3"};
  grid.cells.assign(3, std::vector<Histogram>(1));
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> cache(std::log(500e3), 0.3), disk(std::log(4e6), 0.3),
      slow(std::log(9e6), 0.25);
  for (int i = 0; i < 4000; ++i) {
    grid.cells[0][0].Record(static_cast<uint64_t>(disk(rng)));
    grid.cells[1][0].Record(static_cast<uint64_t>(i % 3 ? cache(rng) : disk(rng)));
    grid.cells[2][0].Record(static_cast<uint64_t>(slow(rng)));
  }
  grid.cells[1][0].Record(18'500'000);  // the outlier: a rug tick
  TrailOptions o;
  o.points = 128;
  o.hi = 20'000'000;
  return AssembleTrails(grid, o);
}

using testing_golden::ExpectGolden;

TEST(RenderTrails, SvgGolden) {
  const TrailsView view = SmallView();
  TrailsStyle style;
  style.plot_width = 512;
  const std::string svg = RenderTrailsSvg(view, style);
  ExpectGolden("trails_small.svg", svg);
  EXPECT_NE(svg.find("disk.latency frequency trails by host"), std::string::npos);
  EXPECT_NE(svg.find(">db-2</text>"), std::string::npos);
  // The outlier's tick: 18.5 ms is point 118 of 128.
  EXPECT_NE(svg.find("v-"), std::string::npos);
}

TEST(RenderTrails, StylesChangeTheColors) {
  const TrailsView view = SmallView();
  TrailsStyle style;
  style.invert = true;
  style.fill = true;
  style.border = true;
  const std::string svg = RenderTrailsSvg(view, style);
  EXPECT_NE(svg.find("fill=\"#000000\"/>"), std::string::npos);  // black background
  EXPECT_NE(svg.find("fill=\"#d2d2d2\""), std::string::npos);     // light fill
  EXPECT_NE(svg.find("stroke=\"#000000\""), std::string::npos);   // black border
}

TEST(RenderTrails, PngDecodesWithTheRightSize) {
  const TrailsView view = SmallView();
  Result<std::string> png = RenderTrailsPng(view);
  ASSERT_TRUE(png.ok()) << png.status().message();
  Result<Canvas> canvas = DecodePng(*png);
  ASSERT_TRUE(canvas.ok());
  EXPECT_GE(canvas->width(), 1024);
  // Something dark is drawn in the plot.
  bool dark = false;
  for (int y = 76; y < canvas->height() - 64 && !dark; ++y) {
    for (int x = 100; x < canvas->width() && !dark; ++x) dark = canvas->At(x, y).r < 64;
  }
  EXPECT_TRUE(dark);
}

TEST(RenderTrails, Json) {
  const TrailsView view = SmallView();
  const nlohmann::json j = nlohmann::json::parse(RenderTrailsJson(view));
  EXPECT_EQ(j["view"], "trails");
  EXPECT_EQ(j["range"][1], 20'000'000);
  EXPECT_EQ(j["points"], 128);
  ASSERT_EQ(j["trails"].size(), 3u);
  const auto& first = j["trails"][0];
  EXPECT_EQ(first["density"].size(), 128u);
  EXPECT_TRUE(first.contains("sparkline"));
  EXPECT_TRUE(first.contains("bimodality"));
  EXPECT_EQ(j["sort"], "cov");
  // db-2 (bimodal, with the outlier) has the largest CoV and a rug tick at the outlier: the
  // middle of its bucket's part up to the max, [18,350,080, 18,500,001), is point 117.
  EXPECT_EQ(first["group"], "db-2");
  bool tick = false;
  for (const auto& p : first["rug"]) tick = tick || p == 117;
  EXPECT_TRUE(tick);
}

}  // namespace
}  // namespace trailmap
