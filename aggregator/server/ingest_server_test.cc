#include "aggregator/server/ingest_server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <zmq.hpp>

#include "aggregator/scan/store_query.h"
#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::Encoded;
using testing::Latency;
using testing::MakeBatch;
using testing::TempDir;

constexpr int64_t kT = 1'700'000'000;

class IngestServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenTestStore(dir_.path());
    ASSERT_NE(store_, nullptr);
    IngestServerOptions o;
    o.endpoint = "tcp://127.0.0.1:*";  // a free loopback port
    server_ = std::make_unique<IngestServer>(&context_, store_.get(), o);
    ASSERT_TRUE(server_->Start().ok());
    dealer_.set(zmq::sockopt::linger, 0);
    dealer_.set(zmq::sockopt::rcvtimeo, 5000);
    dealer_.connect(server_->endpoint());
  }
  void TearDown() override {
    dealer_.close();
    server_.reset();
  }

  // Sends the frames and returns the decoded ack.
  Ack Send(const std::vector<std::string>& frames) {
    for (size_t i = 0; i < frames.size(); ++i) {
      dealer_.send(zmq::buffer(frames[i]),
                   i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    }
    zmq::message_t reply;
    EXPECT_TRUE(dealer_.recv(reply)) << "no ack within 5 s";
    EXPECT_FALSE(reply.more());
    Result<Ack> ack = DecodeAck(reply.to_string_view());
    EXPECT_TRUE(ack.ok()) << ack.status().ToString();
    return ack.ok() ? *ack : Ack{};
  }

  static std::string GoodBatch(uint64_t sequence) {
    Batch b = MakeBatch("web-1/1", sequence, "web-1", {Latency("disk.latency")});
    b.seconds.push_back(SecondDelta{kT, {{0, Encoded({1, 2, 3})}}, {}});
    return EncodeBatch(b);
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  zmq::context_t context_;
  std::unique_ptr<IngestServer> server_;
  zmq::socket_t dealer_{context_, zmq::socket_type::dealer};
};

TEST_F(IngestServerTest, AppliesDuplicatesAndOrders) {
  Ack ack = Send({GoodBatch(1)});
  EXPECT_EQ(ack.sequence, 1u);
  EXPECT_EQ(ack.status, Ack::Status::kApplied);
  EXPECT_EQ(store_->Watermark("web-1/1"), 1u);  // written before the ack

  ack = Send({GoodBatch(1)});
  EXPECT_EQ(ack.status, Ack::Status::kDuplicate);
  ack = Send({GoodBatch(5)});
  EXPECT_EQ(ack.sequence, 5u);
  EXPECT_EQ(ack.status, Ack::Status::kOutOfOrder);
  EXPECT_EQ(ack.expected, 2u);

  const IngestCounters c = server_->counters();
  EXPECT_EQ(c.applied, 1u);
  EXPECT_EQ(c.duplicate, 1u);
  EXPECT_EQ(c.out_of_order, 1u);
  EXPECT_EQ(c.rejected, 0u);
  EXPECT_EQ(c.histogram_seconds, 1u);
  EXPECT_EQ(c.bytes, 3 * GoodBatch(1).size());
}

TEST_F(IngestServerTest, RejectsGarbageAndKeepsServing) {
  Ack ack = Send({"this is not a capnp message"});
  EXPECT_EQ(ack.status, Ack::Status::kRejected);
  EXPECT_EQ(ack.sequence, 0u);
  EXPECT_FALSE(ack.reason.empty());

  ack = Send({"two", "frames"});
  EXPECT_EQ(ack.status, Ack::Status::kRejected);
  EXPECT_NE(ack.reason.find("2 frames"), std::string::npos) << ack.reason;

  ack = Send({GoodBatch(1)});
  EXPECT_EQ(ack.status, Ack::Status::kApplied);
  EXPECT_EQ(server_->counters().rejected, 2u);
  EXPECT_EQ(server_->counters().applied, 1u);
}

TEST_F(IngestServerTest, AnswersReqPeersThroughTheirEnvelope) {
  zmq::socket_t req(context_, zmq::socket_type::req);  // sends [identity, "", payload]
  req.set(zmq::sockopt::linger, 0);
  req.set(zmq::sockopt::rcvtimeo, 5000);
  req.connect(server_->endpoint());
  req.send(zmq::buffer(GoodBatch(1)));
  zmq::message_t reply;
  ASSERT_TRUE(req.recv(reply));
  Result<Ack> ack = DecodeAck(reply.to_string_view());
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  EXPECT_EQ(ack->sequence, 1u);
  EXPECT_EQ(ack->status, Ack::Status::kApplied);
}

TEST_F(IngestServerTest, ABadItemIsRefusedAloneAndTheRestApplies) {
  ASSERT_EQ(Send({GoodBatch(1)}).status, Ack::Status::kApplied);
  // Batch 2 carries a histogram that does not decode, beside a good one.
  Batch bad = MakeBatch("web-1/1", 2, "web-1", {Latency("disk.latency")});
  bad.seconds.push_back(SecondDelta{kT, {{0, "\x01\x01junk"}, {0, Encoded({7})}}, {}});
  Ack ack = Send({EncodeBatch(bad)});
  EXPECT_EQ(ack.status, Ack::Status::kApplied);
  EXPECT_EQ(ack.sequence, 2u);
  EXPECT_EQ(ack.refused.total, 1u);
  ASSERT_EQ(ack.refused.named.size(), 1u);
  EXPECT_NE(ack.refused.named[0].reason.find("histogram 0"), std::string::npos)
      << ack.refused.named[0].reason;
  EXPECT_EQ(store_->Watermark("web-1/1"), 2u);
  EXPECT_EQ(server_->counters().refused_items, 1u);
  // A batch that cannot be read whole, past a gap, is not judged before its turn.
  bad.sequence = 9;
  bad.frames = {{1, "a;b"}};
  ack = Send({EncodeBatch(bad)});
  EXPECT_EQ(ack.status, Ack::Status::kOutOfOrder);
  EXPECT_EQ(ack.expected, 3u);
  EXPECT_EQ(store_->Watermark("web-1/1"), 2u);

  Result<HistogramAnswer> a = QueryHistograms(*store_, {"disk.latency", kT, kT + 1, 1, "", {}});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->cells.size(), 1u);
  EXPECT_EQ(a->cells[0].histogram.count(), 4u);  // batch 1's three and batch 2's good one
}

