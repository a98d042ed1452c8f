#include "query/draw/raster.h"

#include <png.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace trailmap {
namespace {

// libpng reports errors by calling this; it must not return. The message is kept for the caller
// and control goes back to the setjmp in EncodePng / DecodePng.
void OnPngError(png_structp png, png_const_charp message) {
  auto* error = static_cast<std::string*>(png_get_error_ptr(png));
  if (error) *error = message;
  png_longjmp(png, 1);
}
void OnPngWarning(png_structp, png_const_charp) {}

void AppendToString(png_structp png, png_bytep data, png_size_t length) {
  static_cast<std::string*>(png_get_io_ptr(png))
      ->append(reinterpret_cast<const char*>(data), length);
}
void FlushNothing(png_structp) {}

struct PngReadSource {
  std::string_view bytes;
  size_t at = 0;
};
void ReadFromView(png_structp png, png_bytep data, png_size_t length) {
  auto* source = static_cast<PngReadSource*>(png_get_io_ptr(png));
  if (source->bytes.size() - source->at < length) png_error(png, "truncated PNG");
  std::memcpy(data, source->bytes.data() + source->at, length);
  source->at += length;
}

}  // namespace

Canvas::Canvas(int width, int height, Rgb background)
    : width_(std::max(0, width)), height_(std::max(0, height)), background_(background) {
  if (width_ == 0 || height_ == 0) width_ = height_ = 0;
  pixels_.resize(size_t{3} * width_ * height_);
  for (size_t i = 0; i < pixels_.size(); i += 3) {
    pixels_[i] = background.r;
    pixels_[i + 1] = background.g;
    pixels_[i + 2] = background.b;
  }
}

Rgb Canvas::At(int x, int y) const {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return background_;
  const uint8_t* p = &pixels_[(size_t{3} * y * width_) + size_t{3} * x];
  return Rgb{p[0], p[1], p[2]};
}

void Canvas::Set(int x, int y, Rgb color) {
  if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
  uint8_t* p = &pixels_[(size_t{3} * y * width_) + size_t{3} * x];
  p[0] = color.r;
  p[1] = color.g;
  p[2] = color.b;
}

void Canvas::Blend(int x, int y, Rgb color, int alpha) {
  if (x < 0 || y < 0 || x >= width_ || y >= height_ || alpha <= 0) return;
  const int a = std::min(alpha, 255);
  uint8_t* p = &pixels_[(size_t{3} * y * width_) + size_t{3} * x];
  // Coverage blends the ink over what is there (in sRGB values, as most renderers do).
  p[0] = static_cast<uint8_t>((p[0] * (255 - a) + color.r * a + 127) / 255);
  p[1] = static_cast<uint8_t>((p[1] * (255 - a) + color.g * a + 127) / 255);
  p[2] = static_cast<uint8_t>((p[2] * (255 - a) + color.b * a + 127) / 255);
}

void Canvas::FillRect(int x, int y, int w, int h, Rgb color) {
  const int x0 = std::max(x, 0), x1 = std::min(x + std::max(w, 0), width_);
  const int y0 = std::max(y, 0), y1 = std::min(y + std::max(h, 0), height_);
  if (x0 >= x1 || y0 >= y1) return;
  // Fill the first row pixel by pixel, then copy it: a cell is a few rows of a few pixels, and
  // this keeps the inner loop a memcpy.
  uint8_t* first = &pixels_[(size_t{3} * y0 * width_) + size_t{3} * x0];
  for (int i = 0; i < x1 - x0; ++i) {
    first[3 * i] = color.r;
    first[3 * i + 1] = color.g;
    first[3 * i + 2] = color.b;
  }
  const size_t row_bytes = size_t{3} * (x1 - x0);
  for (int yy = y0 + 1; yy < y1; ++yy) {
    std::memcpy(&pixels_[(size_t{3} * yy * width_) + size_t{3} * x0], first, row_bytes);
  }
}

void Canvas::StrokeRect(int x, int y, int w, int h, Rgb color) {
  if (w <= 0 || h <= 0) return;
  FillRect(x, y, w, 1, color);
  FillRect(x, y + h - 1, w, 1, color);
  FillRect(x, y, 1, h, color);
  FillRect(x + w - 1, y, 1, h, color);
}

void Canvas::Line(int x0, int y0, int x1, int y1, Rgb color, int thickness) {
  const int t = std::max(thickness, 1);
  const int before = (t - 1) / 2;  // pen pixels before the point; the rest after
  const int dx = std::abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
  const int dy = -std::abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
  int err = dx + dy;
  for (;;) {
    if (t == 1) {
      Set(x0, y0, color);
    } else {
      FillRect(x0 - before, y0 - before, t, t, color);
    }
    if (x0 == x1 && y0 == y1) break;
    const int e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      x0 += sx;
    }
    if (e2 <= dx) {
      err += dx;
      y0 += sy;
    }
  }
}

