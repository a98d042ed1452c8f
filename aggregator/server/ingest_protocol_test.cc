// The ingest protocol's rejection rules (schemas/ingest.capnp, "Items" and "Rejection") against
// the real IngestServer and Store on a real RocksDB directory: gaps, duplicates, reordering and
// rejections in a window, from a raw DEALER and from the agent's Shipper, with exact totals and
// the same totals after the database is reopened.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <zmq.hpp>

#include "aggregator/scan/store_query.h"
#include "aggregator/server/ingest_server.h"
#include "aggregator/store/testing.h"
#include "ingest/bucketizer.h"
#include "ingest/shipper.h"

namespace trailmap::aggregator {
namespace {

using testing::Encoded;
using testing::Latency;
using testing::MakeBatch;
using testing::TempDir;

constexpr int64_t kT = 1'700'000'000;
constexpr char kAgent[] = "web-1/1";

// Batch `sequence` of kAgent: `sequence` events of 1000 ns at second kT + sequence.
Batch Good(uint64_t sequence) {
  Batch b = MakeBatch(kAgent, sequence, "web-1", {Latency("disk.latency")});
  Histogram h;
  h.Record(1000, sequence);
  b.seconds.push_back(SecondDelta{kT + static_cast<int64_t>(sequence), {{0, h.Encode()}}, {}});
  return b;
}

// Readable envelope, unreadable whole: 17 labels (at most 16).
Batch Unreadable(uint64_t sequence) {
  Batch b = Good(sequence);
  for (int i = 0; i < 17; ++i) b.labels.push_back({"k" + std::to_string(i), "v"});  // at most 16
  return b;
}

// Good(sequence) plus two bad items: a histogram that does not decode, a NaN scalar.
Batch WithBadItems(uint64_t sequence) {
  Batch b = Good(sequence);
  b.series.push_back(Latency("disk.latency", "op=bad"));
  b.series.push_back({"cpu.user", MetricKind::kScalar, "1", ""});
  b.seconds[0].histograms.push_back({1, "\x01\x01junk"});
  b.seconds[0].scalars.push_back({2, std::nan("")});
  return b;
}

class IngestProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void TearDown() override { Close(); }

  void Open(BatchLimits limits = {}) {
    StoreOptions options;
    options.sync = false;
    options.rollup_interval_ms = 0;
    Result<std::unique_ptr<Store>> s = Store::Open(dir_.path(), options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    IngestServerOptions o;
    o.endpoint = "tcp://127.0.0.1:*";
    o.limits = limits;
    server_ = std::make_unique<IngestServer>(&context_, store_.get(), o);
    ASSERT_TRUE(server_->Start().ok());
    dealer_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::dealer);
    dealer_->set(zmq::sockopt::linger, 0);
    dealer_->set(zmq::sockopt::rcvtimeo, 5000);
    dealer_->connect(server_->endpoint());
  }
  void Close() {
    dealer_.reset();
    server_.reset();
    store_.reset();
  }
  // Closes everything and opens the same RocksDB directory again.
  void Reopen(BatchLimits limits = {}) {
    Close();
    Open(limits);
  }

  // Sends every batch before reading any answer (a window), then returns the answers in order.
  std::vector<Ack> Window(const std::vector<Batch>& batches) {
    for (const Batch& b : batches) dealer_->send(zmq::buffer(EncodeBatch(b)));
    std::vector<Ack> acks;
    for (size_t i = 0; i < batches.size(); ++i) {
      zmq::message_t reply;
      if (!dealer_->recv(reply)) {
        ADD_FAILURE() << "no ack within 5 s for message " << i;
        break;
      }
      Result<Ack> ack = DecodeAck(reply.to_string_view());
      EXPECT_TRUE(ack.ok()) << ack.status().ToString();
      acks.push_back(ack.ok() ? *ack : Ack{});
    }
    return acks;
  }
  Ack One(const Batch& b) {
    std::vector<Ack> acks = Window({b});
    return acks.empty() ? Ack{} : acks[0];
  }

  // Events stored for disk.latency (every field set) over the test's seconds.
  uint64_t Stored() {
    Result<HistogramAnswer> a =
        QueryHistograms(*store_, {"disk.latency", kT, kT + 1000, 1000, "", {}});
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    uint64_t total = 0;
    if (a.ok()) {
      for (const auto& cell : a->cells) total += cell.histogram.count();
    }
    return total;
  }