TEST(IngestServerLogTest, SummaryLineCountsWhatChanged) {
  TempDir dir;
  Result<std::unique_ptr<Store>> store = Store::Open(dir.path());
  ASSERT_TRUE(store.ok());
  zmq::context_t context;
  IngestServerOptions options;
  options.endpoint = "tcp://127.0.0.1:*";
  options.summary_interval = std::chrono::milliseconds(1000);
  IngestServer server(&context, store->get(), options);
  ASSERT_TRUE(server.Start().ok());
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo, 5000);
  dealer.connect(server.endpoint());
  ::testing::internal::CaptureStderr();
  for (const std::string& payload : {std::string("junk"), std::string("junk")}) {
    dealer.send(zmq::buffer(payload));
    zmq::message_t reply;
    ASSERT_TRUE(dealer.recv(reply));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("ingest: rejected batch 0 from an unreadable envelope: "), std::string::npos)
      << log;
  EXPECT_NE(log.find("ingest, last 1 s: 0 applied, 0 duplicate, 0 out of order, 2 rejected, 0 "
                     "failed; 8 bytes, 0 histogram-seconds written"),
            std::string::npos)
      << log;
}

TEST(IngestServerBindTest, BusyPortIsAnError) {
  TempDir dir;
  Result<std::unique_ptr<Store>> store = Store::Open(dir.path());
  ASSERT_TRUE(store.ok());
  zmq::context_t context;
  IngestServerOptions options;
  options.endpoint = "tcp://127.0.0.1:*";
  IngestServer first(&context, store->get(), options);
  ASSERT_TRUE(first.Start().ok());
  options.endpoint = first.endpoint();
  IngestServer second(&context, store->get(), options);
  Status s = second.Start();
  EXPECT_EQ(s.code(), Status::Code::kUnavailable);
  EXPECT_NE(s.message().find(first.endpoint()), std::string::npos) << s.message();
}

}  // namespace
}  // namespace trailmap::aggregator

namespace trailmap::aggregator {
namespace {

TEST_F(IngestServerTest, AsksForStackDefinitionsItLacksAndAppliesTheResend) {
  const SeriesDef stacks{"cpu.stacks", MetricKind::kStacks, "samples", ""};
  Batch b = MakeBatch("web-1/1", 1, "web-1", {stacks});
  b.seconds.push_back(SecondDelta{kT, {}, {}, {{0, 1, 4}}});  // stack 1, not defined
  Ack ack = Send({EncodeBatch(b)});
  EXPECT_EQ(ack.status, Ack::Status::kNeedDictionary);
  EXPECT_EQ(ack.expected, 1u);
  EXPECT_NE(ack.reason.find("stack 1 of web-1/1"), std::string::npos) << ack.reason;
  b.frames = {{1, "main"}, {2, "work"}};
  b.stacks = {{1, {1, 2}}};
  ack = Send({EncodeBatch(b)});
  EXPECT_EQ(ack.status, Ack::Status::kApplied);
  EXPECT_EQ(server_->counters().need_dictionary, 1u);
  EXPECT_EQ(server_->counters().stack_values, 1u);
  StackQuery q;
  q.from = kT;
  q.to = kT + 1;
  Result<StackAnswer> answer = QueryStacks(*store_, q);
  ASSERT_TRUE(answer.ok());
  ASSERT_EQ(answer->stacks.size(), 1u);
  EXPECT_EQ(answer->stacks[0], (FoldedStack{"main;work", 4}));
}

}  // namespace
}  // namespace trailmap::aggregator
