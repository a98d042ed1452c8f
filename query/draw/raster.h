// Raster: an RGB canvas that the PNG views draw on, and its PNG encoding.
//
// Coordinates are pixels, (0, 0) at the top left, x to the right, y down. Everything drawn is
// clipped to the canvas, so callers never check bounds. There is no alpha and no anti-aliasing:
// heat map cells are exact rectangles, and a view should look the same on every machine, so it
// can be golden-tested byte for byte.
//
// Text uses a small bitmap font built into trailmap (query/draw/raster_font.cc): 5 × 7 glyphs with a
// descender row, in a 6 × 10 pixel cell at scale 1. A PNG view needs axis labels, titles and
// legends, and Debian's libpng only encodes pixels — it draws no text — while a font library
// (FreeType, fontconfig) would add a dependency and make the pixels depend on the installed
// fonts. The font covers printable ASCII (32–126) plus "µ" (U+00B5 and U+03BC), "·" (U+00B7)
// and "–" (U+2013), which the views' labels use; any other character draws as "?".
//
// Canvas is a value type (copyable); not thread-safe for concurrent writes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
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

  // The rectangle [x, x + w) × [y, y + h).
  void FillRect(int x, int y, int w, int h, Rgb color);
  // The outline of the same rectangle, 1 px.
  void StrokeRect(int x, int y, int w, int h, Rgb color);
  // A line from (x0, y0) to (x1, y1), both ends drawn (Bresenham). With thickness t > 1 a square
  // pen t pixels wide is centered on every point, so a horizontal line covers t rows.
  void Line(int x0, int y0, int x1, int y1, Rgb color, int thickness = 1);

  // Draws UTF-8 `text` standing on row y: a capital's bottom row is y and its top y - 6 × scale;
  // descenders ("g", "µ") take the rows below, down to y + scale. `align` says whether x is the left end, the middle
  // or the right end. Each character advances 6 × scale pixels.
  void Text(int x, int y, std::string_view text, Rgb color, TextAlign align = TextAlign::kLeft,
            int scale = 1);
  // The width Text would draw `text` at, in pixels.
  static int TextWidth(std::string_view text, int scale = 1);

  // The PNG file (8-bit RGB, no interlace, default zlib level). Fails only for an empty canvas or
  // if libpng reports an error.
  Result<std::string> EncodePng() const;

 private:
  int width_ = 0;
  int height_ = 0;
  Rgb background_;
  std::vector<uint8_t> pixels_;  // RGB, row by row, 3 bytes a pixel
};

// Decodes an 8-bit RGB or RGBA PNG (as EncodePng writes) into a canvas; for tests and tools that
// check pixels. Fails with Corruption on anything libpng refuses.
Result<Canvas> DecodePng(std::string_view png);

// The font: the 8 rows (top to bottom; bit 4 is the leftmost of 5 columns) of the glyph for a
// Unicode code point, or of "?" when the font has none.
const uint8_t* GlyphRows(char32_t code_point);

}  // namespace trailmap
