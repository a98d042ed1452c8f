// Stacks through the Store: interned batches applied exactly once, needDictionary when a
// definition is missing, global ids persisted with the data, queries by range, host and
// predicate, and the per-minute rollup.
#include <gtest/gtest.h>

#include <zmq.hpp>

#include "aggregator/query_server.h"
#include "aggregator/store.h"
#include "aggregator/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::MakeBatch;
using testing::TempDir;

constexpr int64_t kMinute = 1'700'000'040;  // a multiple of 60

std::unique_ptr<Store> MustOpen(const std::string& dir, StoreOptions o = {}) {
  o.sync = false;
  Result<std::unique_ptr<Store>> store = Store::Open(dir, o);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

SeriesDef Stacks(std::string fields) {
  return SeriesDef{"cpu.stacks", MetricKind::kStacks, "samples", std::move(fields)};
}

// Agent-local ids: frames 1 main, 2 foo1, 3 foo2, 4 bar; stacks 1 main;foo1;bar,
// 2 main;foo2;bar, 3 main.
void DefineSeedStacks(Batch* b) {
  b->frames = {{1, "main"}, {2, "foo1"}, {3, "foo2"}, {4, "bar"}};
  b->stacks = {{1, {1, 2, 4}}, {2, {1, 3, 4}}, {3, {1}}};
}

// "stack count" lines of an answer.
std::string Show(const Result<StackAnswer>& answer) {
  if (!answer.ok()) return answer.status().ToString();
  std::string out;
  for (const FoldedStack& s : answer->stacks) out += s.stack + " " + std::to_string(s.count) + "\n";
  return out;
}

StackQuery Range(int64_t from, int64_t to, std::string where = "") {
  StackQuery q;
  q.from = from;
  q.to = to;
  q.where = std::move(where);
  return q;
}

TEST(StackStoreTest, AppliesInternedStacksAndMergesThem) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  Batch b = MakeBatch("web-1/1", 1, "web-1", {Stacks("execname=nginx"), Stacks("execname=redis")});
  DefineSeedStacks(&b);
  b.seconds.push_back({kMinute, {}, {}, {{0, 1, 5}, {0, 2, 2}, {1, 3, 2}}});
  b.seconds.push_back({kMinute + 1, {}, {}, {{0, 1, 1}}});
  Result<ApplyOutcome> r = store->ApplyBatch(b);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, Ack::Status::kApplied);
  EXPECT_EQ(r->stack_values, 3u);

  // A later batch uses the definitions without carrying them.
  Batch later = MakeBatch("web-1/1", 2, "web-1", {Stacks("execname=nginx")});
  later.seconds.push_back({kMinute + 2, {}, {}, {{0, 2, 1}}});
  ASSERT_EQ(store->ApplyBatch(later)->status, Ack::Status::kApplied);
  ASSERT_EQ(store->ApplyBatch(later)->status, Ack::Status::kDuplicate);  // exactly once

  EXPECT_EQ(Show(store->QueryStacks(Range(kMinute, kMinute + 3))),
            "main 2\nmain;foo1;bar 6\nmain;foo2;bar 3\n");
  EXPECT_EQ(Show(store->QueryStacks(Range(kMinute + 1, kMinute + 3))),
            "main;foo1;bar 1\nmain;foo2;bar 1\n");
  EXPECT_EQ(Show(store->QueryStacks(Range(kMinute, kMinute + 3, "execname == \"redis\""))),
            "main 2\n");
  EXPECT_EQ(Show(store->QueryStacks(Range(kMinute, kMinute + 3, "host == \"db-1\""))), "");
  StackQuery other_metric = Range(kMinute, kMinute + 3);
  other_metric.metric = "no.such";
  EXPECT_EQ(Show(store->QueryStacks(other_metric)), "");
  EXPECT_NE(Show(store->QueryStacks(Range(kMinute, kMinute + 3, "latency > 5ms")))
                .find("stacks have no value to compare"),
            std::string::npos);
}

