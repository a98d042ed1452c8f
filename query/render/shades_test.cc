#include "query/render/shades.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(Shades, HeatRunsFromWhiteThroughYellowToDarkRed) {
  EXPECT_EQ(ShadeColor(0), (Rgb{255, 255, 255}));
  const Rgb faint = ShadeColor(1), dark = ShadeColor(kShadeLevels - 1);
  EXPECT_NE(faint, ShadeColor(0));
  EXPECT_GT(faint.r + faint.g + faint.b, dark.r + dark.g + dark.b);
  EXPECT_LT(dark.g, 20);  // dark red
  EXPECT_EQ(dark, (Rgb{128, 0, 0}));
  EXPECT_EQ(faint, (Rgb{255, 243, 176}));
}

TEST(Shades, FalseColorsMakeTheFaintestLevelStrong) {
  EXPECT_EQ(PaletteColor(Palette::kFalse, 0), (Rgb{255, 255, 255}));
  const Rgb faint = PaletteColor(Palette::kFalse, 1);
  EXPECT_LT(faint.r + faint.g + faint.b, 400);  // far from white (765)
  EXPECT_EQ(faint, (Rgb{40, 60, 200}));
  const Rgb heat = PaletteColor(Palette::kHeat, 1);
  EXPECT_GT(heat.r + heat.g + heat.b, 600);  // the heat palette's faintest is pale
  EXPECT_EQ(PaletteColor(Palette::kHeat, 7), ShadeColor(7));
}

TEST(Shades, TheOtherGroupOfASelectionIsGrey) {
  HeatmapView view;
  view.groups = {"c", "other"};
  view.select = {"c"};
  view.selection = Selection::kHue;
  EXPECT_EQ(ViewGroupColor(view, 0), GroupColor(0));
  EXPECT_EQ(ViewGroupColor(view, 1), (Rgb{150, 150, 150}));
  view.selection = Selection::kExclude;  // every drawn group keeps its own hue
  EXPECT_EQ(ViewGroupColor(view, 1), GroupColor(1));
}

TEST(Shades, AGroupedCellBlendsItsGroupsHuesFadedByItsLevel) {
  HeatmapView view;
  view.rows = 1;
  view.columns = 1;
  view.groups = {"a", "b"};
  view.counts = {4};
  view.levels = {kShadeLevels - 1};
  view.breakdown = {{{0, 2}, {1, 2}}};
  const Rgb a = GroupColor(0), b = GroupColor(1);
  const auto half = [](uint8_t x, uint8_t y) { return static_cast<uint8_t>((x + y) / 2.0 + 0.5); };
  EXPECT_EQ(CellColor(view, 0), (Rgb{half(a.r, b.r), half(a.g, b.g), half(a.b, b.b)}));
  view.breakdown.clear();  // ungrouped: the palette's shade
  EXPECT_EQ(CellColor(view, 0), ShadeColor(kShadeLevels - 1));
}

}  // namespace
}  // namespace trailmap
