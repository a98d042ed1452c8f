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
                         ::testing::Combine(::testing::Values("uniform", "lognormal", "bimodal",
                                                              "heavytail"),
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
    ab_c.Merge(b);
    ab_c.Merge(c);
    Histogram bc = b;
    bc.Merge(c);
    Histogram a_bc = a;
    a_bc.Merge(bc);
    Histogram cba = c;
    cba.Merge(b);
    cba.Merge(a);
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

// ---- counts past kMaxTotalCount saturate (the rule and its example in histogram.h) ----

// An encoding of `count` events of `value` (one bucket), as a store written before the bounds
// could hold: counts up to 2^64 - 1 decode.
std::string OneBucket(uint64_t value, uint64_t count) {
  std::string out("\x01\x01", 2);
  PutVarint(&out, value);
  PutVarint(&out, uint64_t{0});  // spread
  PutVarint(&out, uint64_t{0});  // excess
  PutVarint(&out, uint64_t{BucketIndex(value)});
  PutVarint(&out, count);
  return out;
}

TEST(HistogramSaturation, TheWorkedExample) {
  Histogram a, b;
  a.Record(10, uint64_t{1} << 61);
  a.Record(1000, uint64_t{1} << 61);
  b.Record(10, uint64_t{1} << 61);
  EXPECT_FALSE(a.saturated());
  Histogram through_encoding = a;
  a.Merge(b);
  ASSERT_TRUE(through_encoding.MergeEncoded(b.Encode()).ok());
  for (const Histogram* h : {&a, &through_encoding}) {
    EXPECT_TRUE(h->saturated());
    EXPECT_EQ(h->count(), kMaxTotalCount);
    EXPECT_EQ(h->BucketCount(10), 3074457345618258603u);
    EXPECT_EQ(h->BucketCount(BucketIndex(1000)), 1537228672809129301u);
    EXPECT_EQ(h->min(), 10u);
    EXPECT_EQ(h->max(), 1000u);
    EXPECT_NEAR(h->mean(), (2 * 10 + 1000) / 3.0, 1e-9);
    EXPECT_EQ(h->Percentile(50), 10u);
    EXPECT_EQ(h->Percentile(90), 1000u);
  }
  EXPECT_EQ(a, through_encoding);
  // The result decodes, and merging more into it stays at the bound.
  Result<Histogram> back = Histogram::Decode(a.Encode());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, a);
  EXPECT_FALSE(back->saturated());  // the flag is not encoded: a stored value is just a value
  back->Merge(b);
  EXPECT_EQ(back->count(), kMaxTotalCount);
  EXPECT_TRUE(Histogram::Validate(back->Encode()).ok());
}

TEST(HistogramSaturation, RecordAndOldEncodingsPastTheBoundSaturate) {
  Histogram h;
  h.Record(5, UINT64_MAX);
  EXPECT_TRUE(h.saturated());
  EXPECT_EQ(h.count(), kMaxTotalCount);
  EXPECT_EQ(h.sum(), static_cast<uint128_t>(kMaxTotalCount) * 5);
  h.Record(7, 3);
  EXPECT_EQ(h.count(), kMaxTotalCount);
  EXPECT_EQ(h.max(), 7u);
  EXPECT_GE(h.BucketCount(7), 1u);  // a bucket is never scaled away
  EXPECT_TRUE(Histogram::Validate(h.Encode()).ok());

  // 2^64 - 1 events in one encoding: valid, merged saturated, the target unchanged otherwise.
  const std::string old = OneBucket(300, UINT64_MAX);
  EXPECT_TRUE(Histogram::Validate(old).ok());
  Histogram target;
  target.Record(42, 10);
  ASSERT_TRUE(target.MergeEncoded(old).ok());
  EXPECT_TRUE(target.saturated());
  EXPECT_EQ(target.count(), kMaxTotalCount);
  EXPECT_EQ(target.min(), 42u);
  EXPECT_EQ(target.max(), 300u);
  EXPECT_EQ(target.BucketCount(42), 9u);  // cut to 2^62 alone, then 10 * 2^62 / (2^62 + 10)
  EXPECT_TRUE(Histogram::Validate(target.Encode()).ok());
  Result<Histogram> decoded = Histogram::Decode(old);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->count(), kMaxTotalCount);
  EXPECT_EQ(decoded->sum(), static_cast<uint128_t>(kMaxTotalCount) * 300);
}

