// Raster: an RGB canvas that the PNG views draw on, and its PNG encoding.
//
// Coordinates are pixels, (0, 0) at the top left, x to the right, y down. Everything drawn is
// clipped to the canvas, so callers never check bounds. There is no alpha and no anti-aliasing:
// heat map cells are exact rectangles, and a view should look the same on every machine, so it
// can be golden-tested byte for byte.
//
// Text is DejaVu Sans drawn anti-aliased by FreeType (query/draw/font.h), blended into what is
// under it; everything else is drawn in exact pixels, so a heat map's cells stay exact
// rectangles. If the font files are missing, text draws nothing and EncodePng fails with the
// font's error, which names the Debian package to install.
//
// Canvas is a value type (copyable); not thread-safe for concurrent writes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "query/draw/font.h"
#include "query/draw/palette.h"

namespace trailmap {

enum class TextAlign { kLeft, kCenter, kRight };

class Canvas {
 public:
  // A width × height canvas filled with `background`; a zero or negative size gives an empty
  // canvas (which draws nothing and cannot be encoded).
  Canvas(int width, int height, Rgb background = Rgb{});

  int width() const { return width_; }
  int height() const { return height_; }
  Rgb At(int x, int y) const;  // the background color outside the canvas
  void Set(int x, int y, Rgb color);
  // Blends `color` over the pixel with coverage `alpha` (0: unchanged, 255: `color`).
  void Blend(int x, int y, Rgb color, int alpha);

  // The rectangle [x, x + w) × [y, y + h).
  void FillRect(int x, int y, int w, int h, Rgb color);
  // The outline of the same rectangle, 1 px.
  void StrokeRect(int x, int y, int w, int h, Rgb color);
  // A line from (x0, y0) to (x1, y1), both ends drawn (Bresenham). With thickness t > 1 a square
  // pen t pixels wide is centered on every point, so a horizontal line covers t rows.
  void Line(int x0, int y0, int x1, int y1, Rgb color, int thickness = 1);

  // Draws UTF-8 `text` in `font` with its baseline on row y (a capital's bottom row is y - 1;
  // descenders go below). `align` says whether x is the left end, the middle or the right end.
  // Left-aligned text that would run past the right edge ends in "..." inside it.
  void Text(int x, int y, std::string_view text, Rgb color, TextAlign align = TextAlign::kLeft,
            FontStyle font = kBodyFont);
  // The width Text would draw `text` at, in pixels: the sum of its glyphs' advances.
  static int TextWidth(std::string_view text, FontStyle font = kBodyFont);

  // The PNG file (8-bit RGB, no interlace, default zlib level). Fails for an empty canvas, if
  // text was drawn without the font (FontsReady()'s error), or if libpng reports an error.
  Result<std::string> EncodePng() const;

 private:
  int width_ = 0;
  int height_ = 0;
  Rgb background_;
  bool drew_text_ = false;
  std::vector<uint8_t> pixels_;  // RGB, row by row, 3 bytes a pixel
};

// Decodes an 8-bit RGB or RGBA PNG (as EncodePng writes) into a canvas; for tests and tools that
// check pixels. Fails with Corruption on anything libpng refuses.
Result<Canvas> DecodePng(std::string_view png);

}  // namespace trailmap
