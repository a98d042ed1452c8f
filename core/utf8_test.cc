#include "core/utf8.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(Utf8, WellFormedOnly) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5"));  // é € 🔥
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\x80"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // cut short
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_EQ(Utf8SequenceAt("a\xf0\x9f\x94\xa5", 1), 4u);
  EXPECT_EQ(Utf8SequenceAt("a\xf0\x9f\x94", 1), 0u);
}

TEST(Utf8, ValidUtf8ReplacesWhatIsNot) {
  EXPECT_EQ(ValidUtf8("caf\xc3\xa9 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xf0\x9f\x98\x80");
  EXPECT_EQ(ValidUtf8("a\xff"
                      "b"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(ValidUtf8("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");                  // overlong '/'
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
  EXPECT_EQ(ValidUtf8("\xf4\x90\x80\x80"),                                       // past U+10FFFF
            "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(ValidUtf8("ab\xe2\x82"), "ab\xef\xbf\xbd\xef\xbf\xbd");  // cut short
}

}  // namespace
}  // namespace trailmap