// Found by fuzz/histogram_fuzz, whose property said every decoded encoding re-encodes to its own
// bytes. Not for one past kMaxTotalCount (a store written before the bounds): Decode saturates
// it, as the bounds say (docs/counts.md), so the bytes change; what it gives is canonical.
TEST(HistogramSaturation, AnEncodingPastTheBoundDecodesToACanonicalSaturatedOne) {
  const std::string old = OneBucket(1'000'000, uint64_t{105} << 56);  // 1.6 * 2^62 events
  EXPECT_EQ(Hex(old), "01 01 c0 84 3d 00 00 ba 07 80 80 80 80 80 80 80 80 69");
  Result<Histogram> h = Histogram::Decode(old);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_TRUE(h->saturated());
  EXPECT_EQ(h->count(), kMaxTotalCount);
  EXPECT_EQ(h->min(), 1'000'000u);
  EXPECT_EQ(h->max(), 1'000'000u);
  EXPECT_EQ(h->sum(), static_cast<uint128_t>(kMaxTotalCount) * 1'000'000);
  const std::string now = h->Encode();
  EXPECT_EQ(Hex(now), "01 01 c0 84 3d 00 00 ba 07 80 80 80 80 80 80 80 80 40");  // 2^62 events
  Result<Histogram> again = Histogram::Decode(now);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->saturated());
  EXPECT_EQ(*again, *h);
  EXPECT_EQ(again->Encode(), now);
}

// Three buckets of values 2, 3 and 5 holding counts that add up close to 2^64 (grammar in
// core/histogram.h), and `trailing` bytes after them (any makes the encoding corrupt).
std::string NearTwoToThe64(uint64_t count2, uint64_t count3, uint64_t count5,
                           std::string_view trailing = "") {
  std::string out("\x01\x03", 2);
  PutVarint(&out, uint64_t{2});  // min
  PutVarint(&out, uint64_t{3});  // spread: max 5
  // excess = sum - count * min = 1 * count3 + 3 * count5
  PutVarint(&out, static_cast<uint128_t>(count3) + 3 * static_cast<uint128_t>(count5));
  for (auto [gap, count] : {std::pair{2u, count2}, {0u, count3}, {1u, count5}}) {
    PutVarint(&out, uint64_t{gap});
    PutVarint(&out, count);
  }
  return out + std::string(trailing);
}

// Found by fuzz/histogram_fuzz: a merge refused for a corrupt encoding left a bucket behind.
// MergeEncoded adds buckets as it reads them and, on an error, walks the encoding again to take
// them back; that walk kept its running total and its bucket count in one variable, so near 2^64
// it stopped one bucket early ("total count past 2^64") and bucket 5's 2 events stayed.
TEST(HistogramSaturation, ARefusedMergeNearTwoToThe64ChangesNothing) {
  const std::string corrupt = NearTwoToThe64(UINT64_MAX - 32, 29, 2, std::string(1, '\0'));
  Status s = Histogram::Validate(corrupt);
  EXPECT_EQ(s.ToString(), "corruption: histogram: 1 trailing bytes");
  for (uint64_t held : {0, 7}) {
    Histogram h;
    h.Record(1000, held);
    const Histogram before = h;
    EXPECT_EQ(h.MergeEncoded(corrupt).ToString(), s.ToString());
    EXPECT_EQ(h, before) << held << " events before";
    EXPECT_EQ(h.BucketCount(5), 0u);
  }
}

// The same walk read a valid encoding of more than 2^62 events into the histogram it saturates:
// it stopped as early, so bucket 5 was missing there and left over in the target instead.
TEST(HistogramSaturation, AValidEncodingNearTwoToThe64SaturatesWithEveryBucket) {
  const std::string old = NearTwoToThe64(UINT64_MAX - 3, 1, 2);  // 2^64 - 1 events
  ASSERT_TRUE(Histogram::Validate(old).ok());
  Result<Histogram> h = Histogram::Decode(old);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->count(), kMaxTotalCount);
  // Scaled by 2^62 / (2^64 - 1): 2^62 - 1, 0 -> 1 and 0 -> 1 (a bucket is never scaled away),
  // and the extra 1 comes off the largest bucket.
  EXPECT_EQ(h->BucketCount(2), kMaxTotalCount - 2);
  EXPECT_EQ(h->BucketCount(3), 1u);
  EXPECT_EQ(h->BucketCount(5), 1u);
  EXPECT_EQ(h->min(), 2u);
  EXPECT_EQ(h->max(), 5u);
  Result<Histogram> again = Histogram::Decode(h->Encode());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *h);
}

