#include "agent/otlp_histogram.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/histogram.h"

namespace trailmap {
namespace {

using ::testing::ElementsAre;

std::vector<PlacedValue> Place(OtlpBuckets b) {
  Result<std::vector<PlacedValue>> placed = PlaceOtlpBuckets(std::move(b));
  EXPECT_TRUE(placed.ok()) << placed.status().ToString();
  return placed.ok() ? *placed : std::vector<PlacedValue>{};
}

TEST(OtlpHistogramTest, CountsGoToTheLogMidpointOfTheirBucket) {
  EXPECT_THAT(Place({{{100, 400, 3}, {0, 0, 2}}}),
              ElementsAre(PlacedValue{0, 2}, PlacedValue{200, 3}));
  // From 0 the log midpoint is undefined: the middle.
  EXPECT_THAT(Place({{{0, 10, 1}}}), ElementsAre(PlacedValue{5, 1}));
}

TEST(OtlpHistogramTest, MinAndMaxAreRecordedExactlyAndClipTheBuckets) {
  // [10, 20] x2 and [100, 400] x2 with min 12 and max 350: 12 and 350 exactly; the others at
  // sqrt(12 * 20) = 15.49 and sqrt(100 * 350) = 187.08.
  OtlpBuckets b{{{10, 20, 2}, {100, 400, 2}}, 12, 350, std::nullopt};
  EXPECT_THAT(Place(b), ElementsAre(PlacedValue{12, 1}, PlacedValue{15, 1}, PlacedValue{187, 1},
                                    PlacedValue{350, 1}));
}

TEST(OtlpHistogramTest, EventsMoveWithinTheirBucketsUntilTheSumIsExact) {
  // Four events in [100, 200]: at 141 they add up to 564; the sum 700 puts them all at 175.
  EXPECT_THAT(Place({{{100, 200, 4}}, std::nullopt, std::nullopt, 700}),
              ElementsAre(PlacedValue{175, 4}));
  // 701: three at 175 and one at 176.
  EXPECT_THAT(Place({{{100, 200, 4}}, std::nullopt, std::nullopt, 701}),
              ElementsAre(PlacedValue{175, 3}, PlacedValue{176, 1}));
  // Downwards too, every bucket by the same fraction of its room: [100, 400] x1 at 200 and
  // [1000, 4000] x1 at 2000 must lose 1100 of their room 100 + 1000 (all of it).
  EXPECT_THAT(Place({{{100, 400, 1}, {1000, 4000, 1}}, std::nullopt, std::nullopt, 1100}),
              ElementsAre(PlacedValue{100, 1}, PlacedValue{1000, 1}));
  // A sum off by rounding (one per event) is taken as the nearest the buckets hold.
  EXPECT_THAT(Place({{{100, 200, 2}}, std::nullopt, std::nullopt, 401}),
              ElementsAre(PlacedValue{200, 2}));
}

TEST(OtlpHistogramTest, RefusesWhatTheBucketsCannotHold) {
  Result<std::vector<PlacedValue>> placed =
      PlaceOtlpBuckets({{{100, 200, 2}}, std::nullopt, std::nullopt, 1000});
  ASSERT_FALSE(placed.ok());
  EXPECT_EQ(placed.status().message(), "sum 1000 is outside what the buckets hold [200, 400]");
  placed = PlaceOtlpBuckets({{{100, 200, 2}}, 150, 120, std::nullopt});
  ASSERT_FALSE(placed.ok());
  EXPECT_EQ(placed.status().message(), "min 150 is above max 120");
  placed = PlaceOtlpBuckets({{{100, 200, 1}}, 120, 150, std::nullopt});
  ASSERT_FALSE(placed.ok());
  EXPECT_EQ(placed.status().message(), "one value, but min 120 and max 150 differ");
}

TEST(OtlpHistogramTest, BucketBoundsAndRanges) {
  double lo = 0, hi = 0;
  ExponentialBucketBounds(0, 0, &lo, &hi);
  EXPECT_EQ(lo, 1);
  EXPECT_EQ(hi, 2);
  ExponentialBucketBounds(-1, 1, &lo, &hi);  // base 4
  EXPECT_EQ(lo, 4);
  EXPECT_EQ(hi, 16);
  ExponentialBucketBounds(3, -8, &lo, &hi);  // base 2^(1/8): (1/2, 2^(-7/8)]
  EXPECT_EQ(lo, 0.5);
  EXPECT_DOUBLE_EQ(hi, std::exp2(-7.0 / 8));
  OtlpBucket b;
  ASSERT_TRUE(OtlpBucketRange(0.5, 1.5, 1e6, &b));  // ms -> ns
  EXPECT_EQ(b.lower, 500000u);
  EXPECT_EQ(b.upper, 1500000u);
  EXPECT_FALSE(OtlpBucketRange(1, 2e10, 1e9, &b));  // past 2^64 ns
  EXPECT_FALSE(OtlpBucketRange(-1, 2, 1, &b));
  uint128_t v = 0;
  ASSERT_TRUE(OtlpBaseUnits(0.0123, 1e9, &v));
  EXPECT_EQ(static_cast<uint64_t>(v), 12300000u);
  EXPECT_FALSE(OtlpBaseUnits(std::nan(""), 1, &v));
}

// The stated bound, on random data: count, sum, min and max exact; every percentile trailmap
// reports lies in the source bucket of the true one, widened by trailmap's 1/128.
TEST(OtlpHistogramTest, PercentilesStayWithinTheSourceBucketOfTheTrueOne) {
  std::mt19937_64 random(13);
  for (int round = 0; round < 200; ++round) {
    const int scale = static_cast<int>(random() % 6);  // base 2 .. 2^(1/32)
    std::lognormal_distribution<double> value(12, 1.5);
    std::vector<uint64_t> values(1 + random() % 300);
    for (uint64_t& v : values) v = 1 + static_cast<uint64_t>(value(random));
    std::sort(values.begin(), values.end());
    // Bucket each value as an exponential histogram of `scale` does: index ceil(log_b(v)) - 1.
    std::map<int64_t, uint64_t> counts;
    const auto index_of = [scale](uint64_t v) {
      int64_t i =
          static_cast<int64_t>(std::ceil(std::log2(static_cast<double>(v)) * (1 << scale))) - 1;
      double lo = 0, hi = 0;
      while (ExponentialBucketBounds(scale, i, &lo, &hi), hi < static_cast<double>(v)) ++i;
      while (ExponentialBucketBounds(scale, i, &lo, &hi), lo >= static_cast<double>(v)) --i;
      return i;
    };
    OtlpBuckets b;
    uint128_t sum = 0;
    for (const uint64_t v : values) ++counts[index_of(v)], sum += v;
    for (const auto& [i, c] : counts) {
      double lo = 0, hi = 0;
      ExponentialBucketBounds(scale, i, &lo, &hi);
      OtlpBucket bucket;
      ASSERT_TRUE(OtlpBucketRange(lo, hi, 1, &bucket));
      bucket.count = c;
      b.buckets.push_back(bucket);
    }
    b.min = values.front();
    b.max = values.back();
    b.sum = sum;
    const std::vector<OtlpBucket> source = b.buckets;
    Histogram h;
    for (const PlacedValue& p : Place(b)) h.Record(p.value, p.count);
    ASSERT_EQ(h.count(), values.size());
    ASSERT_TRUE(h.sum() == sum) << "round " << round;
    ASSERT_EQ(h.min(), values.front());
    ASSERT_EQ(h.max(), values.back());
    for (const double p : {50.0, 90.0, 99.0}) {
      const size_t rank =
          static_cast<size_t>(std::ceil(p / 100 * static_cast<double>(values.size())));
      const uint64_t truth = values[std::max<size_t>(rank, 1) - 1];
      const auto in = std::find_if(source.begin(), source.end(), [truth](const OtlpBucket& s) {
        return truth >= s.lower && truth <= s.upper;
      });
      ASSERT_NE(in, source.end());
      const double reported = static_cast<double>(h.Percentile(p));
      EXPECT_GE(reported, std::max<double>(in->lower, values.front()) * (1 - 1.0 / 128) - 1)
          << "p" << p << " round " << round;
      EXPECT_LE(reported, std::min<double>(in->upper, values.back()) * (1 + 1.0 / 128) + 1)
          << "p" << p << " round " << round;
    }
  }
}

}  // namespace
}  // namespace trailmap
