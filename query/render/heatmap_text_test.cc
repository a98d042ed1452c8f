#include "query/render/heatmap_text.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(HeatmapText, TitleSaysTheWhere) {
  HeatmapView view;
  view.metric = "cpu.usage";
  EXPECT_EQ(HeatmapTitle(view), "cpu.usage heat map");
  view.where = "mode == \"user\"";
  EXPECT_EQ(HeatmapTitle(view), "cpu.usage heat map where mode == \"user\"");
  view.where = std::string(70, 'x');
  EXPECT_EQ(HeatmapTitle(view), "cpu.usage heat map where " + std::string(57, 'x') + "...");
}

}  // namespace
}  // namespace trailmap
