#include "query/draw/json_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

namespace trailmap {
namespace {

std::string Number(double v) {
  std::string out;
  AppendJsonNumber(v, &out);
  return out;
}

TEST(JsonText, NumbersAreWrittenAsNlohmannWritesThem) {
  for (double v : {0.0,
                   -0.0,
                   1.0,
                   -1.0,
                   0.5,
                   1.0 / 3,
                   2.0 / 3,
                   0.1,
                   0.0001,
                   0.00012345,
                   2e-05,
                   100000000.0,
                   123.456,
                   1e15,
                   1e16,
                   1e21,
                   123456789012345.0,
                   1234567890123456.0,
                   1e-300,
                   5e-324,
                   std::numeric_limits<double>::max(),
                   std::numeric_limits<double>::infinity(),
                   std::nan("")}) {
    EXPECT_EQ(Number(v), nlohmann::ordered_json(v).dump()) << v;
  }
  std::string out;
  AppendJsonNumber(uint64_t{18446744073709551615u}, &out);
  EXPECT_EQ(out, "18446744073709551615");
}

TEST(JsonText, EveryDoubleReadsBackAsItself) {
  // nlohmann's Grisu2 digits are not always the shortest or the closest (~0.1% of doubles: a
  // digit more, or another last digit): the text may differ there, never the value or to more
  // digits. Any other difference fails.
  std::mt19937_64 rng(7);
  int differ = 0;
  for (int i = 0; i < 200000; ++i) {
    double v;
    const uint64_t bits = rng();
    std::memcpy(&v, &bits, sizeof v);
    if (i % 2 == 1) v = std::ldexp(static_cast<double>(bits >> 11), -53);  // in [0, 1): shares
    if (!std::isfinite(v)) continue;
    const std::string ours = Number(v), theirs = nlohmann::ordered_json(v).dump();
    ASSERT_EQ(std::strtod(ours.c_str(), nullptr), v) << ours;
    if (ours != theirs) {
      ++differ;
      EXPECT_LE(ours.size(), theirs.size()) << ours << " vs " << theirs;
    }
  }
  EXPECT_LT(differ, 200000 / 200);
}

TEST(JsonText, AnObjectWrittenKeyByKeyIsTheDumpOfTheSameValues) {
  // One key a line, a matrix one row a line (query/draw/json_text.h).
  const std::string kPretty = R"({
  "view": "heatmap",
  "rows": 2,
  "row_bounds": [
    [0.0,0.5],
    [0.5,1.0]
  ],
  "counts": [
    [1,2,3],
    [4,5,6]
  ],
  "saturation": [
    [0.25,0.0,1.0],
    [2e-05,0.3333333333333333,0.5]
  ],
  "empty": []
}
)";
  nlohmann::ordered_json j;
  j["view"] = "heatmap";
  j["rows"] = 2;
  j["row_bounds"] = {{0.0, 0.5}, {0.5, 1.0}};
  j["counts"] = {{1, 2, 3}, {4, 5, 6}};
  j["saturation"] = {{0.25, 0.0, 1.0}, {2e-05, 1.0 / 3, 0.5}};
  j["empty"] = nlohmann::ordered_json::array();
  const std::vector<std::vector<uint64_t>> counts = {{1, 2, 3}, {4, 5, 6}};
  const std::vector<std::vector<double>> shares = {{0.25, 0.0, 1.0}, {2e-05, 1.0 / 3, 0.5}};
  for (bool pretty : {false, true}) {
    JsonObjectText text(pretty);
    text.Add("view", "heatmap");
    text.Add("rows", 2);
    text.Add("row_bounds", j["row_bounds"]);
    text.AddRows("counts", 2, 3, [&counts](size_t r, size_t c, std::string* out) {
      AppendJsonNumber(counts[r][c], out);
    });
    text.AddRows("saturation", 2, 3, [&shares](size_t r, size_t c, std::string* out) {
      AppendJsonNumber(shares[r][c], out);
    });
    text.AddRows("empty", 0, 3, [](size_t, size_t, std::string*) { FAIL(); });
    EXPECT_EQ(std::move(text).Finish(), pretty ? kPretty : j.dump() + "\n");
  }
  JsonObjectText none(true);
  EXPECT_EQ(std::move(none).Finish(), "{\n}\n");
}

}  // namespace
}  // namespace trailmap
