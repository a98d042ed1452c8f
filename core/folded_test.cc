#include "core/folded.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trailmap {
namespace {

TEST(FoldedTest, SplitsAtTheLastRunOfBlanks) {
  FoldedLine l = SplitFoldedLine("main;read file 12");
  EXPECT_EQ(l.stack, "main;read file");  // a frame may hold spaces
  EXPECT_EQ(l.count, "12");
  l = SplitFoldedLine(" \tmain;a \t 7 \r");
  EXPECT_EQ(l.stack, "main;a");
  EXPECT_EQ(l.count, "7");
  EXPECT_FALSE(l.blank());
  l = SplitFoldedLine("onlyoneword");
  EXPECT_EQ(l.stack, "");
  EXPECT_EQ(l.count, "onlyoneword");
  EXPECT_TRUE(SplitFoldedLine(" \t\r").blank());
  EXPECT_TRUE(SplitFoldedLine("").blank());
}

TEST(FoldedTest, WholeCountsAreDigitsThatFit) {
  uint64_t v = 1;
  EXPECT_TRUE(ParseFoldedWholeCount("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseFoldedWholeCount("9999999999999999999", &v));  // 19 digits fit
  EXPECT_EQ(v, 9999999999999999999ull);
  EXPECT_FALSE(ParseFoldedWholeCount("18446744073709551616", &v));  // 20 digits
  EXPECT_FALSE(ParseFoldedWholeCount("1.5", &v));
  EXPECT_FALSE(ParseFoldedWholeCount("-1", &v));
  EXPECT_FALSE(ParseFoldedWholeCount("", &v));
}

TEST(FoldedTest, CountsAsFlamegraphPlReadsThem) {
  double d = 0;
  EXPECT_TRUE(ParseFoldedCount("2.5", &d));
  EXPECT_EQ(d, 2.5);
  EXPECT_TRUE(ParseFoldedCount("3.", &d));
  EXPECT_EQ(d, 3.0);
  EXPECT_FALSE(ParseFoldedCount(".5", &d));
  EXPECT_FALSE(ParseFoldedCount("1e3", &d));
  EXPECT_FALSE(ParseFoldedCount("x", &d));
}

TEST(FoldedTest, LinesAreNumberedFromOne) {
  std::vector<std::string> seen;
  ForEachFoldedTextLine("a 1\n\nb 2", [&](std::string_view line, uint64_t n) {
    seen.push_back(std::to_string(n) + ":" + std::string(line));
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"1:a 1", "2:", "3:b 2"}));
}

}  // namespace
}  // namespace trailmap
