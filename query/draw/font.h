// Font: the PNG views' text, DejaVu Sans rendered by FreeType, anti-aliased.
//
// The SVG views name "Helvetica, Arial, sans-serif" at 12 px (titles 16 px bold, some legends
// 11 px); rsvg and most browsers on Debian draw that as DejaVu Sans, so the PNG uses the same
// face at the same pixel sizes and both formats read alike. The faces are read at run time from
// /usr/share/fonts/truetype/dejavu/ (Debian's fonts-dejavu-core; TRAILMAP_FONT_DIR overrides the
// folder), on the first text a PNG draws, so a command that writes no PNG never opens them.
// Why at run time and not a glyph atlas compiled in: every character a host name, field value or
// predicate holds is drawn (an atlas would fix a set and draw the rest as boxes), the build needs
// no generator step, and the cost is small and paid only by a process that draws a PNG: opening
// both faces takes ~0.25 ms and rendering the ~100 distinct glyphs of a heat map at its three
// sizes 3–4 ms, once per process (docs/benchmarks-log.md, "The views at fleet scale").
//
// Glyphs are rendered by FreeType's auto-hinter at its normal strength: stems and heights snap to
// whole pixels (crisp at 11–16 px, where the unhinted or lightly hinted outlines smear every stem
// over two grey columns), advances are whole pixels, so a string's width is the sum of its
// glyphs' advances, and text looks the same on every machine with the same Debian packages. No
// kerning.
//
// Thread safety: every function here may be called from any thread; the glyph cache is guarded
// by a mutex and its entries are never freed or moved, so a returned Glyph reference stays valid
// for the life of the process.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trailmap {

// A pixel size and weight of DejaVu Sans.
struct FontStyle {
  int px = 12;  // the em size in pixels, as the SVG's font-size
  bool bold = false;
  friend bool operator==(const FontStyle&, const FontStyle&) = default;
};
inline constexpr FontStyle kBodyFont{12, false};   // labels, subtitles, legends
inline constexpr FontStyle kSmallFont{11, false};  // the heat map's side panel, dense labels
inline constexpr FontStyle kTitleFont{16, true};   // a view's first line

// One rendered glyph: `coverage` holds width × rows bytes, 0 (paper) to 255 (ink), row by row.
// Its top-left pixel is `left` right of the pen and `top` above the baseline; the pen then moves
// `advance` pixels right.
struct Glyph {
  int left = 0, top = 0, width = 0, rows = 0, advance = 0;
  std::vector<uint8_t> coverage;
};

// OK when both faces (regular and bold) open; otherwise a NotFound that names the missing file
// and the Debian package that holds it. Opens them on the first call; later calls return the
// first answer.
Status FontsReady();

// The glyph of `code_point` in `style`. A code point the font does not have draws as its
// ".notdef" box; when the fonts are missing (FontsReady() fails) every glyph is blank, with an
// advance of half the size, so a layout still adds up.
const Glyph& GlyphOf(char32_t code_point, FontStyle style);

// The font's line metrics at `style`, in whole pixels above and below the baseline.
int FontAscent(FontStyle style);
int FontDescent(FontStyle style);

// One UTF-8 code point from *text (advancing it); a malformed byte decodes as U+FFFD.
char32_t NextCodePoint(std::string_view* text);

}  // namespace trailmap
