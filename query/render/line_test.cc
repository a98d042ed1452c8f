#include "query/render/line.h"
#include "query/testing/golden.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace trailmap {
namespace {

// cpu.usage by host over 12 one-second columns: web-1 busy at 80-91%, web-2 at 20%, db-1 at 5%
// with a gap in columns 4-5.
LineView SmallView(LineOptions options = {}) {
  MergedGrid g;
  g.metric = "cpu.usage";
  g.kind = MetricKind::kScalar;
  g.unit = "0.01%";
  g.from = 1'795'363'200;
  g.step = 1;
  g.columns = 12;
  g.to = g.from + 12;
  g.group_by = "host";
  g.groups = {"db-1", "web-1", "web-2"};
  g.cells.assign(3, std::vector<Histogram>(12));
  for (uint32_t c = 0; c < 12; ++c) {
    if (c != 4 && c != 5) g.cells[0][c].Record(500);
    g.cells[1][c].Record(8000 + c * 100);
    g.cells[2][c].Record(2000);
  }
  return AssembleLineView(g, options);
}

TEST(RenderLine, SvgGolden) {
  const std::string svg = RenderLineSvg(SmallView());
  testing_golden::ExpectGolden("line_small.svg", svg);
  // The axis reads percent, and the gap splits db-1's line in two.
  EXPECT_NE(svg.find(">100%</text>"), std::string::npos);
  EXPECT_NE(svg.find(">web-1  85.5%</text>"), std::string::npos);
  size_t lines = 0;
  for (size_t p = svg.find("<polyline"); p != std::string::npos; p = svg.find("<polyline", p + 1))
    ++lines;
  EXPECT_EQ(lines, 4u);
}

TEST(RenderLine, PngPixels) {
  const LineView view = SmallView();
  const Canvas canvas = DrawLine(view);
  const LineLayout l = LayoutLine(view);
  EXPECT_EQ(canvas.width(), l.width);
  // web-1 (the first line, largest mean) passes through its first point at 80%.
  const int x = static_cast<int>(std::lround(l.X(view, 0)));
  const int y = static_cast<int>(std::lround(l.Y(80)));
  EXPECT_EQ(canvas.At(x, y), LineColor(view, 0));
  // db-1 has no point in column 4: nothing of its color there at 5%.
  const int gx = static_cast<int>(std::lround(l.X(view, 4.5)));
  const int gy = static_cast<int>(std::lround(l.Y(5)));
  for (int dy = -2; dy <= 2; ++dy) EXPECT_NE(canvas.At(gx, gy + dy), LineColor(view, 2));
  // Stacked areas: below web-2's stacked line (5% + 20% on top of db-1) is its pale fill.
  const LineView stacked = SmallView({.stat = LineStat::kAvg, .stacked = true});
  const Canvas sc = DrawLine(stacked);
  const LineLayout sl = LayoutLine(stacked);
  EXPECT_EQ(stacked.series[1].name, "web-2");
  const Rgb fill = sc.At(static_cast<int>(std::lround(sl.X(stacked, 8))),
                         static_cast<int>(std::lround(sl.Y(15))));
  EXPECT_NE(fill, Rgb{});
  EXPECT_NE(fill, LineColor(stacked, 1));
  Result<std::string> png = RenderLinePng(view);
  ASSERT_TRUE(png.ok());
  Result<Canvas> back = DecodePng(*png);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->At(x, y), LineColor(view, 0));
}

