#include "query/draw/raster.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

constexpr Rgb kWhite{255, 255, 255};
constexpr Rgb kBlack{0, 0, 0};
constexpr Rgb kRed{200, 0, 0};

// The canvas as text, '#' for pixels that are not the background and '.' for the rest: the
// expected pictures below are readable.
std::string Picture(const Canvas& canvas, Rgb background = kWhite) {
  std::string out;
  for (int y = 0; y < canvas.height(); ++y) {
    for (int x = 0; x < canvas.width(); ++x) out += canvas.At(x, y) == background ? '.' : '#';
    out += '\n';
  }
  return out;
}

TEST(Canvas, FillRectIsClipped) {
  Canvas canvas(6, 4, kWhite);
  canvas.FillRect(-2, 1, 4, 2, kRed);
  canvas.FillRect(4, 3, 10, 10, kBlack);
  EXPECT_EQ(Picture(canvas),
            "......\n"
            "##....\n"
            "##....\n"
            "....##\n");
  EXPECT_EQ(canvas.At(0, 1), kRed);
  EXPECT_EQ(canvas.At(5, 3), kBlack);
  EXPECT_EQ(canvas.At(99, 99), kWhite);  // outside: the background
}

TEST(Canvas, LinesThinAndThick) {
  Canvas canvas(7, 5, kWhite);
  canvas.Line(0, 0, 6, 4, kBlack);
  EXPECT_EQ(Picture(canvas),
            "#......\n"
            ".##....\n"
            "...#...\n"
            "....##.\n"
            "......#\n");
  Canvas thick(7, 5, kWhite);
  thick.Line(1, 2, 5, 2, kBlack, 3);
  EXPECT_EQ(Picture(thick),
            ".......\n"
            "#######\n"
            "#######\n"
            "#######\n"
            ".......\n");
}

TEST(Canvas, TextDrawsGlyphsOnTheBaseline) {
  Canvas canvas(11, 9, kWhite);
  canvas.Text(0, 7, "Hi", kBlack);
  EXPECT_EQ(Picture(canvas),
            "...........\n"
            "#...#...#..\n"
            "#...#......\n"
            "#...#..##..\n"
            "#####...#..\n"
            "#...#...#..\n"
            "#...#...#..\n"
            "#...#..###.\n"
            "...........\n");
  EXPECT_EQ(Canvas::TextWidth("Hi"), 11);
  EXPECT_EQ(Canvas::TextWidth("20µs"), 23);  // µ is one character
  EXPECT_EQ(Canvas::TextWidth("ab", 2), 22);
}

TEST(Canvas, TextAlignment) {
  Canvas right(20, 10, kWhite);
  right.Text(19, 8, "1", kBlack, TextAlign::kRight);
  Canvas left(20, 10, kWhite);
  left.Text(14, 8, "1", kBlack);
  EXPECT_EQ(Picture(right), Picture(left));
  Canvas center(20, 10, kWhite);
  center.Text(10, 8, "1", kBlack, TextAlign::kCenter);
  Canvas left2(20, 10, kWhite);
  left2.Text(8, 8, "1", kBlack);
  EXPECT_EQ(Picture(center), Picture(left2));
}

TEST(Canvas, TextPastTheRightEdgeEndsInDots) {
  // 60 px hold 10 characters (6 px each but the last's blank column): 7 and "...".
  Canvas cut(60, 10, kWhite);
  cut.Text(0, 8, "abcdefghijklmnop", kBlack);
  Canvas drawn(60, 10, kWhite);
  drawn.Text(0, 8, "abcdefg...", kBlack);
  EXPECT_EQ(Picture(cut), Picture(drawn));
  // What fits exactly (10 characters, 59 px) is drawn whole: as its two halves drawn apart.
  Canvas whole(59, 10, kWhite);
  whole.Text(0, 8, "abcdefghij", kBlack);
  Canvas halves(59, 10, kWhite);
  halves.Text(0, 8, "abcde", kBlack);
  halves.Text(30, 8, "fghij", kBlack);
  EXPECT_EQ(Picture(whole), Picture(halves));
}

TEST(Font, CoversAsciiAndMicro) {
  // Every printable character but the space has ink; "µ" is not drawn as "?".
  for (char32_t c = 33; c <= 126; ++c) {
    const uint8_t* rows = GlyphRows(c);
    int ink = 0;
    for (int r = 0; r < 8; ++r) ink |= rows[r];
    EXPECT_NE(ink, 0) << "no glyph for " << static_cast<int>(c);
  }
  EXPECT_NE(GlyphRows(0x00B5), GlyphRows('?'));
  EXPECT_EQ(GlyphRows(0x00B5), GlyphRows(0x03BC));
  EXPECT_EQ(GlyphRows(0x4E2D), GlyphRows('?'));
}

TEST(Png, RoundTrips) {
  Canvas canvas(33, 17, Rgb{250, 250, 250});
  canvas.FillRect(3, 4, 10, 5, kRed);
  canvas.Text(2, 15, "p99 12ms", kBlack);
  Result<std::string> png = canvas.EncodePng();
  ASSERT_TRUE(png.ok()) << png.status().message();
  EXPECT_EQ(png->substr(1, 3), "PNG");
  Result<Canvas> back = DecodePng(*png);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->width(), 33);
  ASSERT_EQ(back->height(), 17);
  for (int y = 0; y < 17; ++y) {
    for (int x = 0; x < 33; ++x) ASSERT_EQ(back->At(x, y), canvas.At(x, y)) << x << "," << y;
  }
}

TEST(Png, RefusesWhatItCannotDo) {
  EXPECT_FALSE(Canvas(0, 10).EncodePng().ok());
  EXPECT_FALSE(DecodePng("not a png").ok());
  Result<std::string> png = Canvas(8, 8).EncodePng();
  ASSERT_TRUE(png.ok());
  EXPECT_FALSE(DecodePng(png->substr(0, png->size() / 2)).ok());  // truncated
}

}  // namespace
}  // namespace trailmap