TEST(HistogramSaturation, AnyMergeOfValidHistogramsDecodes) {
  std::mt19937_64 rng(2026);
  for (int round = 0; round < 100; ++round) {
    Histogram into;
    for (int part = 0; part < 4; ++part) {
      Histogram h;
      for (int i = 0; i < 1 + static_cast<int>(rng() % 40); ++i) {
        h.Record(rng() >> (rng() % 64), (rng() >> (rng() % 64)) | 1);
      }
      ASSERT_TRUE(Histogram::Validate(h.Encode()).ok());
      const uint64_t min = into.empty() ? h.min() : std::min(into.min(), h.min());
      const uint64_t max = std::max(into.max(), h.max());
      if (part % 2) {
        into.Merge(h);
      } else {
        ASSERT_TRUE(into.MergeEncoded(h.Encode()).ok());
      }
      ASSERT_LE(into.count(), kMaxTotalCount);
      ASSERT_EQ(into.min(), min);
      ASSERT_EQ(into.max(), max);
      Result<Histogram> back = Histogram::Decode(into.Encode());
      ASSERT_TRUE(back.ok()) << "round " << round << ": " << back.status().ToString();
      ASSERT_EQ(*back, into);
    }
  }
}

TEST(HistogramSaturation, AnItemHoldsOneToMaxItemCountEvents) {
  Histogram h;
  h.Record(1000, kMaxItemCount);
  EXPECT_TRUE(Histogram::ValidateItem(h.Encode()).ok());
  h.Record(1000);
  Status s = Histogram::ValidateItem(h.Encode());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("histogram of 1099511627777 events"), std::string::npos)
      << s.message();
  EXPECT_TRUE(Histogram::Validate(h.Encode()).ok());  // a valid value: only too big for an item
  s = Histogram::ValidateItem(Histogram().Encode());
  EXPECT_NE(s.message().find("empty histogram"), std::string::npos) << s.message();
  EXPECT_EQ(Histogram::ValidateItem(std::string("\x02", 1)).code(), Status::Code::kCorruption);
}

// What a value comparison keeps: the buckets whose midpoints lie in the band, each recorded at
// its midpoint, exactly as decoding the whole and filtering it does.
Histogram BandByDecoding(const std::string& encoded, uint64_t low, uint64_t high) {
  Histogram out;
  Result<Histogram> whole = Histogram::Decode(encoded);
  EXPECT_TRUE(whole.ok());
  whole->ForEachBucket([&out, low, high](uint32_t i, uint64_t count) {
    const uint64_t mid = BucketMidpoint(i);
    if (mid >= low && mid <= high) out.Record(mid, count);
  });
  return out;
}

