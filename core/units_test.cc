#include "core/units.h"

#include <gtest/gtest.h>

#include <string>

namespace trailmap {
namespace {

struct ParseCase {
  const char* text;
  const char* unit;  // ParseQuantity's base unit
  uint64_t want;
};

TEST(Units, ParseQuantityTable) {
  const ParseCase cases[] = {
      {"10ms", "ns", 10'000'000},
      {"1.5s", "ns", 1'500'000'000},
      {"250us", "ns", 250'000},
      {"250µs", "ns", 250'000},
      {"250μs", "ns", 250'000},
      {"850ns", "ns", 850},
      {"2m", "ns", 120'000'000'000},
      {"1h", "ns", 3'600'000'000'000},
      {"1500", "ns", 1500},
      {" 3ms ", "ns", 3'000'000},
      {"0.5ns", "ns", 1},
      {"4KiB", "B", 4096},
      {"1.5MiB", "B", 1'572'864},
      {"2KB", "B", 2000},
      {"100", "bytes", 100},
      {"1GiB", "B", 1u << 30},
      {"7", "", 7},
  };
  for (const ParseCase& c : cases) {
    Result<uint64_t> r = ParseQuantity(c.text, c.unit);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().ToString();
    EXPECT_EQ(*r, c.want) << c.text;
  }
}

TEST(Units, ParseErrorsSayWhatIsAccepted) {
  const char* bad[] = {"", "ms", "10 parsecs", "-5ms", "1e3ms", "10K", "1.2.3s"};
  for (const char* text : bad) {
    Result<uint64_t> r = ParseQuantity(text, "ns");
    EXPECT_FALSE(r.ok()) << text;
  }
  Result<uint64_t> r = ParseDuration("10");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("ms"), std::string::npos) << r.status().message();
  r = ParseSize("10K");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("KiB"), std::string::npos) << r.status().message();
  EXPECT_FALSE(ParseQuantity("4KiB", "ns").ok());
  EXPECT_FALSE(ParseQuantity("4ms", "B").ok());
}

TEST(Units, NanosPerUnit) {
  EXPECT_EQ(*NanosPerUnit("s"), 1'000'000'000u);
  EXPECT_EQ(*NanosPerUnit("ms"), 1'000'000u);
  EXPECT_EQ(*NanosPerUnit("us"), 1'000u);
  EXPECT_EQ(*NanosPerUnit("ns"), 1u);
  EXPECT_FALSE(NanosPerUnit("h").ok());
  EXPECT_FALSE(NanosPerUnit("sec").ok());
}

TEST(Units, ParsePercent) {
  EXPECT_DOUBLE_EQ(*ParsePercent("0.1%"), 0.1);
  EXPECT_DOUBLE_EQ(*ParsePercent("5"), 5);
  EXPECT_FALSE(ParsePercent("101%").ok());
  EXPECT_FALSE(ParsePercent("x%").ok());
}

TEST(Units, FormatTable) {
  struct Case {
    double value;
    const char* unit;
    const char* want;
  };
  const Case cases[] = {
      {0, "ns", "0"},
      {850, "ns", "850ns"},
      {12'500, "ns", "12.5µs"},
      {3'200'000, "ns", "3.2ms"},
      {1'250'000'000, "ns", "1.25s"},
      {999'999, "ns", "1ms"},
      {1'000, "ns", "1µs"},
      {20'000'000, "ns", "20ms"},
      {123'456'789, "ns", "123ms"},
      {90e9, "ns", "90s"},
      {1.5, "ns", "1.5ns"},
      {512, "B", "512B"},
      {4096, "B", "4KiB"},
      {1'572'864, "bytes", "1.5MiB"},
      {3.14159, "", "3.14"},
      {17, "1", "17"},
      {17500, "0.0011", "17.5"},
      {42, "req/s", "42req/s"},
      {5000, "0.01%", "50%"},
      {1, "0.01%", "0.01%"},
      {12'345, "0.01%", "123%"},
      {1500, "0.001", "1.5"},
      {1500, "0.001req/s", "1.5req/s"},
      {1'572'864, "B/s", "1.5MiB/s"},
      {0, "B/s", "0"},
      {37.5, "%", "37.5%"},
  };
  for (const Case& c : cases) EXPECT_EQ(FormatQuantity(c.value, c.unit), c.want) << c.value;
}

// Scalars are held in histograms as fixed-point integers; the unit says the step.
TEST(Units, FixedPointUnitsForScalars) {
  EXPECT_EQ(ScalarStep("%"), 0.01);
  EXPECT_EQ(ScalarStep("B"), 1);
  EXPECT_EQ(ScalarStep("B/s"), 1);
  EXPECT_EQ(ScalarStep("ns"), 1);
  EXPECT_EQ(ScalarStep("pkts/s"), 0.001);
  EXPECT_EQ(FixedPointUnit("%"), "0.01%");
  EXPECT_EQ(FixedPointUnit("B/s"), "B/s");
  EXPECT_EQ(FixedPointUnit(""), "0.001");
  EXPECT_EQ(SplitFixedPointUnit("0.01%").first, 0.01);
  EXPECT_EQ(SplitFixedPointUnit("0.01%").second, "%");
  EXPECT_EQ(SplitFixedPointUnit("0.001pkts/s").second, "pkts/s");
  EXPECT_EQ(SplitFixedPointUnit("ms").first, 1);

  EXPECT_EQ(*ParseQuantity("50%", "0.01%"), 5000u);
  EXPECT_EQ(*ParseQuantity("12.34", "0.01%"), 1234u);
  EXPECT_EQ(*ParseQuantity(" 1.5 ", "0.001"), 1500u);
  EXPECT_EQ(*ParseQuantity("2pkts/s", "0.001pkts/s"), 2000u);
  EXPECT_EQ(*ParseQuantity("1.5MiB/s", "B/s"), 1'572'864u);
  EXPECT_EQ(*ParseQuantity("4KiB", "B/s"), 4096u);
  const Result<uint64_t> bad = ParseQuantity("50ms", "0.01%");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "\"50ms\" is not a number in %, e.g. 12.5%");
}

TEST(Units, FormatSignificantRoundsAcrossADecade) {
  EXPECT_EQ(FormatSignificant(9.999), "10");
  EXPECT_EQ(FormatSignificant(99.99), "100");
  EXPECT_EQ(FormatSignificant(0.126), "0.13");
  EXPECT_EQ(FormatSignificant(1234), "1234");
}

TEST(Units, NiceStepsAreRound) {
  EXPECT_DOUBLE_EQ(NiceStep(0.3), 0.5);
  EXPECT_DOUBLE_EQ(NiceStep(7), 10);
  EXPECT_DOUBLE_EQ(NiceStep(0), 1);
}

TEST(Units, ByteUnitsStepInPowersOfTwo) {
  EXPECT_EQ(NiceStep(954e6, "B"), 1024.0 * 1024 * 1024);  // not 1e9, which reads 954MiB
  EXPECT_EQ(NiceStep(3000, "B/s"), 4096);
  EXPECT_EQ(NiceStep(700, "B"), 1024);
  EXPECT_EQ(NiceStep(954e6, "ns"), 1e9);  // time stays decimal
  EXPECT_EQ(NiceStep(18, "%"), 20);
  EXPECT_EQ(NiceTop(8.1 * 1073741824.0, "B"), 10 * 1073741824.0);
  EXPECT_EQ(NiceTop(8.1e6, "ns"), 1e7);
}

}  // namespace
}  // namespace trailmap
