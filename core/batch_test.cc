#include "core/batch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <capnp/any.h>
#include <capnp/message.h>

#include "core/capnp_bytes.h"
#include "core/counts.h"
#include "core/histogram.h"
#include "schemas/ingest.capnp.h"

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
      {[](Batch* b) { b->seconds[0].histograms[0].encoded[1] = 9; },
       "second 0 (1700000000), histogram 0: histogram:"},
      {[](Batch* b) { b->seconds[0].time = -5; }, "outside 1970..2100"},
      {[](Batch* b) { b->series[0].kind = MetricKind::kScalar; }, "not a distribution"},
      {[](Batch* b) { b->seconds[0].histograms[0].encoded = Histogram().Encode(); },
       "histogram 0: empty histogram"},
      {[](Batch* b) {
         Histogram h;
         h.Record(5, kMaxItemCount + 1);
         b->seconds[0].histograms[0].encoded = h.Encode();
       },
       "histogram 0: histogram of 1099511627777 events: one item holds at most 1099511627776"},
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
  EXPECT_NE(DecodeBatch(std::string(16, '\0')).status().message().find("not a valid Cap'n Proto"),
            std::string::npos);
  std::string empty_root(16, '\0');  // one segment of one word: a null root struct
  empty_root[4] = 1;
  EXPECT_NE(DecodeBatch(empty_root).status().message().find("agent id is empty"),
            std::string::npos);
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