TEST(StackStoreTest, AskForDefinitionsItDoesNotHaveAndAppliesNothing) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  Batch b = MakeBatch("web-1/1", 1, "web-1", {Stacks("")});
  b.seconds.push_back({kMinute, {}, {}, {{0, 1, 5}}});  // stack 1 never defined
  Result<ApplyOutcome> r = store->ApplyBatch(b);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kNeedDictionary);
  EXPECT_EQ(r->expected, 1u);
  EXPECT_NE(r->reason.find("stack 1 of web-1/1 is not known here"), std::string::npos) << r->reason;
  EXPECT_EQ(store->Watermark("web-1/1"), 0u);
  // A stack whose frame is unknown is not usable either.
  b.stacks = {{1, {1, 9}}};
  b.frames = {{1, "main"}};
  r = store->ApplyBatch(b);
  EXPECT_EQ(r->status, Ack::Status::kNeedDictionary);
  EXPECT_NE(r->reason.find("frame 9"), std::string::npos) << r->reason;
  // Resent with every definition: applied once.
  DefineSeedStacks(&b);
  r = store->ApplyBatch(b);
  EXPECT_EQ(r->status, Ack::Status::kApplied);
  EXPECT_EQ(Show(store->QueryStacks(Range(kMinute, kMinute + 1))), "main;foo1;bar 5\n");
}

TEST(StackStoreTest, GlobalIdsAndCountsSurviveReopenButDictionariesDoNot) {
  TempDir dir;
  {
    std::unique_ptr<Store> store = MustOpen(dir.path());
    Batch b = MakeBatch("web-1/1", 1, "web-1", {Stacks("")});
    DefineSeedStacks(&b);
    b.seconds.push_back({kMinute, {}, {}, {{0, 1, 5}, {0, 3, 1}}});
    ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
    // Another agent interns the same stack text under other local ids: one global id.
    Batch c = MakeBatch("db-1/1", 1, "db-1", {Stacks("")});
    c.frames = {{7, "bar"}, {8, "foo1"}, {9, "main"}};
    c.stacks = {{4, {9, 8, 7}}};
    c.seconds.push_back({kMinute, {}, {}, {{0, 4, 2}}});
    ASSERT_EQ(store->ApplyBatch(c)->status, Ack::Status::kApplied);
    ASSERT_TRUE(store->Flush().ok());
    ASSERT_TRUE(store->Compact().ok());
  }
  std::unique_ptr<Store> store = MustOpen(dir.path());
  EXPECT_EQ(Show(store->QueryStacks(Range(kMinute, kMinute + 1))), "main 1\nmain;foo1;bar 7\n");
  // The restarted store has no definitions for web-1/1: it asks for them.
  Batch next = MakeBatch("web-1/1", 2, "web-1", {Stacks("")});
  next.seconds.push_back({kMinute + 1, {}, {}, {{0, 1, 1}}});
  EXPECT_EQ(store->ApplyBatch(next)->status, Ack::Status::kNeedDictionary);
  DefineSeedStacks(&next);
  EXPECT_EQ(store->ApplyBatch(next)->status, Ack::Status::kApplied);
  // A new stack after the reopen gets a fresh global id, not one already taken.
  Batch fresh = MakeBatch("web-1/1", 3, "web-1", {Stacks("")});
  fresh.frames = {{5, "baz"}};
  fresh.stacks = {{6, {1, 5}}};
  fresh.seconds.push_back({kMinute + 2, {}, {}, {{0, 6, 4}}});
  EXPECT_EQ(store->ApplyBatch(fresh)->status, Ack::Status::kApplied);
  EXPECT_EQ(Show(store->QueryStacks(Range(kMinute, kMinute + 3))),
            "main 1\nmain;baz 4\nmain;foo1;bar 8\n");
}

