#include "core/batch.h"

#include <gtest/gtest.h>

#include "core/histogram.h"

namespace trailmap {
namespace {

Batch Sample() {
  Batch b;
  b.agent = "web-1/abc";
  b.sequence = 7;
  b.host = "web-1";
  b.labels = {{"role", "web"}};
  b.series = {{"disk.latency", MetricKind::kLatency, "ns", "op=read"}};
  Histogram h;
  h.Record(1500);
  h.Record(20'000, 3);
  b.seconds.push_back({1'700'000'000, {{0, h.Encode()}}, {}});
  return b;
}

TEST(Batch, RoundTrips) {
  const Batch b = Sample();
  Result<Batch> back = DecodeBatch(EncodeBatch(b));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->agent, "web-1/abc");
  EXPECT_EQ(back->sequence, 7u);
  EXPECT_EQ(back->labels, b.labels);
  EXPECT_EQ(back->series, b.series);
  ASSERT_EQ(back->seconds.size(), 1u);
  EXPECT_EQ(back->seconds[0].time, 1'700'000'000);
  EXPECT_EQ(Histogram::Decode(back->seconds[0].histograms[0].encoded)->count(), 4u);
}

TEST(Batch, RejectsWithAReasonThatSaysWhere) {
  struct Case {
    void (*spoil)(Batch*);
    std::string says;
  };
  const std::vector<Case> cases = {
      {[](Batch* b) { b->host = ""; }, "host is empty"},
      {[](Batch* b) { b->sequence = 0; }, "sequence 0"},
      {[](Batch* b) { b->series[0].metric = "disk latency"; }, "series 0 (disk latency)"},
      {[](Batch* b) { b->series[0].fields = "url=/,op=read"; }, "not canonical"},
      {[](Batch* b) { b->seconds[0].histograms[0].series = 3; }, "histogram 0: series index 3"},
      {[](Batch* b) { b->seconds[0].histograms[0].encoded[1] = 9; }, "second 0 (1700000000), histogram 0: histogram:"},
      {[](Batch* b) { b->seconds[0].time = -5; }, "outside 1970..2100"},
      {[](Batch* b) { b->series[0].kind = MetricKind::kScalar; }, "not a distribution"},
  };
  for (const Case& c : cases) {
    Batch b = Sample();
    c.spoil(&b);
    std::string agent;
    uint64_t sequence = 0;
    Result<Batch> r = DecodeBatch(EncodeBatch(b), {}, &agent, &sequence);
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
    EXPECT_EQ(agent, "web-1/abc");
    EXPECT_EQ(sequence, b.sequence);
  }
}

TEST(Batch, GarbageIsRefusedNotCrashedOn) {
  EXPECT_FALSE(DecodeBatch("hello").ok());
  EXPECT_FALSE(DecodeBatch(std::string(64, '\xff')).ok());
  std::string bytes = EncodeBatch(Sample());
  for (size_t i = 0; i < bytes.size(); i += 3) {  // flip bytes one at a time: never a crash
    std::string spoiled = bytes;
    spoiled[i] = static_cast<char>(spoiled[i] ^ 0x5a);
    (void)DecodeBatch(spoiled);
  }
  EXPECT_NE(DecodeBatch(std::string(16, '\0')).status().message().find("not a valid Cap'n Proto"), std::string::npos);
  std::string empty_root(16, '\0');  // one segment of one word: a null root struct
  empty_root[4] = 1;
  EXPECT_NE(DecodeBatch(empty_root).status().message().find("agent id is empty"), std::string::npos);
}

TEST(Ack, RoundTrips) {
  Ack a{12, Ack::Status::kOutOfOrder, "expected 10", 10};
  Result<Ack> back = DecodeAck(EncodeAck(a));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->sequence, 12u);
  EXPECT_EQ(back->status, Ack::Status::kOutOfOrder);
  EXPECT_EQ(back->reason, "expected 10");
  EXPECT_EQ(back->expected, 10u);
}

}  // namespace
}  // namespace trailmap
