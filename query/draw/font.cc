#include "query/draw/font.h"

#include <ft2build.h>
#include FT_FREETYPE_H

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace trailmap {
namespace {

constexpr const char* kDefaultFontDir = "/usr/share/fonts/truetype/dejavu";
constexpr const char* kRegularFile = "DejaVuSans.ttf";
constexpr const char* kBoldFile = "DejaVuSans-Bold.ttf";

// The process's FreeType library and the two faces; every use holds `mutex` (an FT_Face is not
// safe to use from two threads at once). Opened on first use; the faces are not closed at exit
// (a renderer on another thread may still be drawing then, and the OS reclaims them).
struct Fonts {
  Fonts();

  std::mutex mutex;
  Status status;
  FT_Library library = nullptr;
  FT_Face faces[2] = {nullptr, nullptr};  // regular, bold
  int sized_px[2] = {0, 0};               // the pixel size each face is set to now
  // Keyed by (code point, px, bold). std::map: its nodes never move, so references handed out
  // stay valid.
  std::map<std::tuple<char32_t, int, bool>, Glyph> glyphs;
  std::map<std::pair<int, bool>, std::pair<int, int>> metrics;  // ascent, descent
};

Fonts::Fonts() {
  const char* env = std::getenv("TRAILMAP_FONT_DIR");
  const std::string dir = env && *env ? env : kDefaultFontDir;
  if (FT_Init_FreeType(&library) != 0) {
    status = Status::IOError("FreeType could not start, so the PNG views cannot draw text");
    return;
  }
  const char* files[2] = {kRegularFile, kBoldFile};
  for (int i = 0; i < 2; ++i) {
    const std::string path = dir + "/" + files[i];
    if (FT_New_Face(library, path.c_str(), 0, &faces[i]) != 0) {
      status = Status::NotFound(
          "the PNG views draw text in DejaVu Sans, but " + path +
          " is missing or unreadable: install the Debian package fonts-dejavu-core (or set"
          " TRAILMAP_FONT_DIR to a folder holding " +
          kRegularFile + " and " + kBoldFile + "), or ask for --format svg");
      return;
    }
  }
}

Fonts& TheFonts() {
  static Fonts fonts;  // thread-safe initialization
  return fonts;
}

// Holds fonts.mutex; the face of `style`, sized to it.
FT_Face SizedFace(Fonts& fonts, FontStyle style) {
  const int i = style.bold ? 1 : 0;
  if (fonts.sized_px[i] != style.px) {
    FT_Set_Pixel_Sizes(fonts.faces[i], 0, static_cast<FT_UInt>(style.px));
    fonts.sized_px[i] = style.px;
  }
  return fonts.faces[i];
}

}  // namespace

Status FontsReady() {
  Fonts& fonts = TheFonts();
  std::lock_guard lock(fonts.mutex);
  return fonts.status;
}

const Glyph& GlyphOf(char32_t code_point, FontStyle style) {
  style.px = std::max(style.px, 1);
  Fonts& fonts = TheFonts();
  std::lock_guard lock(fonts.mutex);
  auto [it, inserted] = fonts.glyphs.try_emplace({code_point, style.px, style.bold});
  Glyph& g = it->second;
  if (!inserted) return g;
  g.advance = (style.px + 1) / 2;
  if (!fonts.status.ok()) return g;
  FT_Face face = SizedFace(fonts, style);
  if (FT_Load_Char(face, code_point,
                   FT_LOAD_RENDER | FT_LOAD_TARGET_NORMAL | FT_LOAD_FORCE_AUTOHINT) != 0)
    return g;
  const FT_GlyphSlot slot = face->glyph;
  const FT_Bitmap& bitmap = slot->bitmap;
  g.advance = static_cast<int>((slot->advance.x + 32) >> 6);
  g.left = slot->bitmap_left;
  g.top = slot->bitmap_top;
  if (bitmap.pixel_mode != FT_PIXEL_MODE_GRAY) return g;  // FT_LOAD_RENDER's default is gray
  g.width = static_cast<int>(bitmap.width);
  g.rows = static_cast<int>(bitmap.rows);
  g.coverage.resize(static_cast<size_t>(g.width) * g.rows);
  for (int r = 0; r < g.rows; ++r) {
    const unsigned char* src = bitmap.buffer + static_cast<ptrdiff_t>(r) * bitmap.pitch;
    std::copy(src, src + g.width, g.coverage.begin() + static_cast<ptrdiff_t>(r) * g.width);
  }
  return g;
}

namespace {
std::pair<int, int> Metrics(FontStyle style) {
  style.px = std::max(style.px, 1);
  Fonts& fonts = TheFonts();
  std::lock_guard lock(fonts.mutex);
  auto [it, inserted] = fonts.metrics.try_emplace({style.px, style.bold});
  if (!inserted) return it->second;
  if (!fonts.status.ok()) return it->second = {style.px * 3 / 4, style.px / 4};
  FT_Face face = SizedFace(fonts, style);
  const FT_Size_Metrics& m = face->size->metrics;
  return it->second = {static_cast<int>((m.ascender + 63) >> 6),
                       static_cast<int>((-m.descender + 63) >> 6)};
}
}  // namespace

int FontAscent(FontStyle style) { return Metrics(style).first; }
int FontDescent(FontStyle style) { return Metrics(style).second; }

char32_t NextCodePoint(std::string_view* text) {
  const auto b0 = static_cast<unsigned char>(text->front());
  const int extra = b0 < 0x80             ? 0
                    : (b0 & 0xE0) == 0xC0 ? 1
                    : (b0 & 0xF0) == 0xE0 ? 2
                    : (b0 & 0xF8) == 0xF0 ? 3
                                          : -1;
  if (extra < 0 || text->size() < static_cast<size_t>(extra) + 1) {
    text->remove_prefix(1);
    return 0xFFFD;
  }
  char32_t cp = extra == 0 ? b0 : b0 & (0x3F >> extra);
  for (int i = 1; i <= extra; ++i) {
    const auto b = static_cast<unsigned char>((*text)[i]);
    if ((b & 0xC0) != 0x80) {
      text->remove_prefix(1);
      return 0xFFFD;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  text->remove_prefix(extra + 1);
  return cp;
}

}  // namespace trailmap