// Negative gauges are drawn. The axis reaches a round tick below the lowest value, 0 is
// a tick, and the zero line is drawn across the plot in the axis color.
TEST(RenderLine, NegativeValuesReachBelowAZeroLine) {
  LineView view;
  view.metric = "queue.change";
  view.from = 1'795'363'200;
  view.columns = 4;
  view.series = {LineSeries{"q", {5, -3, 2, -7}, -0.75, false}};
  EXPECT_EQ(view.Bottom(), -7);
  const LineLayout l = LayoutLine(view);
  EXPECT_EQ(l.bottom_value, -10);
  EXPECT_EQ(l.top_value, 5);
  EXPECT_EQ(l.Ticks(""), (std::vector<double>{-10, -5, 0, 5}));
  EXPECT_EQ(l.Y(-10), l.top + l.plot_h);
  EXPECT_EQ(l.Y(5), l.top);
  const Canvas canvas = DrawLine(view);
  const int zero_y = static_cast<int>(std::lround(l.Y(0)));
  EXPECT_EQ(canvas.At(l.left + 2, zero_y), (Rgb{90, 90, 90}));  // left of the first point
  EXPECT_EQ(canvas.At(l.left + 2, zero_y - 3), Rgb{});          // nothing just above it
  EXPECT_EQ(canvas.At(static_cast<int>(std::lround(l.X(view, 3))),
                      static_cast<int>(std::lround(l.Y(-7)))),
            LineColor(view, 0));  // the lowest point, below zero
  const std::string svg = RenderLineSvg(view);
  EXPECT_NE(svg.find(">-10</text>"), std::string::npos);
  EXPECT_NE(svg.find(">-5</text>"), std::string::npos);
  EXPECT_NE(svg.find("q  -0.75"), std::string::npos);  // the legend's mean keeps its sign
  // Without negatives the axis starts at 0 as before.
  EXPECT_EQ(LayoutLine(SmallView()).bottom_value, 0);
}

TEST(RenderLine, JsonAndAnsi) {
  const nlohmann::json j = nlohmann::json::parse(RenderLineJson(SmallView({.top = 2})));
  EXPECT_EQ(j["unit"], "%");
  EXPECT_EQ(j["series"].size(), 3u);
  EXPECT_EQ(j["series"][2]["name"], "other");
  EXPECT_EQ(j["merged_into_other"], 1);
  EXPECT_TRUE(j["series"][2]["values"][4].is_null());
  EXPECT_DOUBLE_EQ(j["series"][0]["values"][3].get<double>(), 83);

  const std::string ansi = RenderLineAnsi(SmallView(), 12);
  EXPECT_EQ(ansi,
            "cpu.usage · avg by host\n"
            "2026-11-22T16:00:00Z to 2026-11-22T16:00:12Z, 1 s a point, 3 lines\n"
            "                     last      mean      max\n"
            "web-1  ████████████  91%       85.5%     91%       \n"
            "web-2  ▂▂▂▂▂▂▂▂▂▂▂▂  20%       20%       20%       \n"
            "db-1   ▁▁▁▁  ▁▁▁▁▁▁  5%        5%        5%        \n"
            "scale: ▁ = 0, █ = 91%\n");
}

// The ANSI chart draws negative values below a zero line, on one scale for both sides:
// 10 at the top (█), -5 half way down (reverse video of ▄ = the upper half), 0 as ▔ only.
TEST(RenderLine, AnsiNegativesHangBelowAZeroLine) {
  LineView view;
  view.metric = "queue.change";
  view.from = 1'795'363'200;
  view.columns = 6;
  view.step = 1;
  view.series = {LineSeries{"q", {10, -5, 0, -10, 2.5, std::nan("")}, -0.5, false},
                 LineSeries{"r", {1, 1, 1, 1, 1, 1}, 1, false}};
  const std::string ansi = RenderLineAnsi(view, 6);
  const std::string rv = "\x1b[7m", end = "\x1b[27m";
  EXPECT_EQ(ansi.substr(ansi.find('\n', ansi.find('\n') + 1) + 1),
            "              last      mean      max       min\n"
            "q     █   ▂   2.5       -0.5      10        -10       \n"
            "      ▔" + rv + "▄" + end + "▔█▔ \n"
            "r     ▁▁▁▁▁▁  1         1         1         1         \n"
            "      ▔▔▔▔▔▔\n"
            "scale: ▔ = 0, █ = 10 above it, -10 below it\n");
}

}  // namespace
}  // namespace trailmap
