#include "query/draw/raster.h"

#include <gtest/gtest.h>

#include <algorithm>

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

TEST(Canvas, TextStandsOnTheBaselineAntiAliased) {
  // "H" at 12 px: full ink in its stems from the cap height down to the row above the baseline,
  // nothing below the baseline, and grey (anti-aliased) pixels somewhere.
  Canvas canvas(12, 16, kWhite);
  canvas.Text(1, 13, "H", kBlack);
  int ink_rows_below = 0, full = 0, grey = 0, top = 99, bottom = -1;
  for (int y = 0; y < canvas.height(); ++y) {
    for (int x = 0; x < canvas.width(); ++x) {
      const Rgb c = canvas.At(x, y);
      if (c == kWhite) continue;
      EXPECT_EQ(c.r, c.g);  // grey levels only: black ink over white paper
      top = std::min(top, y);
      bottom = std::max(bottom, y);
      if (y >= 13) ++ink_rows_below;
      (c.r < 32 ? full : grey) += 1;
    }
  }
  EXPECT_EQ(ink_rows_below, 0);
  EXPECT_EQ(bottom, 12);   // the last row of ink is the one above the baseline
  EXPECT_EQ(top, 13 - 9);  // DejaVu Sans' capitals are 9 px high at 12 px
  EXPECT_GE(full, 2 * 9);  // two stems of (nearly) full ink: hinted onto whole pixels
  EXPECT_GT(grey, 0);
  EXPECT_EQ(Canvas::TextWidth("Hi"), Canvas::TextWidth("H") + Canvas::TextWidth("i"));
  EXPECT_EQ(Canvas::TextWidth("H"), 9);
  EXPECT_EQ(Canvas::TextWidth("20µs"), Canvas::TextWidth("20") + Canvas::TextWidth("µ") +
                                           Canvas::TextWidth("s"));  // µ is one character
  EXPECT_GT(Canvas::TextWidth("ab", kTitleFont), Canvas::TextWidth("ab"));
}

TEST(Canvas, TextBlendsOverWhatIsUnder) {
  // Ink over a colored cell keeps the cell's color where the glyph is thin, never the paper's.
  Canvas canvas(20, 20, kWhite);
  canvas.FillRect(0, 0, 20, 20, kRed);
  canvas.Text(2, 15, "o", kBlack);
  for (int y = 0; y < 20; ++y) {
    for (int x = 0; x < 20; ++x) {
      const Rgb c = canvas.At(x, y);
      EXPECT_EQ(c.g, 0);
      EXPECT_LE(c.r, 200);
    }
  }
}

TEST(Canvas, TextAlignment) {
  const int w = Canvas::TextWidth("17");
  Canvas right(30, 14, kWhite);
  right.Text(25, 12, "17", kBlack, TextAlign::kRight);
  Canvas left(30, 14, kWhite);
  left.Text(25 - w, 12, "17", kBlack);
  EXPECT_EQ(Picture(right), Picture(left));
  Canvas center(30, 14, kWhite);
  center.Text(15, 12, "17", kBlack, TextAlign::kCenter);
  Canvas left2(30, 14, kWhite);
  left2.Text(15 - w / 2, 12, "17", kBlack);
  EXPECT_EQ(Picture(center), Picture(left2));
}

TEST(Canvas, TextPastTheRightEdgeEndsInDots) {
  // A canvas as wide as "abcdefg..." draws that for a longer text.
  const int width = Canvas::TextWidth("abcdefg...");
  ASSERT_GT(Canvas::TextWidth("abcdefgh..."), width);
  Canvas cut(width, 16, kWhite);
  cut.Text(0, 12, "abcdefghijklmnop", kBlack);
  Canvas drawn(width, 16, kWhite);
  drawn.Text(0, 12, "abcdefg...", kBlack);
  EXPECT_EQ(Picture(cut), Picture(drawn));
  // What fits exactly is drawn whole: as its two halves drawn apart.
  const int whole_width = Canvas::TextWidth("abcdefghij");
  Canvas whole(whole_width, 16, kWhite);
  whole.Text(0, 12, "abcdefghij", kBlack);
  Canvas halves(whole_width, 16, kWhite);
  halves.Text(0, 12, "abcde", kBlack);
  halves.Text(Canvas::TextWidth("abcde"), 12, "fghij", kBlack);
  EXPECT_EQ(Picture(whole), Picture(halves));
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
