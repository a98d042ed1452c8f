#include "core/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace trailmap {
namespace {

std::string Hex(const std::string& bytes) {
  std::string out;
  char buf[4];
  for (unsigned char c : bytes) {
    snprintf(buf, sizeof buf, "%02x ", c);
    out += buf;
  }
  if (!out.empty()) out.pop_back();
  return out;
}

TEST(BucketLayout, ExactBelow128) {
  for (uint64_t v = 0; v < 128; ++v) {
    EXPECT_EQ(BucketIndex(v), v);
    EXPECT_EQ(BucketLower(static_cast<uint32_t>(v)), v);
    EXPECT_EQ(BucketUpper(static_cast<uint32_t>(v)), v);
  }
}

TEST(BucketLayout, BoundsContainTheirValuesAndAreNarrow) {
  EXPECT_EQ(BucketIndex(128), 128u);
  EXPECT_EQ(BucketIndex(UINT64_MAX), kBucketCount - 1);
  EXPECT_EQ(BucketUpper(kBucketCount - 1), UINT64_MAX);
  for (uint32_t i = 0; i + 1 < kBucketCount; ++i) {
    ASSERT_EQ(BucketUpper(i) + 1, BucketLower(i + 1)) << i;  // contiguous, no gaps
    ASSERT_EQ(BucketIndex(BucketLower(i)), i);
    ASSERT_EQ(BucketIndex(BucketUpper(i)), i);
    // The midpoint is within 1/128 of every value in the bucket.
    const double lo = static_cast<double>(BucketLower(i));
    const double mid = static_cast<double>(BucketMidpoint(i));
    ASSERT_LE((mid - lo) / std::max(lo, 1.0), 1.0 / 128) << i;
  }
}

TEST(Histogram, KeepsExactCountSumMinMax) {
  Histogram h;
  EXPECT_TRUE(h.empty());
  h.Record(1000);
  h.Record(5, 3);
  h.Record(123456789);
  EXPECT_EQ(h.count(), 5u);
  EXPECT_EQ(static_cast<uint64_t>(h.sum()), 1000u + 15u + 123456789u);
  EXPECT_EQ(h.min(), 5u);
  EXPECT_EQ(h.max(), 123456789u);
  EXPECT_EQ(h.BucketsUsed(), 3u);
  EXPECT_EQ(h.Percentile(0), 5u);
  EXPECT_EQ(h.Percentile(50), 5u);
  EXPECT_EQ(h.Percentile(100), 123456789u);
}

TEST(Histogram, WorkedExampleFromTheHeader) {
  Histogram h;
  for (uint64_t v : {3, 3, 200, 1000}) h.Record(v);
  EXPECT_EQ(BucketIndex(200), 164u);
  EXPECT_EQ(BucketIndex(1000), 317u);
  EXPECT_EQ(Hex(h.Encode()), "01 03 03 e5 07 aa 09 03 02 a0 01 01 98 01 01");
  Result<Histogram> back = Histogram::Decode(h.Encode());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, h);
}

TEST(Histogram, EmptyEncodesToTwoBytes) {
  Histogram h;
  EXPECT_EQ(Hex(h.Encode()), "01 00");
  Result<Histogram> back = Histogram::Decode(h.Encode());
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->empty());
}

TEST(Histogram, DecodeRefusesCorruptInput) {
  Histogram h;
  for (uint64_t v : {3, 3, 200, 1000}) h.Record(v);
  const std::string good = h.Encode();
  struct Case {
    std::string bytes;
    std::string says;
  };
  std::string bad_version = good;
  bad_version[0] = 2;
  std::string zero_count = good;
  zero_count[8] = 0;  // count of bucket 3
  std::string truncated = good.substr(0, good.size() - 1);
  std::string trailing = good + '\x00';
  std::string wrong_min = good;
  wrong_min[2] = 4;  // min 4 is not in bucket 3
  std::string big_sum = good;
  big_sum[5] = '\xff';  // excess 16383, more than count * (max - min) = 3988
  big_sum[6] = '\x7f';
  const std::vector<Case> cases = {
      {"", "empty input"},
      {bad_version, "unknown version 2"},
      {zero_count, "count 0"},
      {truncated, "truncated"},
      {trailing, "trailing"},
      {wrong_min, "min is not in the first bucket"},
      {big_sum, "sum is larger"},
      {std::string("\x01\x01\x00\x00\x00\xff\xff\x01\x01", 9), "index past the layout"},
  };
  for (const Case& c : cases) {
    Result<Histogram> r = Histogram::Decode(c.bytes);
    ASSERT_FALSE(r.ok()) << Hex(c.bytes);
    EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
  }
  for (const Case& c : cases) EXPECT_FALSE(Histogram::Validate(c.bytes).ok()) << Hex(c.bytes);
  EXPECT_TRUE(Histogram::Validate(good).ok());
  // A failed MergeEncoded leaves the target untouched.
  Histogram target;
  target.Record(42);
  const Histogram before = target;
  // Failures found before, during and after the buckets are read: all leave it as it was.
  for (const std::string* bad : {&zero_count, &truncated, &trailing, &wrong_min, &big_sum}) {
    EXPECT_FALSE(target.MergeEncoded(*bad).ok()) << Hex(*bad);
    EXPECT_EQ(target, before) << Hex(*bad);
  }
  EXPECT_EQ(target.count(), 1u);
  EXPECT_EQ(target.BucketsUsed(), 1u);
}