namespace trailmap {
namespace {

Batch StackSampleBatch() {
  Batch b;
  b.agent = "web-1/abc";
  b.sequence = 3;
  b.host = "web-1";
  b.series = {{"cpu.stacks", MetricKind::kStacks, "samples", "execname=nginx"}};
  b.frames = {{1, "main"}, {2, "foo"}, {3, "do_syscall_64_[k]"}};
  b.stacks = {{1, {1, 2}}, {2, {1, 2, 3}}};
  b.seconds.push_back({1'700'000'000, {}, {}, {{0, 1, 5}, {0, 2, 1}}});
  b.seconds.push_back({1'700'000'001, {}, {}, {{0, 7, 2}}});  // id 7 defined in an earlier batch
  return b;
}

TEST(BatchStacks, RoundTrips) {
  const Batch b = StackSampleBatch();
  Result<Batch> back = DecodeBatch(EncodeBatch(b));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->frames, b.frames);
  EXPECT_EQ(back->stacks, b.stacks);
  ASSERT_EQ(back->seconds.size(), 2u);
  EXPECT_EQ(back->seconds[0].stacks, b.seconds[0].stacks);
  EXPECT_EQ(back->seconds[1].stacks, (std::vector<StackCount>{{0, 7, 2}}));
}

TEST(BatchStacks, RejectsWithAReasonThatSaysWhere) {
  struct Case {
    void (*spoil)(Batch*);
    std::string says;
  };
  const std::vector<Case> cases = {
      {[](Batch* b) { b->frames[1].name = "a;b"; }, "frame 1 (id 2): name has a ';'"},
      {[](Batch* b) { b->frames[2].name = ""; }, "frame 2 (id 3): name is empty"},
      {[](Batch* b) { b->frames[0].name = std::string(513, 'x'); },
       "frame 0 (id 1): name is 513 bytes, at most 512"},
      {[](Batch* b) { b->frames[0].name = "a\nb"; },
       "frame 0 (id 1): name has a control character"},
      // Both definitions of an id are refused (which was meant cannot be known): the first named.
      {[](Batch* b) { b->frames[1].id = 1; }, "frame 0 (id 1): id defined twice"},
      {[](Batch* b) { b->stacks[1].id = 1; }, "stack 0 (id 1): id defined twice"},
      {[](Batch* b) { b->stacks[0].frames.clear(); }, "stack 0 (id 1): no frames"},
      {[](Batch* b) { b->stacks[0].frames.assign(1001, 1); },
       "stack 0 (id 1): 1001 frames, at most 1000"},
      {[](Batch* b) { b->seconds[1].stacks[0].count = 0; },
       "second 1 (1700000001), stack count 0: count 0"},
      {[](Batch* b) { b->seconds[1].stacks[0].count = kMaxItemCount + 1; },
       "stack count 0: count 1099511627777, at most 2^40"},
      {[](Batch* b) { b->seconds[0].stacks[1].series = 4; },
       "second 0 (1700000000), stack count 1: series index 4"},
      {[](Batch* b) { b->series[0].kind = MetricKind::kLatency; }, "is not of kind stacks"},
  };
  for (const Case& c : cases) {
    Batch b = StackSampleBatch();
    c.spoil(&b);
    Result<Batch> r = DecodeBatch(EncodeBatch(b));
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
  }
  BatchLimits tight;
  tight.max_stack_counts = 2;
  EXPECT_NE(DecodeBatch(EncodeBatch(StackSampleBatch()), tight)
                .status()
                .message()
                .find("more than 2 stack counts"),
            std::string::npos);
}

// A bad definition is refused alone, with every stack that uses it and every count of those
// stacks; the rest of the batch, stacks included, applies.
TEST(BatchStacks, ABadDefinitionTakesOnlyTheStacksUsingIt) {
  Batch b = StackSampleBatch();
  b.frames[2].name = "a;b";  // frame 3, used by stack 2 only
  b.series.push_back({"disk.latency", MetricKind::kLatency, "ns", ""});
  Histogram h;
  h.Record(1000, 4);
  b.seconds[0].histograms.push_back({1, h.Encode()});
  Refusals refused;
  Result<Batch> r = DecodeBatch(EncodeBatch(b), {}, nullptr, nullptr, &refused);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(refused.total, 3u);
  EXPECT_EQ(refused.named[0],
            (RefusedItem{RefusedItem::Kind::kFrameDef, 0, 2, "frame 2 (id 3): name has a ';'"}));
  EXPECT_EQ(refused.named[1], (RefusedItem{RefusedItem::Kind::kStackDef, 0, 1,
                                           "stack 1 (id 2): frame id 3 was refused"}));
  EXPECT_EQ(refused.named[2],
            (RefusedItem{
                RefusedItem::Kind::kStackCount, 0, 1,
                "second 0 (1700000000), stack count 1: stack id 2: its definition was refused"}));
  EXPECT_EQ(r->frames, (std::vector<FrameDef>{{1, "main"}, {2, "foo"}}));
  EXPECT_EQ(r->stacks, (std::vector<StackDef>{{1, {1, 2}}}));
  EXPECT_EQ(r->seconds[0].stacks, (std::vector<StackCount>{{0, 1, 5}}));
  EXPECT_EQ(r->seconds[0].histograms.size(), 1u);
  EXPECT_EQ(r->seconds[1].stacks, (std::vector<StackCount>{{0, 7, 2}}));
  // The ack names them by kind.
  Result<Ack> ack = DecodeAck(EncodeAck(Ack{3, Ack::Status::kApplied, "", 4, refused}));
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  EXPECT_EQ(ack->refused.named, refused.named);
  EXPECT_STREQ(RefusedKindName(RefusedItem::Kind::kStackDef), "stack definition");
}

TEST(BatchStacks, NeedDictionaryAckRoundTrips) {
  Result<Ack> back =
      DecodeAck(EncodeAck(Ack{9, Ack::Status::kNeedDictionary, "stack 4 unknown", 9}));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->status, Ack::Status::kNeedDictionary);
  EXPECT_EQ(back->expected, 9u);
  EXPECT_STREQ(AckStatusName(back->status), "need dictionary");
}

TEST(BatchAck, PeekBatchEnvelopeReadsOnlyTheAgentAndSequence) {
  Batch b;
  b.agent = "web-1/x";
  b.sequence = 77;
  b.host = "web-1";
  std::string agent;
  uint64_t sequence = 0;
  ASSERT_TRUE(PeekBatchEnvelope(EncodeBatch(b), 256, &agent, &sequence));
  EXPECT_EQ(agent, "web-1/x");
  EXPECT_EQ(sequence, 77u);
  EXPECT_FALSE(PeekBatchEnvelope(EncodeBatch(b), 6, &agent, &sequence));  // id too long
  EXPECT_FALSE(PeekBatchEnvelope("not a batch", 256, &agent, &sequence));
  EXPECT_FALSE(PeekBatchEnvelope(std::string(16, '\xff'), 256, &agent, &sequence));
}

TEST(BatchAck, RetryLaterRoundTripsWithItsWait) {
  Ack ack{12, Ack::Status::kRetryLater, "rate-limited: 50 batches/s", 0};
  ack.retry_after_ms = 340;
  Result<Ack> back = DecodeAck(EncodeAck(ack));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->status, Ack::Status::kRetryLater);
  EXPECT_EQ(back->sequence, 12u);
  EXPECT_EQ(back->retry_after_ms, 340u);
  EXPECT_EQ(back->reason, "rate-limited: 50 batches/s");
  EXPECT_STREQ(AckStatusName(back->status), "retry later");
}

}  // namespace
}  // namespace trailmap

namespace trailmap {
namespace {

// A batch with two series and, in each of two seconds, a histogram, a scalar and a stack count
// per series kind.
Batch Mixed() {
  Batch b;
  b.agent = "web-1/abc";
  b.sequence = 4;
  b.host = "web-1";
  b.series = {{"disk.latency", MetricKind::kLatency, "ns", "op=read"},
              {"cpu.user", MetricKind::kScalar, "1", ""},
              {"cpu.stacks", MetricKind::kStacks, "samples", ""}};
  b.frames = {{1, "main"}};
  b.stacks = {{1, {1}}};
  Histogram h;
  h.Record(1500, 2);
  for (int64_t t : {1'700'000'000, 1'700'000'001}) {
    b.seconds.push_back({t, {{0, h.Encode()}}, {{1, 0.5}}, {{2, 1, 3}}});
  }
  return b;
}

TEST(BatchItems, ABadItemIsLeftOutAloneAndNamed) {
  Batch b = Mixed();
  b.seconds[1].histograms[0].encoded[1] = 9;     // does not decode
  b.seconds[0].scalars[0].value = std::nan("");  // not finite
  b.seconds[1].stacks[0].count = 0;              // count 0
  Refusals refused;
  Result<Batch> r = DecodeBatch(EncodeBatch(b), {}, nullptr, nullptr, &refused);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(refused.total, 3u);
  ASSERT_EQ(refused.named.size(), 3u);
  EXPECT_EQ(refused.named[0].kind, RefusedItem::Kind::kScalar);
  EXPECT_EQ(refused.named[0].second, 0u);
  EXPECT_EQ(refused.named[0].reason, "second 0 (1700000000), scalar 0: value is not finite");
  EXPECT_EQ(refused.named[1].kind, RefusedItem::Kind::kHistogram);
  EXPECT_EQ(refused.named[1].second, 1u);
  EXPECT_NE(refused.named[1].reason.find("second 1 (1700000001), histogram 0: histogram:"),
            std::string::npos);
  EXPECT_EQ(refused.named[2].reason, "second 1 (1700000001), stack count 0: count 0");
  // Everything else is there.
  ASSERT_EQ(r->seconds.size(), 2u);
  EXPECT_EQ(r->seconds[0].histograms.size(), 1u);
  EXPECT_EQ(r->seconds[0].scalars.size(), 0u);
  EXPECT_EQ(r->seconds[0].stacks.size(), 1u);
  EXPECT_EQ(r->seconds[1].histograms.size(), 0u);
  EXPECT_EQ(r->seconds[1].scalars.size(), 1u);
  EXPECT_EQ(r->seconds[1].stacks.size(), 0u);
  // Without a place to report them, the first bad item fails the decode (all or nothing).
  Result<Batch> strict = DecodeBatch(EncodeBatch(b));
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().message(), refused.named[0].reason);
}

// The agent's spool reads back what it wrote as it was written: the bad items stay for the
// aggregator to refuse (and name in its ack), and every field survives, definitions included.
TEST(BatchItems, AsWrittenKeepsEveryItemTheAggregatorWouldRefuse) {
  Batch b = Mixed();
  b.seconds[1].histograms[0].encoded[1] = 9;
  b.seconds[0].scalars[0].value = std::nan("");
  b.seconds[1].stacks[0].count = 0;
  b.frames = {{1, "a;b"}};  // a definition fault: the whole batch is the aggregator's to reject
  b.stacks = {{4, {1, 1}}};
  const std::string bytes = EncodeBatch(b);
  Result<Batch> back = DecodeBatchAsWritten(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(EncodeBatch(*back), bytes);
  EXPECT_EQ(back->series, b.series);
  EXPECT_EQ(back->frames, b.frames);
  EXPECT_EQ(back->seconds[1].stacks[0].count, 0u);
  EXPECT_TRUE(std::isnan(back->seconds[0].scalars[0].value));
  EXPECT_FALSE(DecodeBatchAsWritten(bytes.substr(0, bytes.size() - 8)).ok());
  EXPECT_FALSE(DecodeBatchAsWritten("garbage").ok());
}

TEST(BatchItems, ARefusedSeriesTakesItsItemsAndTheRestAreRenumbered) {
  Batch b = Mixed();
  b.series[0].unit = "";                             // series 0 refused
  b.seconds[0].stacks[0].count = kMaxItemCount + 1;  // over the item bound
  b.seconds[1].time = 5'000'000'000;                 // past 2100: all its items
  Refusals refused;
  Result<Batch> r = DecodeBatch(EncodeBatch(b), {}, nullptr, nullptr, &refused);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // series 0, its histogram in second 0, the stack count over 2^40, second 1's three items.
  EXPECT_EQ(refused.total, 6u);
  EXPECT_EQ(refused.named[0].reason, "series 0 (disk.latency): unit is empty");
  EXPECT_EQ(refused.named[1].reason,
            "second 0 (1700000000), histogram 0: its series 0 was refused (unit is empty)");
  EXPECT_EQ(refused.named[2].kind, RefusedItem::Kind::kStackCount);
  EXPECT_NE(refused.named[2].reason.find("at most 2^40"), std::string::npos);
  EXPECT_EQ(refused.named[3].reason, "second 1 (5000000000), histogram 0: time outside 1970..2100");
  ASSERT_EQ(r->series.size(), 2u);
  EXPECT_EQ(r->series[0].metric, "cpu.user");
  ASSERT_EQ(r->seconds.size(), 1u);  // second 1 had nothing left
  ASSERT_EQ(r->seconds[0].scalars.size(), 1u);
  EXPECT_EQ(r->seconds[0].scalars[0].series, 0u);  // was 1
}

TEST(BatchItems, OnlyTheFirstSixteenAreNamedAllAreCounted) {
  Batch b = Mixed();
  b.seconds.resize(1);
  b.seconds[0].scalars.assign(40, {1, std::numeric_limits<double>::infinity()});
  Refusals refused;
  ASSERT_TRUE(DecodeBatch(EncodeBatch(b), {}, nullptr, nullptr, &refused).ok());
  EXPECT_EQ(refused.total, 40u);
  EXPECT_EQ(refused.named.size(), kMaxNamedRefusals);
  EXPECT_EQ(refused.named.back().index, kMaxNamedRefusals - 1);

  Ack ack{4, Ack::Status::kApplied, "", 0, refused};
  Result<Ack> back = DecodeAck(EncodeAck(ack));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->refused.total, 40u);
  ASSERT_EQ(back->refused.named.size(), kMaxNamedRefusals);
  EXPECT_EQ(back->refused.named[3], refused.named[3]);
  EXPECT_STREQ(RefusedKindName(back->refused.named[3].kind), "scalar");
}

TEST(BatchItems, AnEnvelopeOverTheByteLimitIsStillNamed) {
  BatchLimits small;
  small.max_bytes = 64;
  std::string agent;
  uint64_t sequence = 0;
  Result<Batch> r = DecodeBatch(EncodeBatch(Mixed()), small, &agent, &sequence);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("at most 64"), std::string::npos);
  EXPECT_EQ(agent, "web-1/abc");
  EXPECT_EQ(sequence, 4u);
}

}  // namespace
}  // namespace trailmap

