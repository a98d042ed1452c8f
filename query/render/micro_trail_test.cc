#include "query/render/micro_trail.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(Sparkline, Strings) {
  FrequencyTrail t;
  t.density = {0, 0, 0.1, 0.5, 1.0, 0.3, 0, 0, 0, 0.001, 0, 0};
  const std::vector<double> mass = {0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0};
  t.split = SplitTrail(t.density, mass, {2, 3, 4, 5, 9}, 0.01, t.count);
  // Heights are √density: 0.1 → 0.32 (▃), 0.5 → 0.71 (▆), 0.3 → 0.55 (▅).
  EXPECT_EQ(Sparkline(t, 12), "  ▃▆█▅   ╷  ");
  // Squeezed 2:1, a cell shows its tallest point.
  EXPECT_EQ(Sparkline(t, 6), " ▆█ ╷ ");
  // 12 points in 5 cells: point p in cell p * 5 / 12, so cells of 3, 2, 3, 2 and 2 points.
  EXPECT_EQ(Sparkline(t, 5), "▃█▅╷ ");
  FrequencyTrail empty;
  EXPECT_EQ(Sparkline(empty, 3), "   ");

  Histogram h;
  h.Record(5'000'000, 1000);
  h.Record(19'000'000);
  EXPECT_EQ(Sparkline(HistogramMicroTrail(h, 20'000'000, 8)), "  █    ╷");
}

TEST(MicroTrail, SvgHasALineAndTicks) {
  FrequencyTrail t;
  t.density = {0, 0.5, 1.0, 0.5, 0, 0, 0.001, 0};
  t.split = SplitTrail(t.density, {0, 1, 1, 1, 0, 0, 1, 0}, {1, 2, 3, 6}, 0.01, t.count);
  EXPECT_EQ(MicroTrailSvg(t, 8, 10),
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"8\" height=\"10\" "
            "viewBox=\"0 0 8 10\"><path d=\"M1.5,3.1 L2.5,0.5 L3.5,3.1\" fill=\"none\" "
            "stroke=\"#202020\" stroke-width=\"1\" stroke-linejoin=\"round\"/><path "
            "d=\"M6.5,10 v-3\" stroke=\"#202020\" stroke-width=\"1\"/></svg>");
}

}  // namespace
}  // namespace trailmap