// Random distributions of the kinds a latency metric has.
std::vector<uint64_t> Sample(const std::string& kind, size_t n, std::mt19937_64& rng) {
  std::vector<uint64_t> v(n);
  std::uniform_int_distribution<uint64_t> uniform(0, 10'000'000);
  std::lognormal_distribution<double> lognormal(std::log(200'000.0), 0.6);
  std::normal_distribution<double> fast(50'000, 8'000), slow(4'000'000, 700'000);
  std::bernoulli_distribution coin(0.3), outlier(0.001);
  std::exponential_distribution<double> tail(1.0 / 300'000);
  for (auto& x : v) {
    if (kind == "uniform") {
      x = uniform(rng);
    } else if (kind == "lognormal") {
      x = static_cast<uint64_t>(lognormal(rng));
    } else if (kind == "bimodal") {
      x = static_cast<uint64_t>(std::max(1.0, coin(rng) ? slow(rng) : fast(rng)));
    } else {  // heavy tail with outliers
      x = static_cast<uint64_t>(tail(rng)) + (outlier(rng) ? 2'000'000'000ull : 0);
    }
  }
  return v;
}

class HistogramProperty : public ::testing::TestWithParam<std::tuple<std::string, size_t>> {};

TEST_P(HistogramProperty, PercentilesWithinHalfABucket) {
  const auto& [kind, n] = GetParam();
  std::mt19937_64 rng(n * 7919 + kind.size());
  std::vector<uint64_t> values = Sample(kind, n, rng);
  Histogram h;
  for (uint64_t v : values) h.Record(v);
  std::sort(values.begin(), values.end());
  ASSERT_EQ(h.count(), n);
  EXPECT_EQ(h.min(), values.front());
  EXPECT_EQ(h.max(), values.back());
  for (double p : {0.0, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    const uint64_t rank = std::clamp<uint64_t>(static_cast<uint64_t>(std::ceil(p / 100 * n)), 1, n);
    const double exact = static_cast<double>(values[rank - 1]);
    const double got = static_cast<double>(h.Percentile(p));
    EXPECT_LE(std::abs(got - exact), 0.008 * exact) << kind << " n=" << n << " p" << p;
  }
  // Encode/decode round trip preserves everything.
  Result<Histogram> back = Histogram::Decode(h.Encode());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, h);
}

INSTANTIATE_TEST_SUITE_P(Distributions, HistogramProperty,
                         ::testing::Combine(::testing::Values("uniform", "lognormal", "bimodal", "heavytail"),
                                            ::testing::Values(1, 2, 10, 1000, 100'000, 1'000'000)));

TEST(Histogram, MergeIsAssociativeCommutativeAndConservesCounts) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 20; ++round) {
    Histogram a, b, c, all;
    for (auto* h : {&a, &b, &c}) {
      const auto values = Sample(round % 2 ? "bimodal" : "heavytail", 1 + rng() % 5000, rng);
      for (uint64_t v : values) {
        h->Record(v);
        all.Record(v);
      }
    }
    Histogram ab_c = a;
    ASSERT_TRUE(ab_c.Merge(b).ok());
    ASSERT_TRUE(ab_c.Merge(c).ok());
    Histogram bc = b;
    ASSERT_TRUE(bc.Merge(c).ok());
    Histogram a_bc = a;
    ASSERT_TRUE(a_bc.Merge(bc).ok());
    Histogram cba = c;
    ASSERT_TRUE(cba.Merge(b).ok());
    ASSERT_TRUE(cba.Merge(a).ok());
    // Through the encoding too, as the aggregator merges.
    Histogram enc;
    for (auto* h : {&c, &a, &b}) ASSERT_TRUE(enc.MergeEncoded(h->Encode()).ok());
    EXPECT_EQ(ab_c, a_bc);
    EXPECT_EQ(ab_c, cba);
    EXPECT_EQ(ab_c, all);
    EXPECT_EQ(enc, all);
    EXPECT_EQ(ab_c.count(), a.count() + b.count() + c.count());
  }
}

TEST(Histogram, MergeRefusesCountOverflow) {
  Histogram a, b;
  a.Record(1, UINT64_MAX - 1);
  b.Record(2, 2);
  EXPECT_EQ(a.Merge(b).code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(a.count(), UINT64_MAX - 1);
}

TEST(Histogram, EncodingIsSmallOnARealisticDistribution) {
  // One second of a busy disk: a cache-hit band, a disk band, a few outliers.
  std::mt19937_64 rng(7);
  Histogram h;
  for (uint64_t v : Sample("bimodal", 5000, rng)) h.Record(v);
  const double per_bucket = static_cast<double>(h.Encode().size()) / static_cast<double>(h.BucketsUsed());
  EXPECT_LE(per_bucket, 3.0) << h.BucketsUsed() << " buckets";
}

}  // namespace
}  // namespace trailmap