namespace trailmap {
namespace {

// Cap'n Proto lets a list hold structs of zero words: such a list claims any number of items in
// no bytes. These build messages that do, as the fuzzer did, through the schema-less builder.
// `pointer` is the list field's index in the struct's pointer section (schemas/ingest.capnp:
// Second.scalars is pointer 1, Ack.refused is pointer 1).
void SetEmptyStructList(capnp::AnyStruct::Builder in, unsigned pointer, uint32_t n) {
  in.getPointerSection()[pointer].initAsListOfAnyStruct(0, 0, n);
}

// A batch of one second whose scalars are `n` empty structs (series 0, value 0): no series.
std::string BatchOfEmptyScalars(uint32_t n) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<ingest::Batch>();
  b.setAgent("web-1/abc");
  b.setSequence(5);
  b.setHost("web-1");
  auto second = b.initSeconds(1)[0];
  second.setTime(1'700'000'000);
  SetEmptyStructList(capnp::toAny(second), 1, n);
  return MessageToBytes(message);
}

// Found by fuzz/batch_fuzz: a 760-byte batch whose seconds claimed millions of empty scalars kept
// DecodeBatch busy over 10 s (each refused with its reason) under a traversal limit of 64 Mi
// words. The limit is now 4 reads per word of the message: a few empty items are read and refused
// one by one as before; ten million in 160 bytes are refused whole, at once.
TEST(BatchItems, AListOfEmptyItemsCannotOutgrowItsBytes) {
  Refusals refused;
  Result<Batch> few = DecodeBatch(BatchOfEmptyScalars(3), {}, nullptr, nullptr, &refused);
  ASSERT_TRUE(few.ok()) << few.status().ToString();
  EXPECT_EQ(refused.total, 3u);
  EXPECT_EQ(refused.named[2].reason,
            "second 0 (1700000000), scalar 2: series index 0 past the series list");

  const std::string many = BatchOfEmptyScalars(10'000'000);
  ASSERT_EQ(many.size(), 160u);
  std::string agent;
  uint64_t sequence = 0;
  Result<Batch> r = DecodeBatch(many, {}, &agent, &sequence, &refused);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "batch of 160 bytes refers to more than 4 times its size (a list of empty items, or "
            "one list many times): Exceeded message traversal limit.  See "
            "capnp::ReaderOptions.");
  EXPECT_EQ(agent, "web-1/abc");  // the envelope is still read, so the ack names the batch
  EXPECT_EQ(sequence, 5u);
  EXPECT_TRUE(refused.empty());
}

// The traversal limit leaves room for a large batch as an agent builds it: every item kind,
// 3600 seconds, read with each per-second list followed twice.
TEST(BatchItems, ALargeRealBatchIsWithinTheTraversalLimit) {
  Batch b = Mixed();
  const SecondDelta one = b.seconds[0];
  b.seconds.clear();
  for (int64_t t = 0; t < 3600; ++t) {
    SecondDelta s = one;
    s.time = 1'700'000'000 + t;
    s.histograms.resize(5, one.histograms[0]);
    s.scalars.resize(5, one.scalars[0]);
    b.seconds.push_back(std::move(s));
  }
  Result<Batch> back = DecodeBatch(EncodeBatch(b));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->seconds.size(), 3600u);
  EXPECT_EQ(back->seconds[3599].scalars.size(), 5u);
}