int Canvas::TextWidth(std::string_view text, FontStyle font) {
  int w = 0;
  while (!text.empty()) w += GlyphOf(NextCodePoint(&text), font).advance;
  return w;
}

void Canvas::Text(int x, int y, std::string_view text, Rgb color, TextAlign align, FontStyle font) {
  drew_text_ = true;
  const int w = TextWidth(text, font);
  int pen = align == TextAlign::kLeft ? x : align == TextAlign::kCenter ? x - w / 2 : x - w;
  // Left-aligned text that would run past the right edge (a long title or predicate) ends in
  // "..." inside it, so what is cut is seen to be cut: the longest prefix that leaves room for
  // the dots.
  std::string cut;
  if (align == TextAlign::kLeft && pen + w > width_) {
    const int room = width_ - pen - TextWidth("...", font);
    std::string_view rest = text;
    int used = 0;
    while (!rest.empty()) {
      std::string_view next = rest;
      const int advance = GlyphOf(NextCodePoint(&next), font).advance;
      if (used + advance > room) break;
      used += advance;
      rest = next;
    }
    cut.assign(text.substr(0, text.size() - rest.size()));
    cut += "...";
    text = cut;
  }
  while (!text.empty()) {
    const Glyph& g = GlyphOf(NextCodePoint(&text), font);
    const int gx = pen + g.left, gy = y - g.top;
    for (int r = 0; r < g.rows; ++r) {
      const uint8_t* coverage = &g.coverage[static_cast<size_t>(r) * g.width];
      for (int c = 0; c < g.width; ++c) Blend(gx + c, gy + r, color, coverage[c]);
    }
    pen += g.advance;
  }
}

Result<std::string> Canvas::EncodePng() const {
  if (width_ == 0) return Status::InvalidArgument("cannot encode an empty canvas as PNG");
  if (drew_text_) {
    if (Status fonts = FontsReady(); !fonts.ok()) return fonts;
  }
  std::string out;
  std::string error;
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, &error, OnPngError, OnPngWarning);
  if (!png) return Status::IOError("libpng: cannot create a write struct");
  png_infop info = png_create_info_struct(png);
  // Nothing with a destructor is created between setjmp and the end of the writing.
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return Status::IOError("libpng: " + (error.empty() ? std::string("out of memory") : error));
  }
  png_set_write_fn(png, &out, AppendToString, FlushNothing);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width_), static_cast<png_uint_32>(height_), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  // Views are flat runs of a few colors: the SUB filter and zlib's fastest level compress them
  // nearly as well as the defaults at a fraction of the time (bench/render_bench.cc).
  png_set_filter(png, 0, PNG_FILTER_SUB);
  png_set_compression_level(png, 1);
  png_write_info(png, info);
  for (int y = 0; y < height_; ++y) {
    png_write_row(png, const_cast<png_bytep>(&pixels_[size_t{3} * y * width_]));
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

Result<Canvas> DecodePng(std::string_view bytes) {
  if (bytes.size() < 8 || png_sig_cmp(reinterpret_cast<png_const_bytep>(bytes.data()), 0, 8)) {
    return Status::Corruption("not a PNG file");
  }
  std::string error;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &error, OnPngError, OnPngWarning);
  if (!png) return Status::IOError("libpng: cannot create a read struct");
  png_infop info = png_create_info_struct(png);
  PngReadSource source{bytes, 0};
  std::vector<png_bytep> row_pointers;
  std::vector<uint8_t> pixels;
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return Status::Corruption("PNG: " + error);
  }
  png_set_read_fn(png, &source, ReadFromView);
  png_read_info(png, info);
  // Whatever it holds, read it as 8-bit RGB.
  png_set_expand(png);
  png_set_strip_16(png);
  png_set_strip_alpha(png);
  png_set_gray_to_rgb(png);
  png_read_update_info(png, info);
  const int width = static_cast<int>(png_get_image_width(png, info));
  const int height = static_cast<int>(png_get_image_height(png, info));
  if (png_get_rowbytes(png, info) != size_t{3} * width) png_error(png, "unexpected row size");
  pixels.resize(size_t{3} * width * height);
  row_pointers.resize(height);
  for (int y = 0; y < height; ++y) row_pointers[y] = &pixels[size_t{3} * y * width];
  png_read_image(png, row_pointers.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  Canvas canvas(width, height);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const uint8_t* p = &pixels[size_t{3} * (size_t{1} * y * width + x)];
      canvas.Set(x, y, Rgb{p[0], p[1], p[2]});
    }
  }
  return canvas;
}

}  // namespace trailmap
