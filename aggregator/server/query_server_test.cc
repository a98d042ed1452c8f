#include "aggregator/server/query_server.h"

#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <cstdio>
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

class QueryServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenTestStore(dir_.path());
    ASSERT_NE(store_, nullptr);
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

// CPU time of this thread: unlike the wall clock, not inflated when other builds share the box.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// The target from the design: a heat map over 100 hosts x 3600 seconds (360,000 keys) answered in
// well under 500 ms, the client's decoding included.
TEST(QueryServerScaleTest, HourOfHundredHostsEndToEnd) {
  TempDir dir;
  StoreOptions options;
  options.sync = false;
  std::unique_ptr<Store> store = std::move(Store::Open(dir.path(), options)).value();
  constexpr int kHosts = 100, kSeconds = 3600;
  Histogram h;
  for (uint64_t v = 100'000; v < 20'000'000; v = v * 21 / 20) h.Record(v);  // 109 buckets
  ASSERT_EQ(h.BucketsUsed(), 109u);
  const std::string encoded = h.Encode();
  for (int host = 0; host < kHosts; ++host) {
    Batch b = MakeBatch("h" + std::to_string(host) + "/1", 1, "h" + std::to_string(host),
                        {Latency("http.latency")});
    for (int s = 0; s < kSeconds; ++s) b.seconds.push_back(SecondDelta{kT + s, {{0, encoded}}, {}});
    ASSERT_TRUE(store->ApplyBatch(b).ok());
  }
  ASSERT_TRUE(store->Flush().ok());
  ASSERT_TRUE(store->Compact().ok());

  zmq::context_t context;
  QueryServer server(&context, store.get(), {"tcp://127.0.0.1:*", "scale"});
  ASSERT_TRUE(server.Start().ok());
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo, 30'000);
  dealer.connect(server.endpoint());

  // A heat map (one column a second, one group) and per-host columns (one column, by host).
  for (const char* group_by : {"", "host"}) {
    const HistogramQuery q{"http.latency",           kT,       kT + kSeconds,
                           group_by[0] ? 3600u : 1u, group_by, {}};
    auto start = std::chrono::steady_clock::now();
    const double cpu_start = ThreadCpuMs();
    Result<HistogramAnswer> direct = QueryHistograms(*store, q);
    const double store_cpu_ms = ThreadCpuMs() - cpu_start;
    const double store_ms = MsSince(start);
    ASSERT_TRUE(direct.ok());

    start = std::chrono::steady_clock::now();
    Query query;
    query.id = 1;
    query.histograms = q;
    dealer.send(zmq::buffer(EncodeQuery(query)));
    zmq::message_t reply;
    ASSERT_TRUE(dealer.recv(reply));
    Result<Answer> answer = DecodeAnswer(reply.to_string_view());
    const double end_to_end_ms = MsSince(start);
    ASSERT_TRUE(answer.ok()) << answer.status().ToString();

    uint64_t total = 0;
    for (const QueryCell& c : answer->histograms.cells) total += c.histogram.count();
    EXPECT_EQ(total, h.count() * kHosts * kSeconds);
    EXPECT_EQ(answer->histograms.cells.size(), group_by[0] ? 100u : 3600u);
    EXPECT_EQ(answer->histograms.cells.back().histogram, direct->cells.back().histogram);
    std::printf(
        "360,000 keys of 109 buckets grouped by '%s': store %.0f ms (%.0f ms CPU on the calling "
        "thread), end to end %.0f ms, answer %zu bytes\n",
        group_by, store_ms, store_cpu_ms, end_to_end_ms, reply.size());
    // The time is printed, not asserted: speed targets live in benchmarks (bench/cluster-bench,
    // docs/BENCHMARKS.md), and this bound failed at load 20 on a correct build.
  }
}

}  // namespace
}  // namespace trailmap::aggregator