  TempDir dir_;
  zmq::context_t context_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<IngestServer> server_;
  std::unique_ptr<zmq::socket_t> dealer_;
};

TEST_F(IngestProtocolTest, AnUnreadableBatchPastAGapIsNotJudgedBeforeItsTurn) {
  ASSERT_EQ(One(Good(1)).status, Ack::Status::kApplied);
  // 2 is lost; 3 cannot be read: answered outOfOrder, the watermark stays at 1.
  Ack ack = One(Unreadable(3));
  EXPECT_EQ(ack.status, Ack::Status::kOutOfOrder);
  EXPECT_EQ(ack.expected, 2u);
  EXPECT_EQ(store_->Watermark(kAgent), 1u);
  // The agent resends from 2: 2 applies, 3 is rejected in its turn, 4 follows.
  std::vector<Ack> acks = Window({Good(2), Unreadable(3), Good(4)});
  ASSERT_EQ(acks.size(), 3u);
  EXPECT_EQ(acks[0].status, Ack::Status::kApplied);
  EXPECT_EQ(acks[1].status, Ack::Status::kRejected);
  EXPECT_EQ(acks[1].sequence, 3u);
  EXPECT_NE(acks[1].reason.find("17 labels, at most 16"), std::string::npos) << acks[1].reason;
  EXPECT_EQ(acks[2].status, Ack::Status::kApplied);
  EXPECT_EQ(store_->Watermark(kAgent), 4u);
  EXPECT_EQ(Stored(), 1u + 2 + 4);
  const IngestCounters c = server_->counters();
  EXPECT_EQ(c.applied, 3u);
  EXPECT_EQ(c.rejected, 1u);
  EXPECT_EQ(c.out_of_order, 1u);
}

TEST_F(IngestProtocolTest, DuplicatesOfAppliedAndRejectedBatchesChangeNothing) {
  std::vector<Ack> acks = Window({Good(1), Good(1), Unreadable(2), Unreadable(2), Good(2),
                                  WithBadItems(3), WithBadItems(3)});
  ASSERT_EQ(acks.size(), 7u);
  EXPECT_EQ(acks[0].status, Ack::Status::kApplied);
  EXPECT_EQ(acks[1].status, Ack::Status::kDuplicate);
  EXPECT_EQ(acks[2].status, Ack::Status::kRejected);
  EXPECT_EQ(acks[3].status, Ack::Status::kRejected);  // at the watermark: nothing moves
  EXPECT_EQ(acks[3].sequence, 2u);
  EXPECT_EQ(acks[4].status, Ack::Status::kDuplicate);  // 2 was judged: never applied now
  EXPECT_EQ(acks[5].status, Ack::Status::kApplied);
  EXPECT_EQ(acks[5].refused.total, 2u);
  EXPECT_EQ(acks[6].status, Ack::Status::kDuplicate);
  EXPECT_EQ(acks[6].refused.total, 2u);  // named again for an agent that missed the first ack
  EXPECT_EQ(store_->Watermark(kAgent), 3u);
  EXPECT_EQ(Stored(), 1u + 3);
  EXPECT_EQ(server_->counters().refused_items, 2u);  // counted once, when applied
}

TEST_F(IngestProtocolTest, AReorderedWindowAppliesEachBatchOnce) {
  std::vector<Ack> acks = Window({Good(1), Good(3), Good(2), Good(5), Good(4)});
  ASSERT_EQ(acks.size(), 5u);
  EXPECT_EQ(acks[0].status, Ack::Status::kApplied);
  EXPECT_EQ(acks[1].status, Ack::Status::kOutOfOrder);
  EXPECT_EQ(acks[1].expected, 2u);
  EXPECT_EQ(acks[2].status, Ack::Status::kApplied);
  EXPECT_EQ(acks[3].status, Ack::Status::kOutOfOrder);
  EXPECT_EQ(acks[3].expected, 3u);
  EXPECT_EQ(acks[4].status, Ack::Status::kOutOfOrder);
  // Go-back-N from 3.
  acks = Window({Good(3), Good(4), Good(5), Good(4)});
  ASSERT_EQ(acks.size(), 4u);
  EXPECT_EQ(acks[0].status, Ack::Status::kApplied);
  EXPECT_EQ(acks[1].status, Ack::Status::kApplied);
  EXPECT_EQ(acks[2].status, Ack::Status::kApplied);
  EXPECT_EQ(acks[3].status, Ack::Status::kDuplicate);
  EXPECT_EQ(Stored(), 1u + 2 + 3 + 4 + 5);
}

TEST_F(IngestProtocolTest, ARejectionInTheMiddleOfAWindowLosesOnlyItselfAndSurvivesAReopen) {
  std::vector<Batch> window;
  uint64_t expected = 0;
  for (uint64_t s = 1; s <= 20; ++s) {
    window.push_back(s == 7 ? WithBadItems(s) : s == 12 ? Unreadable(s) : Good(s));
    if (s != 12) expected += s;  // batch 7's good histogram applies
  }
  std::vector<Ack> acks = Window(window);
  ASSERT_EQ(acks.size(), 20u);
  for (uint64_t s = 1; s <= 20; ++s) {
    EXPECT_EQ(acks[s - 1].sequence, s);
    EXPECT_EQ(acks[s - 1].status, s == 12 ? Ack::Status::kRejected : Ack::Status::kApplied) << s;
  }
  const Refusals& refused = acks[6].refused;
  EXPECT_EQ(refused.total, 2u);
  ASSERT_EQ(refused.named.size(), 2u);
  EXPECT_EQ(refused.named[0].kind, RefusedItem::Kind::kHistogram);
  EXPECT_EQ(refused.named[0].index, 1u);
  EXPECT_NE(refused.named[0].reason.find("second 0 (1700000007), histogram 1: histogram:"),
            std::string::npos)
      << refused.named[0].reason;
  EXPECT_EQ(refused.named[1].reason, "second 0 (1700000007), scalar 0: value is not finite");
  EXPECT_EQ(Stored(), expected);
  EXPECT_EQ(store_->ScalarAt("cpu.user", "web-1", "", kT + 7), std::nullopt);
  const IngestCounters c = server_->counters();
  EXPECT_EQ(c.applied, 19u);
  EXPECT_EQ(c.rejected, 1u);
  EXPECT_EQ(c.refused_items, 2u);

  Reopen();
  EXPECT_EQ(store_->Watermark(kAgent), 20u);
  EXPECT_EQ(Stored(), expected);
  EXPECT_EQ(One(Good(20)).status, Ack::Status::kDuplicate);
  EXPECT_EQ(One(Unreadable(12)).status, Ack::Status::kRejected);
  EXPECT_EQ(Stored(), expected);
}

TEST_F(IngestProtocolTest, AnEnvelopeThatCannotBeReadMovesNothing) {
  ASSERT_EQ(One(Good(1)).status, Ack::Status::kApplied);
  Batch no_sequence = Good(2);
  no_sequence.sequence = 0;
  Ack ack = One(no_sequence);
  EXPECT_EQ(ack.status, Ack::Status::kRejected);
  EXPECT_EQ(ack.sequence, 0u);
  Batch bad_agent = Good(2);
  bad_agent.agent = "web-1/\x01";
  ack = One(bad_agent);
  EXPECT_EQ(ack.status, Ack::Status::kRejected);
  EXPECT_EQ(ack.sequence, 0u);
  EXPECT_EQ(store_->Watermark(kAgent), 1u);
  EXPECT_EQ(One(Good(2)).status, Ack::Status::kApplied);
}

// The agent's Shipper against the real server: a window of 20 where batch 7 has two bad items
// and batch 12 is over the aggregator's series limit (readable envelope, rejected whole).
// Out until the spool reads back a batch with a bad item as it was handed over: ingest/shipper.cc
// re-validates what it reads back from the spool and sends such a batch empty.
TEST_F(IngestProtocolTest, TheShipperDropsOnlyTheRejectedBatchAndCountsRefusedItems) {
  BatchLimits limits;
  limits.max_series = 3;
  Reopen(limits);
  ShipperOptions options;
  options.endpoint = server_->endpoint();
  options.agent_id = kAgent;
  options.window = 20;
  options.ack_timeout = std::chrono::milliseconds(3000);
  Shipper shipper(options);
  uint64_t expected = 0;
  for (uint64_t s = 1; s <= 20; ++s) {
    Batch b = s == 7 ? WithBadItems(s) : Good(s);
    if (s == 12) {
      for (const char* op : {"a", "b", "c"}) b.series.push_back(Latency("disk.latency", op));
    }
    if (s != 12) expected += s;
    ASSERT_TRUE(shipper.Send(std::move(b)));
  }
  ASSERT_TRUE(shipper.Flush(std::chrono::seconds(20)).ok());
  const ShipperCounters c = shipper.counters();
  EXPECT_EQ(c.acked, 19u);
  EXPECT_EQ(c.rejected, 1u);
  EXPECT_EQ(c.items_refused, 2u);
  EXPECT_EQ(c.unreadable, 0u);
  EXPECT_EQ(Stored(), expected);
  EXPECT_EQ(store_->Watermark(kAgent), 20u);
}

// An over-full second cut by MakeBatches (core/batch_split.h) under the server's own limits:
// every cut batch is applied, nothing is refused, and every event arrives exactly once.
TEST_F(IngestProtocolTest, AnOverFullSecondIsCutAndEveryEventArrivesOnce) {
  BatchLimits limits;
  limits.max_series = 40;
  limits.max_bytes = 8192;
  Reopen(limits);
  Bucketizer bucketizer;
  uint64_t events = 0;
  for (int64_t t = kT; t < kT + 3; ++t) {
    for (uint64_t dev = 0; dev < 150; ++dev) {
      const SeriesDef def = Latency("disk.latency", "dev=d" + std::to_string(dev));
      bucketizer.Add(t, def, 1000 + dev * 17, dev + 1);
      events += dev + 1;
    }
  }
  std::vector<Batch> batches = MakeBatches(bucketizer.TakeAll(), "web-1", {}, limits);
  ASSERT_GE(batches.size(), 12u);  // 450 series-seconds, at most 40 series a batch
  ShipperOptions options;
  options.endpoint = server_->endpoint();
  options.agent_id = kAgent;
  Shipper shipper(options);
  for (Batch& b : batches) ASSERT_TRUE(shipper.Send(std::move(b)));
  ASSERT_TRUE(shipper.Flush(std::chrono::seconds(20)).ok());
  const ShipperCounters c = shipper.counters();
  EXPECT_EQ(c.acked, batches.size());
  EXPECT_EQ(c.rejected + c.items_refused, 0u);
  EXPECT_EQ(Stored(), events);
  EXPECT_EQ(server_->counters().rejected, 0u);
}

}  // namespace
}  // namespace trailmap::aggregator
