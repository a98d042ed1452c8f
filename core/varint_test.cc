#include "core/varint.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(Varint, RoundTripsEdgeValues) {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{300},
                     uint64_t{1} << 56, uint64_t{1} << 63, UINT64_MAX}) {
    std::string bytes;
    PutVarint(&bytes, v);
    size_t pos = 0;
    uint64_t back = 0;
    ASSERT_TRUE(GetVarint64(bytes, &pos, &back)) << v;
    EXPECT_EQ(back, v);
    EXPECT_EQ(pos, bytes.size());
  }
  std::string b;
  PutVarint(&b, 300);
  EXPECT_EQ(b, "\xac\x02");
}

TEST(Varint, RefusesTruncatedOverlongAndPast64Bits) {
  size_t pos = 0;
  uint64_t v = 0;
  EXPECT_FALSE(GetVarint64(std::string("\x80\x80", 2), &pos, &v));  // truncated
  pos = 0;
  EXPECT_FALSE(GetVarint64(std::string(""), &pos, &v));
  pos = 0;
  EXPECT_FALSE(GetVarint64(std::string(10, '\xff') + '\x01', &pos, &v));  // 11 bytes
  pos = 0;
  EXPECT_FALSE(GetVarint64(std::string(9, '\xff') + '\x02', &pos, &v));  // 2^64
  std::string big;
  PutVarint(&big, static_cast<uint128_t>(UINT64_MAX) + 1);
  pos = 0;
  EXPECT_FALSE(GetVarint64(big, &pos, &v));
}

// fuzz/corpus/histogram/overlong_excess and fuzz/corpus/stacks/overlong_id: "80 80 80 80 00"
// (0 in five bytes) and "bf 00" (63 in two) decoded, so a histogram or a stacks value had more
// than one encoding. Only the shortest form reads now.
TEST(Varint, RefusesARedundantZeroByte) {
  size_t pos = 0;
  uint64_t v = 0;
  EXPECT_FALSE(GetVarint64(std::string("\x80\x80\x80\x80\x00", 5), &pos, &v));
  pos = 0;
  EXPECT_FALSE(GetVarint64(std::string("\xbf\x00", 2), &pos, &v));
  pos = 0;
  ASSERT_TRUE(GetVarint64(std::string("\x00", 1), &pos, &v));
  EXPECT_EQ(v, 0u);
  pos = 0;
  ASSERT_TRUE(GetVarint64(std::string("\x80\x01", 2), &pos, &v));
  EXPECT_EQ(v, 128u);
  // 19 bytes reach bit 133: bits past 128 are refused, not dropped.
  uint128_t w = 0;
  pos = 0;
  EXPECT_FALSE(GetVarint(std::string(18, '\xff') + '\x04', &pos, &w, 19));
  pos = 0;
  ASSERT_TRUE(GetVarint(std::string(18, '\xff') + '\x03', &pos, &w, 19));
  EXPECT_EQ(w, ~uint128_t{0});
}

}  // namespace
}  // namespace trailmap
