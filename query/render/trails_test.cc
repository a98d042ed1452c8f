#include "query/render/trails.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>

#include "query/draw/raster.h"
#include "query/testing/golden.h"
#include "query/testing/views.h"

namespace trailmap {
namespace {

// Three small hosts, deterministic: a fast one, a bimodal one with an outlier, a slow one.
TrailsView SmallView() {
  MergedGrid grid = testing_views::HostGrid({"db-1", "db-2", "db-3"});
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
  // Width: the labels' margin (64: "db-1" is shorter than the 6 characters it is at least) + the
  // 1024 px value range + 24 right. Height: 3 trails 24 px apart (900 / 3, at most 24), each
  // 24 / (1 - 0.85) = 160 px tall, so 160 + 2 × 24 = 208 px between the 76 px of titles and the
  // 64 px of axis.
  EXPECT_EQ(canvas->width(), 64 + 1024 + 24);
  EXPECT_EQ(canvas->height(), 76 + 208 + 64);
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

// `hosts` hosts of one shape each (values spread evenly over 2..18 ms, so the density is flat in
// the middle of 0..20 ms), counts differing.
MergedGrid FlatFleet(int hosts) {
  std::vector<std::string> names;
  for (int h = 0; h < hosts; ++h) {
    char name[16];
    std::snprintf(name, sizeof name, "h%03d", h);
    names.push_back(name);
  }
  MergedGrid grid = testing_views::HostGrid(std::move(names));
  for (int h = 0; h < hosts; ++h) {
    const int n = 4000 + h;
    for (int i = 0; i < n; ++i) {
      grid.cells[h][0].Record(2'000'000 + static_cast<uint64_t>(i) * 16'000'000 / n);
    }
  }
  return grid;
}

// 200 trails, made on the cores (ParallelInOrder), come out whole and in the view's order, the
// same whether emitted part by part (the CLI's stream) or joined.
TEST(RenderTrails, JsonOfManyTrailsInOrder) {
  TrailOptions o;
  o.points = 256;
  o.sort = TrailSort::kName;
  const TrailsView view = AssembleTrails(FlatFleet(200), o);
  std::string streamed;
  size_t parts = 0;
  WriteTrailsJson(view, [&](std::string_view part) {
    streamed += part;
    ++parts;
  });
  EXPECT_EQ(parts, 202u);  // the head, one per trail, the tail
  EXPECT_EQ(streamed, RenderTrailsJson(view));
  const nlohmann::json j = nlohmann::json::parse(streamed);
  ASSERT_EQ(j["trails"].size(), 200u);
  for (size_t i = 0; i < 200; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "h%03zu", i);
    EXPECT_EQ(j["trails"][i]["group"], name) << i;
    EXPECT_EQ(j["trails"][i]["count"], 4000 + i) << i;
    EXPECT_EQ(j["trails"][i]["density"].size(), 256u) << i;
  }
}

// The rows of one pixel column, from y = 76 (the plot's top) down to the value axis (the first
// grey pixel), as runs of dark (line) pixels: {first row, rows}.
std::vector<std::pair<int, int>> DarkRuns(const Canvas& canvas, int x) {
  std::vector<std::pair<int, int>> runs;
  for (int y = 76; y < canvas.height(); ++y) {
    const Rgb p = canvas.At(x, y);
    if (p.r == 100 && p.g == 100 && p.b == 100) break;  // the axis
    if (p.r >= 64) continue;
    if (!runs.empty() && runs.back().first + runs.back().second == y) {
      ++runs.back().second;
    } else {
      runs.emplace_back(y, 1);
    }
  }
  return runs;
}

// A fleet larger than the picture draws the trails that fit its height, and each drawn
// trail's line is its own row, with background rows between it and its neighbours.
TEST(RenderTrails, EachDrawnTrailIsSeparableFromItsNeighbours) {
  const TrailsStyle style;  // the defaults: 900 px of waterfall
  ASSERT_EQ(TrailsThatFit(style), 225u);
  TrailOptions o;
  o.points = 256;
  o.hi = 20'000'000;
  o.limit = TrailsThatFit(style);
  TrailsView view = AssembleTrails(FlatFleet(1000), o);
  view.fitted = true;
  ASSERT_EQ(view.trails.size(), 225u);
  EXPECT_EQ(view.groups_total, 1000u);
  EXPECT_NE(TrailsSubtitle(view).find(
                "225 of 1000 trails (the first that fit; --limit 1000 draws all) sorted by cov"),
            std::string::npos)
      << TrailsSubtitle(view);
  Result<std::string> png = RenderTrailsPng(view, style);
  ASSERT_TRUE(png.ok()) << png.status().message();
  Result<Canvas> canvas = DecodePng(*png);
  ASSERT_TRUE(canvas.ok());
  // Near 9 ms, where every trail is at its flat top.
  const auto runs = DarkRuns(*canvas, canvas->width() / 2 - 40);
  ASSERT_EQ(runs.size(), 225u);
  for (size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].second, 1) << "trail " << i << " at row " << runs[i].first;
    if (i > 0) {
      EXPECT_EQ(runs[i].first - runs[i - 1].first, kMinTrailStep) << "trail " << i;
    }
  }
  // The SVG says the same.
  const std::string svg = RenderTrailsSvg(view, style);
  EXPECT_NE(svg.find("225 of 1000 trails (the first that fit; --limit 1000 draws all)"),
            std::string::npos);
}

// Asked for more than fit, the picture grows instead of squeezing the trails together.
TEST(RenderTrails, MoreTrailsThanFitMakeATallerPicture) {
  TrailOptions o;
  o.points = 256;
  o.hi = 20'000'000;
  const TrailsView view = AssembleTrails(FlatFleet(400), o);
  ASSERT_EQ(view.trails.size(), 400u);
  Result<std::string> png = RenderTrailsPng(view);
  ASSERT_TRUE(png.ok());
  Result<Canvas> canvas = DecodePng(*png);
  ASSERT_TRUE(canvas.ok());
  EXPECT_EQ(DarkRuns(*canvas, canvas->width() / 2 - 40).size(), 400u);
  EXPECT_GE(canvas->height(), 76 + 399 * kMinTrailStep + 64);
}

}  // namespace
}  // namespace trailmap