TEST(StackStoreTest, MinuteRollupServesWholeMinutesAndEdgesComeFromSeconds) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  Batch b = MakeBatch("web-1/1", 1, "web-1", {Stacks("")});
  DefineSeedStacks(&b);
  // One sample of stack 1 every 10 s over three minutes, one of stack 3 in the last second.
  for (int64_t t = kMinute - 60; t < kMinute + 120; t += 10)
    b.seconds.push_back({t, {}, {}, {{0, 1, 1}}});
  b.seconds.push_back({kMinute + 119, {}, {}, {{0, 3, 1}}});
  ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
  // Whole minutes: [kMinute - 60, kMinute + 120) = 18 + 1.
  EXPECT_EQ(Show(store->QueryStacks(Range(kMinute - 60, kMinute + 120))),
            "main 1\nmain;foo1;bar 18\n");
  // Ragged: [kMinute - 35, kMinute + 95): seconds -30,-20,-10 | minute 0..59 (6) | 60..90 (4).
  EXPECT_EQ(Show(store->QueryStacks(Range(kMinute - 35, kMinute + 95))), "main;foo1;bar 13\n");
  // Inside one minute: seconds only.
  EXPECT_EQ(Show(store->QueryStacks(Range(kMinute + 5, kMinute + 25))), "main;foo1;bar 2\n");
  // Host filter.
  StackQuery q = Range(kMinute - 60, kMinute + 120);
  q.hosts = {"db-1"};
  EXPECT_EQ(Show(store->QueryStacks(q)), "");
  q.hosts = {"db-1", "web-1"};
  EXPECT_EQ(Show(store->QueryStacks(q)), "main 1\nmain;foo1;bar 18\n");
}

TEST(StackStoreTest, WeightedQueryCountsEachHostSecondItsWeightTimes) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  for (const char* host : {"web-1", "web-2"}) {
    Batch b = MakeBatch(std::string(host) + "/1", 1, host, {Stacks("")});
    DefineSeedStacks(&b);
    // Every second of two minutes: one sample of stack 1; web-2 also one of stack 3.
    for (int64_t t = kMinute; t < kMinute + 120; ++t) {
      b.seconds.push_back({t, {}, {}, {{0, 1, 1}}});
      if (host == std::string("web-2")) b.seconds.back().stacks.push_back({0, 3, 1});
    }
    ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
  }
  // web-1's seconds +5 (weight 3) and +70 (weight 2), from 1 s values although the range holds a
  // whole minute; web-2 is not listed, so it is left out.
  StackQuery q = Range(kMinute, kMinute + 120);
  q.weights = {{"web-1", {kMinute + 5, kMinute + 70}, {3, 2}, 0}};
  EXPECT_EQ(Show(store->QueryStacks(q)), "main;foo1;bar 5\n");
  // The baseline shape: web-2's other seconds once each, its listed one left out.
  q.weights = {{"web-2", {kMinute + 5}, {0}, 1}, {"no-such-host", {}, {}, 1}};
  EXPECT_EQ(Show(store->QueryStacks(q)), "main 119\nmain;foo1;bar 119\n");
  // A baseline is read as whole minutes minus the listed seconds: a whole minute and a ragged
  // end, several listed seconds, grouped by host, the same sums as second by second.
  q = Range(kMinute, kMinute + 115);
  q.group_by = "host";
  q.weights = {{"web-1", {kMinute + 20, kMinute + 70}, {0, 0}, 1}, {"web-2", {kMinute + 30}, {0}, 1}};
  EXPECT_EQ(Show(store->QueryStacks(q)),
            "web-1;main;foo1;bar 113\nweb-2;main 114\nweb-2;main;foo1;bar 114\n");
  // Every second of web-2's range listed: nothing left of it.
  q = Range(kMinute, kMinute + 60);
  HostSecondWeights all{"web-2", {}, {}, 1};
  for (int64_t t = kMinute; t < kMinute + 60; ++t) {
    all.seconds.push_back(t);
    all.weights.push_back(0);
  }
  q.weights = {all};
  EXPECT_EQ(Show(store->QueryStacks(q)), "");
  // Only hosts of other shards: nothing.
  q = Range(kMinute, kMinute + 120);
  q.weights = {{"no-such-host", {kMinute}, {1}, 1}};
  EXPECT_EQ(Show(store->QueryStacks(q)), "");
  // A sparse selection is read by seeking to each host-second, a dense one by scanning the range:
  // the same sums either way. Sparse: web-1's +0..+29 weighing 1..30, web-2's +30..+59 weighing 2.
  HostSecondWeights web1{"web-1", {}, {}, 0}, web2{"web-2", {}, {}, 0};
  for (int64_t i = 0; i < 30; ++i) {
    web1.seconds.push_back(kMinute + i);
    web1.weights.push_back(static_cast<uint64_t>(i + 1));
    web2.seconds.push_back(kMinute + 30 + i);
    web2.weights.push_back(2);
  }
  q.weights = {web2, web1};
  EXPECT_EQ(Show(store->QueryStacks(q)), "main 60\nmain;foo1;bar 525\n");  // 465 + 60
  // Dense: both hosts' first 100 seconds, weight 1.
  web1 = {"web-1", {}, {}, 0};
  web2 = {"web-2", {}, {}, 0};
  for (int64_t i = 0; i < 100; ++i) {
    for (HostSecondWeights* w : {&web1, &web2}) {
      w->seconds.push_back(kMinute + i);
      w->weights.push_back(1);
    }
  }
  q.weights = {web1, web2};
  EXPECT_EQ(Show(store->QueryStacks(q)), "main 100\nmain;foo1;bar 200\n");
}

