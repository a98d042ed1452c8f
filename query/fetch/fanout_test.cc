#include "query/fetch/fanout.h"

#include <gtest/gtest.h>

#include "query/testing/fake_aggregator.h"

namespace trailmap {
namespace {

Query HistogramQueryOf(uint64_t id) {
  Query q;
  q.id = id;
  q.histograms.metric = "disk.latency";
  q.histograms.from = 1000;
  q.histograms.to = 1060;
  q.histograms.step = 60;
  q.histograms.group_by = "host";
  return q;
}

TEST(FanOut, OneShardNeverAnswersTheOtherDoes) {
  zmq::context_t context;
  testing::FakeAggregator good(context, testing::CannedAnswer("agg-1", "web-1", 5000, 7));
  testing::FakeAggregator silent(context, Answer{}, /*silent=*/true);
  FanoutOptions options;
  options.deadline = std::chrono::milliseconds(300);
  const auto began = std::chrono::steady_clock::now();
  FanoutResult r =
      FanOut(context, {good.endpoint(), silent.endpoint()}, HistogramQueryOf(42), options);
  const auto took = std::chrono::steady_clock::now() - began;
  ASSERT_EQ(r.answers.size(), 1u);
  EXPECT_EQ(r.answers[0].shard, "agg-1");
  EXPECT_EQ(r.answers[0].id, 42u);
  EXPECT_EQ(r.answers[0].histograms.cells[0].histogram.count(), 7u);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].endpoint, silent.endpoint());
  EXPECT_EQ(r.failures[0].reason, "no answer within 300 ms");
  EXPECT_GE(took, std::chrono::milliseconds(300));
  EXPECT_LT(took, std::chrono::milliseconds(2000));
  EXPECT_EQ(silent.queries(), 1);
}

TEST(FanOut, AnErrorAnswerIsAFailureWithItsReason) {
  zmq::context_t context;
  Answer refusal;
  refusal.shard = "agg-2";
  refusal.error = "unknown metric disk.latency";
  testing::FakeAggregator good(context, testing::CannedAnswer("agg-1", "web-1", 5000, 7));
  testing::FakeAggregator bad(context, refusal);
  FanoutResult r = FanOut(context, {good.endpoint(), bad.endpoint()}, HistogramQueryOf(7));
  ASSERT_EQ(r.answers.size(), 1u);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].reason, "error: unknown metric disk.latency");
}

TEST(FanOut, AllAnswerWellBeforeTheDeadline) {
  zmq::context_t context;
  testing::FakeAggregator a(context, testing::CannedAnswer("agg-1", "web-1", 5000, 7));
  testing::FakeAggregator b(context, testing::CannedAnswer("agg-2", "web-2", 9000, 3));
  const auto began = std::chrono::steady_clock::now();
  FanoutResult r = FanOut(context, {a.endpoint(), b.endpoint()}, HistogramQueryOf(1));
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(2000));
  EXPECT_EQ(r.answers.size(), 2u);
  EXPECT_TRUE(r.failures.empty());
  EXPECT_EQ(a.last_query().histograms.group_by, "host");
}

}  // namespace
}  // namespace trailmap

namespace trailmap {
namespace {

Answer StackAnswerOf(std::string shard, FoldedStacks stacks) {
  Answer a;
  a.shard = std::move(shard);
  a.kind = Query::Kind::kStacks;
  a.stacks.stacks = std::move(stacks);
  return a;
}

TEST(FanOutStacks, TwoShardsMergeIntoOneSortedFoldedList) {
  zmq::context_t context;
  testing::FakeAggregator a(context, StackAnswerOf("agg-1", {{"main;foo", 5}, {"main", 1}}));
  testing::FakeAggregator b(context, StackAnswerOf("agg-2", {{"main;foo", 2}, {"main;bar", 4}}));
  Query q;
  q.id = 9;
  q.kind = Query::Kind::kStacks;
  q.stacks.from = 1000;
  q.stacks.to = 1060;
  FanoutResult r = FanOut(context, {a.endpoint(), b.endpoint()}, q);
  ASSERT_EQ(r.answers.size(), 2u);
  EXPECT_EQ(a.last_query().kind, Query::Kind::kStacks);
  EXPECT_EQ(FormatFolded(MergeStackAnswers(r.answers)), "main 1\nmain;bar 4\nmain;foo 7\n");
}

}  // namespace
}  // namespace trailmap
