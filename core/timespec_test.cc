#include "core/timespec.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

constexpr int64_t kNow = 1'800'000'000;  // 2027-01-15T08:00:00Z

TEST(TimeSpec, AcceptedForms) {
  struct Case {
    const char* text;
    int64_t want;
  };
  const Case cases[] = {
      {"now", kNow},
      {"-10m", kNow - 600},
      {"-1h", kNow - 3600},
      {"-30s", kNow - 30},
      {"-2d", kNow - 2 * 86400},
      {"-1w", kNow - 7 * 86400},
      {"now-5m", kNow - 300},
      {"+5m", kNow + 300},
      {"1700000000", 1'700'000'000},
      {"0", 0},
      {"1970-01-01T00:00:00Z", 0},
      {"2023-11-14T22:13:20Z", 1'700'000'000},
      {"2023-11-14T23:13:20+01:00", 1'700'000'000},
      {"2023-11-14T17:43:20-04:30", 1'700'000'000},
      {"2023-11-14 22:13:20Z", 1'700'000'000},
      {"2023-11-14T22:13:20.999Z", 1'700'000'000},
      {"2026-11-22T16:00:00Z", 1'795'363'200},
      {"2024-02-29T00:00:00Z", 1'709'164'800},
      {"2023-11-14", 1'699'920'000},
  };
  for (const Case& c : cases) {
    Result<int64_t> r = ParseTimeSpec(c.text, kNow);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().ToString();
    EXPECT_EQ(*r, c.want) << c.text;
  }
}

TEST(TimeSpec, ErrorsListTheAcceptedForms) {
  const char* bad[] = {"",
                       "yesterday",
                       "-10",
                       "-10x",
                       "10m",
                       "2023-13-01T00:00:00Z",
                       "2023-02-29T00:00:00Z",
                       "2023-11-14T22:13:20",
                       "2023-11-14T25:00:00Z",
                       "2023-11-14T22:13:20Zjunk",
                       "1234567890123"};
  for (const char* text : bad) {
    Result<int64_t> r = ParseTimeSpec(text, kNow);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find("RFC 3339"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("-10m"), std::string::npos) << r.status().message();
  }
}

TEST(TimeSpec, FormatRoundTrips) {
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(1'700'000'000), "2023-11-14T22:13:20Z");
  EXPECT_EQ(FormatClock(1'700'000'000), "22:13:20");
  for (int64_t t = -86400 * 400; t < 86400LL * 365 * 200; t += 86400 * 37 + 3607) {
    Result<int64_t> back = ParseTimeSpec(FormatRfc3339(t), kNow);
    ASSERT_TRUE(back.ok()) << FormatRfc3339(t);
    EXPECT_EQ(*back, t);
  }
}

}  // namespace
}  // namespace trailmap
