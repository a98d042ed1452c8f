#include "query/draw/font.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "query/draw/raster.h"

namespace trailmap {
namespace {

int Ink(const Glyph& g) {
  int ink = 0;
  for (uint8_t a : g.coverage) ink += a;
  return ink;
}

TEST(Font, DejaVuSansIsThere) {
  const Status ready = FontsReady();
  ASSERT_TRUE(ready.ok()) << ready.message();
  EXPECT_EQ(FontAscent(kBodyFont), 12);  // DejaVu Sans: ascender 0.928 em, descender 0.236 em
  EXPECT_EQ(FontDescent(kBodyFont), 3);
}

TEST(Font, CoversAsciiAndTheViewsSymbols) {
  for (char32_t c = 33; c <= 126; ++c) {
    EXPECT_GT(Ink(GlyphOf(c, kBodyFont)), 0) << "no ink for " << static_cast<int>(c);
  }
  EXPECT_EQ(GlyphOf(' ', kBodyFont).coverage.size(), 0u);
  EXPECT_GT(GlyphOf(' ', kBodyFont).advance, 0);
  // µ (both code points), the middle dot, the en dash and a CJK character are all real glyphs,
  // not the ".notdef" box drawn for what the font lacks (U+E000, a private-use code point).
  const int notdef = Ink(GlyphOf(0xE000, kBodyFont));
  for (char32_t c : {0x00B5, 0x03BC, 0x00B7, 0x2013, 0x00E9}) {
    EXPECT_NE(Ink(GlyphOf(c, kBodyFont)), notdef) << std::hex << static_cast<int>(c);
  }
}

TEST(Font, BoldAndLargerAreWider) {
  const Glyph& regular = GlyphOf('m', kBodyFont);
  const Glyph& title = GlyphOf('m', kTitleFont);
  EXPECT_GT(title.advance, regular.advance);
  EXPECT_GT(Ink(title), Ink(regular));
  EXPECT_EQ(&GlyphOf('m', kBodyFont), &regular);  // cached: the same glyph again
}

TEST(Font, Utf8Decoding) {
  std::string_view text =
      "aµ\xff"
      "b";
  EXPECT_EQ(NextCodePoint(&text), U'a');
  EXPECT_EQ(NextCodePoint(&text), char32_t{0xB5});
  EXPECT_EQ(NextCodePoint(&text), char32_t{0xFFFD});  // a stray byte
  EXPECT_EQ(NextCodePoint(&text), U'b');
  EXPECT_TRUE(text.empty());
}

// In a child process of its own (the fonts open once a process): without the font files, text
// draws nothing and the PNG is refused with an error that says what to install.
TEST(FontDeathTest, MissingFontsRefuseThePngAndNameThePackage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("TRAILMAP_FONT_DIR", "/nonexistent-trailmap-fonts", 1);
        Canvas canvas(40, 20, Rgb{255, 255, 255});
        canvas.Text(0, 15, "p99", Rgb{});
        if (canvas.At(5, 10) != Rgb{255, 255, 255}) std::exit(8);
        Result<std::string> png = canvas.EncodePng();
        if (png.ok()) std::exit(0);
        std::fprintf(stderr, "%s\n", png.status().message().c_str());
        std::exit(7);
      },
      testing::ExitedWithCode(7),
      "/nonexistent-trailmap-fonts/DejaVuSans.ttf is missing or unreadable: install the Debian "
      "package fonts-dejavu-core");
  // A canvas without text needs no font.
  EXPECT_EXIT(
      {
        setenv("TRAILMAP_FONT_DIR", "/nonexistent-trailmap-fonts", 1);
        Canvas canvas(4, 4);
        std::exit(canvas.EncodePng().ok() ? 7 : 8);
      },
      testing::ExitedWithCode(7), "");
}

}  // namespace
}  // namespace trailmap
