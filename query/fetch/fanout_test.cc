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

// An aggregator that could not read the query answers with id 0 and the reason: taken at once as
// that shard's failure, not waited out; an answer to another id still is not ours.
TEST(FanOut, AnErrorWithIdZeroIsThisQuerysFailureAndIsNotWaitedOut) {
  zmq::context_t context;
  Answer unread;
  unread.shard = "agg-2";
  unread.error = "bad query: query is not a Cap'n Proto message";
  testing::FakeAggregator good(context, testing::CannedAnswer("agg-1", "web-1", 5000, 7));
  testing::FakeAggregator bad(context, unread);
  bad.KeepAnswerId();
  Answer stale = unread;
  stale.id = 41;
  testing::FakeAggregator other(context, stale);
  other.KeepAnswerId();
  FanoutOptions options;
  options.deadline = std::chrono::milliseconds(5000);
  const auto began = std::chrono::steady_clock::now();
  FanoutResult r =
      FanOut(context, {good.endpoint(), bad.endpoint()}, HistogramQueryOf(42), options);
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(2000));
  ASSERT_EQ(r.answers.size(), 1u);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].endpoint, bad.endpoint());
  EXPECT_EQ(r.failures[0].reason, "error: bad query: query is not a Cap'n Proto message");
  options.deadline = std::chrono::milliseconds(300);
  r = FanOut(context, {other.endpoint()}, HistogramQueryOf(42), options);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].reason, "no answer within 300 ms");
}

// A shard that refuses the client's key: a failure of its own kind, listed in key_refused.
TEST(FanOut, AKeyRefusalIsListedApart) {
  zmq::context_t context;
  Answer refusal;
  refusal.shard = "agg-2";
  refusal.key_refused = true;
  refusal.error =
      "key web may only ingest, not query: give it the query right in the clients "
      "file of aggregator agg-2";
  testing::FakeAggregator good(context, testing::CannedAnswer("agg-1", "web-1", 5000, 7));
  testing::FakeAggregator bad(context, refusal);
  FanoutResult r = FanOut(context, {good.endpoint(), bad.endpoint()}, HistogramQueryOf(3));
  ASSERT_EQ(r.answers.size(), 1u);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].reason, "refused this key: " + refusal.error);
  ASSERT_EQ(r.key_refused.size(), 1u);
  EXPECT_EQ(r.key_refused[0].endpoint, bad.endpoint());
  EXPECT_EQ(r.key_refused[0].reason, r.failures[0].reason);
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

// Three members in three zones, R = 2, at the fakes' endpoints; `silent` of them never answer.
Cluster ThreeZones(const std::vector<const testing::FakeAggregator*>& fakes) {
  Cluster c;
  c.replication = 2;
  ClusterEpoch all;
  for (size_t i = 0; i < fakes.size(); ++i) {
    const std::string name = "agg-" + std::to_string(i + 1);
    c.members.push_back(
        {name, std::string(1, static_cast<char>('a' + i)), "", fakes[i]->endpoint()});
    all.members.push_back(i);
  }
  c.epochs.push_back(all);
  return c;
}

