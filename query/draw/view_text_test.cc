#include "query/draw/view_text.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(ViewText, Ordinal) {
  EXPECT_EQ(Ordinal(1), "1st");
  EXPECT_EQ(Ordinal(2), "2nd");
  EXPECT_EQ(Ordinal(3), "3rd");
  EXPECT_EQ(Ordinal(4), "4th");
  EXPECT_EQ(Ordinal(11), "11th");
  EXPECT_EQ(Ordinal(12), "12th");
  EXPECT_EQ(Ordinal(13), "13th");
  EXPECT_EQ(Ordinal(21), "21st");
  EXPECT_EQ(Ordinal(112), "112th");
}

}  // namespace
}  // namespace trailmap
