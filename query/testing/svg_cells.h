// For the tests that the SVG and the PNG of a grid view (heat map, columns) put every cell at the
// same rectangle: the SVG's filled cells (a <rect> with a fill and a hover <title>), and a check
// that each is that color, corner to corner, in the PNG.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "query/draw/raster.h"

namespace trailmap::testing_svg {

struct SvgCell {
  int x = 0, y = 0, width = 0, height = 0;
  Rgb fill;
};

inline std::vector<SvgCell> SvgCells(const std::string& svg) {
  static const std::regex cell(
      "<rect x=\"(\\d+)\" y=\"(\\d+)\" width=\"(\\d+)\" height=\"(\\d+)\" "
      "fill=\"#([0-9a-f]{6})\"><title>");
  std::vector<SvgCell> cells;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), cell); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    const unsigned long rgb = std::stoul(m[5].str(), nullptr, 16);
    cells.push_back(SvgCell{std::stoi(m[1].str()), std::stoi(m[2].str()), std::stoi(m[3].str()),
                            std::stoi(m[4].str()),
                            Rgb{static_cast<uint8_t>(rgb >> 16), static_cast<uint8_t>(rgb >> 8),
                                static_cast<uint8_t>(rgb)}});
  }
  return cells;
}

// The SVG's width and height attributes.
inline std::pair<int, int> SvgSize(const std::string& svg) {
  int w = 0, h = 0;
  const size_t at = svg.find("<svg ");
  if (at != std::string::npos) {
    std::sscanf(svg.c_str() + svg.find(" width=\"", at), " width=\"%d\" height=\"%d\"", &w, &h);
  }
  return {w, h};
}

// The PNG is as large as the SVG, and every SVG cell is its fill color in the PNG at its four
// corners and its middle (neighbouring cells of other shades then pin each edge).
inline void ExpectSameCells(const std::string& svg, const Canvas& png, size_t expected_cells) {
  const std::vector<SvgCell> cells = SvgCells(svg);
  ASSERT_EQ(cells.size(), expected_cells);
  EXPECT_EQ(SvgSize(svg), std::make_pair(png.width(), png.height()));
  for (const SvgCell& c : cells) {
    const int x1 = c.x + c.width - 1, y1 = c.y + c.height - 1;
    for (auto [x, y] :
         {std::pair{c.x, c.y}, {x1, c.y}, {c.x, y1}, {x1, y1}, {(c.x + x1) / 2, (c.y + y1) / 2}}) {
      ASSERT_EQ(png.At(x, y), c.fill) << "cell at " << c.x << "," << c.y << " " << c.width << "x"
                                      << c.height << ": pixel " << x << "," << y;
    }
  }
}

}  // namespace trailmap::testing_svg