TEST(Histogram, MergeEncodedBandKeepsWhatDecodingAndFilteringKeeps) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> latency(std::log(2e6), 1.5);
  int skipped = 0;
  for (int round = 0; round < 200; ++round) {
    Histogram h;
    const int n = 1 + static_cast<int>(rng() % (round % 2 == 0 ? 300 : 3));  // some narrow
    for (int i = 0; i < n; ++i) h.Record(static_cast<uint64_t>(latency(rng)), 1 + rng() % 3);
    const uint64_t low = static_cast<uint64_t>(latency(rng));
    const uint64_t high = round % 5 == 0 ? UINT64_MAX : low + static_cast<uint64_t>(latency(rng));
    Histogram band;
    band.Record(123'456);  // merged into what is there
    ASSERT_TRUE(band.MergeEncodedBand(h.Encode(), BucketBand::Of(low, high)).ok());
    Histogram expected = BandByDecoding(h.Encode(), low, high);
    expected.Record(123'456);
    EXPECT_EQ(band, expected) << "round " << round << " band " << low << ".." << high;
    Result<uint64_t> in_band = Histogram::EncodedBandCount(h.Encode(), BucketBand::Of(low, high));
    ASSERT_TRUE(in_band.ok());
    EXPECT_EQ(*in_band, expected.count() - 1) << "round " << round;
    // The header alone may say that nothing is in the band, and is never wrong when it does.
    Result<bool> touches = Histogram::EncodedTouches(h.Encode(), BucketBand::Of(low, high));
    ASSERT_TRUE(touches.ok());
    if (!*touches) {
      EXPECT_TRUE(expected.count() == 1) << "round " << round;
    }
    skipped += *touches ? 0 : 1;
  }
  EXPECT_GT(skipped, 10);  // the bands of this test leave some histograms wholly outside
  // Nothing in the band: nothing added.
  Histogram h;
  h.Record(1'000);
  Histogram band;
  ASSERT_TRUE(band.MergeEncodedBand(h.Encode(), BucketBand::Of(2'000, 3'000)).ok());
  EXPECT_TRUE(band.empty());
  EXPECT_FALSE(*Histogram::EncodedTouches(h.Encode(), BucketBand::Of(2'000, 3'000)));
  EXPECT_FALSE(*Histogram::EncodedTouches(h.Encode(), BucketBand::Of(3'000, 2'000)));
  EXPECT_FALSE(*Histogram::EncodedTouches(Histogram().Encode(), BucketBand::Of(0, UINT64_MAX)));
  // The band is the buckets whose midpoints are in it: every index, checked against midpoints.
  for (uint64_t low : std::vector<uint64_t>{0, 1, 127, 128, 1'000, 123'456'789, UINT64_MAX}) {
    for (uint64_t high : std::vector<uint64_t>{low, low + 1, low * 2 + 5, UINT64_MAX}) {
      if (high < low) continue;
      const BucketBand b = BucketBand::Of(low, high);
      for (uint32_t i = 0; i < kBucketCount; ++i) {
        const uint64_t mid = BucketMidpoint(i);
        ASSERT_EQ(b.Holds(i), mid >= low && mid <= high) << low << ".." << high << " bucket " << i;
      }
    }
  }
}

TEST(Histogram, MergeEncodedBandRefusesCorruptInputAndChangesNothing) {
  Histogram source;
  for (uint64_t v : {10u, 2'000u, 300'000u}) source.Record(v, 4);
  const std::string good = source.Encode();
  std::string trailing = good + "x";
  std::string truncated = good.substr(0, good.size() - 1);
  Histogram target;
  target.Record(42);
  const Histogram before = target;
  for (const std::string* bad : {&trailing, &truncated}) {
    Status s = target.MergeEncodedBand(*bad, BucketBand::Of(0, UINT64_MAX));
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.message();
    EXPECT_EQ(Histogram::EncodedBandCount(*bad, BucketBand::Of(0, 1)).status().code(),
              Status::Code::kCorruption);
    EXPECT_EQ(target, before);
  }
}

TEST(HistogramSaturation, MergeEncodedBandOfAnEncodingPastTheBoundSaturates) {
  const std::string old = OneBucket(300, UINT64_MAX);
  Histogram band;
  ASSERT_TRUE(band.MergeEncodedBand(old, BucketBand::Of(100, 1'000)).ok());
  EXPECT_EQ(band.count(), kMaxTotalCount);
  EXPECT_TRUE(band.saturated());
  EXPECT_EQ(band, BandByDecoding(old, 100, 1'000));
  EXPECT_EQ(*Histogram::EncodedBandCount(old, BucketBand::Of(100, 1'000)), kMaxTotalCount);
  EXPECT_EQ(*Histogram::EncodedBandCount(old, BucketBand::Of(1'000, 2'000)), 0u);
}

// A plain decoder, one varint at a time, written from the grammar in histogram.h: what the
// library's walk (which reads four one-byte buckets at once) must accept, refuse and build.
struct ReferenceDecode {
  bool ok = false;
  std::vector<std::pair<uint32_t, uint64_t>> buckets;
  uint64_t min = 0, max = 0, count = 0;
  uint128_t sum = 0;
};

ReferenceDecode DecodeByGrammar(std::string_view in) {
  ReferenceDecode r;
  size_t pos = 1;
  uint64_t n = 0, spread = 0;
  uint128_t excess = 0;
  if (in.empty() || in[0] != 1 || !GetVarint64(in, &pos, &n) || n > kBucketCount) return r;
  if (n == 0) {
    r.ok = pos == in.size();
    return r;
  }
  if (!GetVarint64(in, &pos, &r.min) || !GetVarint64(in, &pos, &spread) ||
      spread > UINT64_MAX - r.min || !GetVarint(in, &pos, &excess, 19)) {
    return r;
  }
  r.max = r.min + spread;
  uint64_t index = 0;
  for (uint64_t b = 0; b < n; ++b) {
    uint64_t gap = 0, count = 0;
    if (!GetVarint64(in, &pos, &gap) || !GetVarint64(in, &pos, &count)) return r;
    index = b == 0 ? gap : index + 1 + gap;
    if (gap >= kBucketCount || index >= kBucketCount || count == 0) return r;
    if (count > UINT64_MAX - r.count) return r;
    r.count += count;
    r.buckets.emplace_back(static_cast<uint32_t>(index), count);
  }
  if (pos != in.size() || BucketIndex(r.min) != r.buckets.front().first ||
      BucketIndex(r.max) != r.buckets.back().first ||
      excess > static_cast<uint128_t>(r.count) * (r.max - r.min)) {
    return r;
  }
  r.sum = static_cast<uint128_t>(r.count) * r.min + excess;
  r.ok = r.count <= kMaxTotalCount;  // past it, Decode saturates: not compared here
  return r;
}

TEST(Histogram, TheFourBucketWalkAgreesWithTheGrammarOnEveryByteChanged) {
  // Runs of neighbouring buckets with small counts (one-byte gaps and counts: the four-at-a-time
  // path), a count of 200 and a gap of 300 (two-byte varints), then every byte of the buckets
  // changed to each of a few values: 0 (a zero count or gap), 0x7f, 0x80 (a longer varint), 0xff.
  Histogram h;
  for (uint64_t v = 1'000; v < 1'400; v += 9) h.Record(v, 1 + v % 5);
  h.Record(1'500, 200);
  h.Record(900'000, 3);
  for (uint64_t v = 2'000'000; v < 2'600'000; v += 15'000) h.Record(v, 1 + v % 7);
  const std::string good = h.Encode();
  ASSERT_TRUE(DecodeByGrammar(good).ok);
  Histogram target;
  target.Record(42);
  const Histogram before = target;
  int refused = 0, accepted = 0;
  for (size_t at = 1; at < good.size(); ++at) {
    for (char value : {'\x00', '\x01', '\x7f', '\x80', '\xff'}) {
      std::string changed = good;
      changed[at] = value;
      const ReferenceDecode want = DecodeByGrammar(changed);
      Result<Histogram> got = Histogram::Decode(changed);
      if (!want.ok && !got.ok()) {
        ++refused;
        EXPECT_FALSE(Histogram::Validate(changed).ok());
        EXPECT_FALSE(Histogram::EncodedBandCount(changed, BucketBand::Of(0, UINT64_MAX)).ok());
        EXPECT_FALSE(target.MergeEncoded(changed).ok());
        EXPECT_EQ(target, before) << "byte " << at << " = " << int{value};
        continue;
      }
      ASSERT_EQ(want.ok, got.ok())
          << "byte " << at << " = " << int{value} << ": " << got.status().message();
      ++accepted;
      EXPECT_EQ(got->count(), want.count);
      EXPECT_EQ(got->min(), want.min);
      EXPECT_EQ(got->max(), want.max);
      EXPECT_TRUE(got->sum() == want.sum);
      EXPECT_EQ(got->BucketsUsed(), want.buckets.size());
      for (const auto& [index, count] : want.buckets) EXPECT_EQ(got->BucketCount(index), count);
      EXPECT_EQ(*Histogram::EncodedBandCount(changed, BucketBand::Of(0, UINT64_MAX)), want.count);
    }
  }
  EXPECT_GT(refused, 100);
  EXPECT_GT(accepted, 10);  // a changed count, or a gap moved within the first and last bucket
  // A zero count in the middle of a run is named by its bucket, as one bucket at a time named it.
  Histogram run;
  for (uint64_t v = 200; v < 240; v += 4) run.Record(v);  // buckets 164, 166, ...: gap 1, count 1
  std::string zero = run.Encode();
  const size_t sixth_count = zero.size() - 2 * (run.BucketsUsed() - 6) - 1;
  zero[sixth_count] = 0;
  Result<Histogram> r = Histogram::Decode(zero);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "histogram: bucket " + std::to_string(BucketIndex(220)) + " has count 0");
}

TEST(Histogram, EncodingIsSmallOnARealisticDistribution) {
  // One second of a busy disk: a cache-hit band, a disk band, a few outliers.
  std::mt19937_64 rng(7);
  Histogram h;
  for (uint64_t v : Sample("bimodal", 5000, rng)) h.Record(v);
  const double per_bucket =
      static_cast<double>(h.Encode().size()) / static_cast<double>(h.BucketsUsed());
  EXPECT_LE(per_bucket, 3.0) << h.BucketsUsed() << " buckets";
}

}  // namespace
}  // namespace trailmap