// An ack names at most kMaxNamedRefusals items (EncodeAck); one that names more is refused, and
// a list of millions of empty items (the ack fuzzer's slow input) cannot outgrow its bytes.
TEST(Ack, NamesAtMostSixteenItems) {
  auto ack_naming = [](uint32_t n, bool empty_items) {
    capnp::MallocMessageBuilder message;
    auto a = message.initRoot<ingest::Ack>();
    a.setSequence(9);
    if (empty_items) {
      SetEmptyStructList(capnp::toAny(a), 1, n);
    } else {
      a.initRefused(n);
    }
    a.setRefusedTotal(n);
    return MessageToBytes(message);
  };
  Result<Ack> sixteen = DecodeAck(ack_naming(16, false));
  ASSERT_TRUE(sixteen.ok()) << sixteen.status().ToString();
  EXPECT_EQ(sixteen->refused.named.size(), 16u);
  EXPECT_EQ(DecodeAck(ack_naming(17, false)).status().message(),
            "ack names 17 refused items, at most 16");
  const std::string many = ack_naming(10'000'000, true);
  EXPECT_EQ(DecodeAck(many).status().message(),
            "ack of " + std::to_string(many.size()) +
                " bytes refers to more than 4 times its size (a list of empty items, or one "
                "list many times): Exceeded message traversal limit.  See "
                "capnp::ReaderOptions.");
}

}  // namespace
}  // namespace trailmap
