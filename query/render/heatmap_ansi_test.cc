#include "query/render/heatmap_ansi.h"

#include <gtest/gtest.h>

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

TEST(RenderAnsi, TwoRowsALineWithLabelsAndATimeAxis) {
  const HeatmapView view = testing_views::Small();
  const std::string text = RenderHeatmapAnsi(view);
  // 8 rows → 4 lines of 12 half blocks.
  EXPECT_EQ(CountOf(text, "▀"), 4u * 12);
  EXPECT_NE(text.find("   20ms│"), std::string::npos);
  EXPECT_NE(text.find("16:00:00"), std::string::npos);
  EXPECT_NE(text.find("\x1b[38;2;"), std::string::npos);
  EXPECT_NE(text.find("disk.latency heat map"), std::string::npos);
  EXPECT_NE(text.find("rank: shade"), std::string::npos);
}

}  // namespace
}  // namespace trailmap
