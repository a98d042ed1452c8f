#include "aggregator/store/keys.h"

#include <gtest/gtest.h>

namespace trailmap::aggregator {
namespace {

TEST(KeysTest, DataKeyRoundTripsAndOrdersByMetricThenTimeThenHostThenSeries) {
  const DataKey k{7, -5, 3, 9};
  const std::string encoded = EncodeDataKey(k);
  ASSERT_EQ(encoded.size(), kDataKeySize);
  DataKey back;
  ASSERT_TRUE(DecodeDataKey(encoded, &back));
  EXPECT_EQ(back, k);
  EXPECT_EQ(encoded.substr(0, 12), DataKeyPrefix(7, -5));
  EXPECT_FALSE(DecodeDataKey(encoded.substr(1), &back));

  // Negative seconds sort before zero, which sorts before positive ones.
  EXPECT_LT(EncodeDataKey({7, -2, 9, 9}), EncodeDataKey({7, -1, 0, 0}));
  EXPECT_LT(EncodeDataKey({7, -1, 9, 9}), EncodeDataKey({7, 0, 0, 0}));
  EXPECT_LT(EncodeDataKey({7, 255, 9, 9}), EncodeDataKey({7, 256, 0, 0}));
  EXPECT_LT(EncodeDataKey({7, 1700000000, 1, 9}), EncodeDataKey({7, 1700000000, 2, 0}));
  EXPECT_LT(EncodeDataKey({7, 1700000000, 2, 8}), EncodeDataKey({7, 1700000000, 2, 9}));
  EXPECT_LT(EncodeDataKey({7, INT64_MAX, 9, 9}), EncodeDataKey({8, INT64_MIN, 0, 0}));
  // The sign bit is flipped: second 0 is 0x80 followed by seven zero bytes.
  EXPECT_EQ(DataKeyPrefix(1, 0), std::string("\0\0\0\1\x80\0\0\0\0\0\0\0", 12));
}

TEST(KeysTest, PendingRollupKeyRoundTripsAndBucketStartFloors) {
  const std::string k = PendingRollupKey(7, -120);
  ASSERT_EQ(k.size(), 13u);
  uint32_t metric = 0;
  int64_t minute = 0;
  ASSERT_TRUE(DecodePendingRollupKey(k, &metric, &minute));
  EXPECT_EQ(metric, 7u);
  EXPECT_EQ(minute, -120);
  EXPECT_LT(PendingRollupKey(7, -60), PendingRollupKey(7, 0));  // ordered like seconds
  EXPECT_FALSE(DecodePendingRollupKey(k.substr(1), &metric, &minute));
  EXPECT_FALSE(DecodePendingRollupKey("w" + k.substr(1), &metric, &minute));
  EXPECT_EQ(BucketStart(1'700'000'019, 10), 1'700'000'010);
  EXPECT_EQ(BucketStart(1'700'000'019, 60), 1'699'999'980);
  EXPECT_EQ(BucketStart(-1, 10), -10);
  // The block marker: the same layout under its own tag, so neither reads as the other.
  const std::string b = PendingBlockKey(7, 1'700'000'400);
  ASSERT_TRUE(DecodePendingBlockKey(b, &metric, &minute));
  EXPECT_EQ(minute, 1'700'000'400);
  EXPECT_EQ(b[0], 'b');
  EXPECT_FALSE(DecodePendingBlockKey(k, &metric, &minute));
  EXPECT_FALSE(DecodePendingRollupKey(b, &metric, &minute));
  EXPECT_EQ(BucketStart(1'700'000'999, 600), 1'700'000'400);
}

TEST(KeysTest, RecordsRoundTrip) {
  Result<MetricRecord> m =
      DecodeMetricRecord(EncodeMetricRecord({"disk.latency", MetricKind::kSize, "B"}));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name, "disk.latency");
  EXPECT_EQ(m->kind, MetricKind::kSize);
  EXPECT_EQ(m->unit, "B");
  EXPECT_FALSE(DecodeMetricRecord(std::string("\x09\x00name", 6)).ok());  // kind 9

  Result<HostRecord> h = DecodeHostRecord(EncodeHostRecord({"web-1", "role=web,zone=b"}));
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->name, "web-1");
  EXPECT_EQ(h->labels, "role=web,zone=b");
  EXPECT_FALSE(DecodeHostRecord("\x10short").ok());  // name length past the end

  Result<SeriesRecord> s = DecodeSeriesRecord(EncodeSeriesRecord({258, "op=read"}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->metric, 258u);
  EXPECT_EQ(s->fields, "op=read");

  EXPECT_EQ(*DecodeWatermark(EncodeWatermark(1ull << 40, 1'700'000'000)), 1ull << 40);
  EXPECT_EQ(DecodeWatermarkRecord(EncodeWatermark(7, 1'700'000'000))->last_seen, 1'700'000'000);
  EXPECT_EQ(DecodeWatermarkRecord(std::string("\0\0\0\0\0\0\0\x09", 8))->sequence, 9u);
  EXPECT_EQ(DecodeWatermarkRecord(std::string("\0\0\0\0\0\0\0\x09", 8))->last_seen, 0);
  EXPECT_FALSE(DecodeWatermark("1234").ok());
  EXPECT_EQ(*DecodeScalar(EncodeScalar(-2.5)), -2.5);
}

}  // namespace
}  // namespace trailmap::aggregator