TEST(StackStoreTest, EvictedDictionaryIsAskedForAgain) {
  TempDir dir;
  StoreOptions o;
  o.dictionaries.max_agents = 1;
  std::unique_ptr<Store> store = MustOpen(dir.path(), o);
  Batch a = MakeBatch("web-1/1", 1, "web-1", {Stacks("")});
  DefineSeedStacks(&a);
  a.seconds.push_back({kMinute, {}, {}, {{0, 1, 1}}});
  ASSERT_EQ(store->ApplyBatch(a)->status, Ack::Status::kApplied);
  Batch other = MakeBatch("db-1/1", 1, "db-1", {Stacks("")});
  DefineSeedStacks(&other);
  other.seconds.push_back({kMinute, {}, {}, {{0, 2, 1}}});
  ASSERT_EQ(store->ApplyBatch(other)->status, Ack::Status::kApplied);  // evicts web-1/1
  Batch again = MakeBatch("web-1/1", 2, "web-1", {Stacks("")});
  again.seconds.push_back({kMinute + 1, {}, {}, {{0, 1, 1}}});
  EXPECT_EQ(store->ApplyBatch(again)->status, Ack::Status::kNeedDictionary);
}

TEST(StackStoreTest, QueryServerAnswersAStackQueryWithTheMergedStacks) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  Batch b = MakeBatch("web-1/1", 1, "web-1", {Stacks("")});
  DefineSeedStacks(&b);
  b.seconds.push_back({kMinute, {}, {}, {{0, 1, 3}, {0, 2, 1}}});
  ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
  zmq::context_t context;
  QueryServer server(&context, store.get(), {"tcp://127.0.0.1:*", "agg-test"});
  Query q;
  q.id = 5;
  q.kind = Query::Kind::kStacks;
  q.stacks = Range(kMinute, kMinute + 1);
  Answer a = server.AnswerQuery(EncodeQuery(q));
  EXPECT_EQ(a.error, "");
  EXPECT_EQ(a.id, 5u);
  EXPECT_EQ(a.kind, Query::Kind::kStacks);
  EXPECT_EQ(FormatFolded(a.stacks.stacks), "main;foo1;bar 3\nmain;foo2;bar 1\n");
  // A histogram metric is not a stacks metric: an error that says so.
  Batch h = MakeBatch("web-1/1", 2, "web-1", {testing::Latency("disk.latency")});
  h.seconds.push_back({kMinute, {{0, testing::Encoded({5})}}, {}});
  ASSERT_EQ(store->ApplyBatch(h)->status, Ack::Status::kApplied);
  q.stacks.metric = "disk.latency";
  a = server.AnswerQuery(EncodeQuery(q));
  EXPECT_NE(a.error.find("disk.latency is a latency metric, not stacks"), std::string::npos)
      << a.error;
}

}  // namespace
}  // namespace trailmap::aggregator