TEST(FanOutReplicas, AMemberDownIsAskedOnceAndItsPeersAnswerForItInASecondRound) {
  zmq::context_t context;
  testing::FakeAggregator a(context, testing::CannedAnswer("agg-1", "", 5000, 1));
  testing::FakeAggregator b(context, Answer{}, /*silent=*/true);
  testing::FakeAggregator c(context, testing::CannedAnswer("agg-3", "", 5000, 1));
  const Cluster cluster = ThreeZones({&a, &b, &c});
  FanoutOptions options;
  options.deadline = std::chrono::milliseconds(600);
  FanoutResult r = FanOutReplicas(context, cluster, {0, 1, 2}, HistogramQueryOf(9), options);
  EXPECT_EQ(r.answers.size(), 4u);  // agg-1 and agg-3, twice each
  // Each asked how far it is through (core/cluster.h "Replicas by completeness"), then the rounds.
  EXPECT_EQ(a.queries(), 3);
  EXPECT_EQ(b.queries(), 2);
  EXPECT_EQ(c.queries(), 3);
  EXPECT_TRUE(r.failures.empty());  // every host of agg-2 has another owner
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_EQ(r.skipped[0].endpoint, "agg-2 (" + b.endpoint() + ")");
  EXPECT_EQ(r.skipped[0].reason,
            "no answer within 300 ms; its hosts were answered by their other replicas");
  // The second round's query names agg-2 as down since round 0, and agg-1 as the member asked.
  const std::optional<ReplicaScope>& scope = a.last_query().histograms.replicas;
  ASSERT_TRUE(scope.has_value());
  EXPECT_EQ(scope->selection.member, "agg-1");
  EXPECT_EQ(scope->selection.down, std::vector<std::string>{"agg-2"});
  EXPECT_EQ(scope->selection.down_in, std::vector<uint32_t>{0});
  EXPECT_EQ(scope->selection.round, 1u);
  EXPECT_EQ(scope->cluster.replication, 2u);
  EXPECT_EQ(scope->cluster.members[1].name, "agg-2");
  EXPECT_EQ(scope->cluster.members[1].query, "");  // endpoints are not sent
}

TEST(FanOutReplicas, TwoOfThreeDownLoseOnlyTheHostsPlacedOnBoth) {
  zmq::context_t context;
  testing::FakeAggregator a(context, testing::CannedAnswer("agg-1", "", 5000, 1));
  testing::FakeAggregator b(context, Answer{}, /*silent=*/true);
  testing::FakeAggregator c(context, Answer{}, /*silent=*/true);
  const Cluster cluster = ThreeZones({&a, &b, &c});
  FanoutOptions options;
  options.deadline = std::chrono::milliseconds(400);
  FanoutResult r = FanOutReplicas(context, cluster, {0, 1, 2}, HistogramQueryOf(9), options);
  EXPECT_EQ(a.queries(), 3);  // how far through, then two rounds
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].endpoint, "agg-2+agg-3");
  EXPECT_EQ(r.failures[0].reason.substr(0, 55),
            "no live replica for the hosts placed on these members (");
  EXPECT_TRUE(r.skipped.empty());  // both down members lose data: named in failures
}

TEST(FanOutReplicas, PossibleOwnerListsFollowTheZones) {
  Cluster c;
  c.replication = 2;
  for (const char* zone : {"a", "b", "c", "a"}) {
    c.members.push_back(
        {std::string("agg-") + zone + std::to_string(c.members.size()), zone, "", ""});
  }
  c.epochs.push_back({INT64_MIN, {0, 1, 2, 3}});
  std::vector<std::vector<size_t>> lists;
  ASSERT_TRUE(PossibleOwnerLists(c, c.epochs[0], 1000, &lists));
  EXPECT_EQ(lists.size(), 10u);  // 4 x 3 ordered pairs, less the two of zone a with itself
  // Every list that 2,000 real placements give is among them.
  for (int h = 0; h < 2000; ++h) {
    const std::vector<size_t> owners = c.Owners("host-" + std::to_string(h), 0);
    EXPECT_NE(std::find(lists.begin(), lists.end(), owners), lists.end());
  }
  c.replication = 3;  // three zones: every ordered triple with distinct zones
  lists.clear();
  ASSERT_TRUE(PossibleOwnerLists(c, c.epochs[0], 1000, &lists));
  EXPECT_EQ(lists.size(), 12u);  // zone a has 2 members: 2 x 3! = 12
  lists.clear();
  EXPECT_FALSE(PossibleOwnerLists(c, c.epochs[0], 5, &lists));  // over the limit: not all listed
}

}  // namespace
}  // namespace trailmap
