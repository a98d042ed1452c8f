#include "aggregator/query_server.h"

#include <gtest/gtest.h>

#include <zmq.hpp>

#include "aggregator/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::Encoded;
using testing::Latency;
using testing::MakeBatch;
using testing::TempDir;

constexpr int64_t kT = 1'700'000'000;

class QueryServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions options;
    options.sync = false;
    Result<std::unique_ptr<Store>> s = Store::Open(dir_.path(), options);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    Batch b = MakeBatch("web-1/1", 1, "web-1", {Latency("disk.latency", "op=read")});
    b.seconds.push_back(SecondDelta{kT, {{0, Encoded({5, 7})}}, {}});
    b.seconds.push_back(SecondDelta{kT + 10, {{0, Encoded({9})}}, {}});
    ASSERT_TRUE(store_->ApplyBatch(b).ok());

    server_ = std::make_unique<QueryServer>(
        &context_, store_.get(), QueryServerOptions{"tcp://127.0.0.1:*", "agg-test:7400"});
    ASSERT_TRUE(server_->Start().ok());
    dealer_.set(zmq::sockopt::linger, 0);
    dealer_.set(zmq::sockopt::rcvtimeo, 5000);
    dealer_.connect(server_->endpoint());
  }
  void TearDown() override {
    dealer_.close();
    server_.reset();
  }

  Answer Ask(const std::string& bytes) {
    dealer_.send(zmq::buffer(bytes));
    zmq::message_t reply;
    EXPECT_TRUE(dealer_.recv(reply)) << "no answer within 5 s";
    Result<Answer> answer = DecodeAnswer(reply.to_string_view());
    EXPECT_TRUE(answer.ok()) << answer.status().ToString();
    return answer.ok() ? *answer : Answer{};
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  zmq::context_t context_;
  std::unique_ptr<QueryServer> server_;
  zmq::socket_t dealer_{context_, zmq::socket_type::dealer};
};

TEST_F(QueryServerTest, AnswersHistogramsWithShardAndId) {
  Query q;
  q.id = 42;
  q.histograms = {"disk.latency", kT, kT + 20, 10, "op", {}};
  const Answer a = Ask(EncodeQuery(q));
  EXPECT_EQ(a.id, 42u);
  EXPECT_EQ(a.shard, "agg-test:7400");
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(a.kind, Query::Kind::kHistograms);
  EXPECT_EQ(a.histograms.unit, "ns");
  EXPECT_EQ(a.histograms.groups, std::vector<std::string>{"read"});
  ASSERT_EQ(a.histograms.cells.size(), 2u);
  EXPECT_EQ(a.histograms.cells[0].column, 0u);
  EXPECT_EQ(a.histograms.cells[0].histogram.count(), 2u);
  EXPECT_EQ(a.histograms.cells[0].histogram.sum(), 12u);
  EXPECT_EQ(a.histograms.cells[1].column, 1u);
  EXPECT_EQ(a.histograms.cells[1].histogram.max(), 9u);
}

TEST_F(QueryServerTest, AnswersTheCatalog) {
  Query q;
  q.id = 7;
  q.kind = Query::Kind::kMetrics;
  const Answer a = Ask(EncodeQuery(q));
  EXPECT_EQ(a.id, 7u);
  EXPECT_EQ(a.kind, Query::Kind::kMetrics);
  ASSERT_EQ(a.metrics.size(), 1u);
  EXPECT_EQ(a.metrics[0].name, "disk.latency");
  EXPECT_EQ(a.metrics[0].unit, "ns");
}

TEST_F(QueryServerTest, BadQueryGetsAnErrorAndTheServerGoesOn) {
  Answer a = Ask("garbage");
  EXPECT_EQ(a.shard, "agg-test:7400");
  EXPECT_NE(a.error.find("bad query"), std::string::npos) << a.error;

  Query q;
  q.id = 3;
  q.histograms = {"no.such.metric", kT, kT + 20, 10, "", {}};
  a = Ask(EncodeQuery(q));
  EXPECT_EQ(a.id, 3u);
  EXPECT_EQ(a.error, "");
  EXPECT_TRUE(a.histograms.cells.empty());
  EXPECT_EQ(server_->errors(), 1u);
  EXPECT_EQ(server_->answered(), 1u);
}

}  // namespace
}  // namespace trailmap::aggregator
