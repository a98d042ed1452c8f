// Stacks through the Store: interned batches applied exactly once, needDictionary when a
// definition is missing, global ids persisted with the data, queries by range, host and
// predicate, and the per-minute rollup.
#include <gtest/gtest.h>

#include <zmq.hpp>

#include "aggregator/scan/store_query.h"
#include "aggregator/server/query_server.h"
#include "aggregator/store/store.h"
#include "aggregator/store/testing.h"
#include "core/histogram.h"

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

  EXPECT_EQ(Show(QueryStacks(*store, Range(kMinute, kMinute + 3))),
            "main 2\nmain;foo1;bar 6\nmain;foo2;bar 3\n");
  EXPECT_EQ(Show(QueryStacks(*store, Range(kMinute + 1, kMinute + 3))),
            "main;foo1;bar 1\nmain;foo2;bar 1\n");
  EXPECT_EQ(Show(QueryStacks(*store, Range(kMinute, kMinute + 3, "execname == \"redis\""))),
            "main 2\n");
  EXPECT_EQ(Show(QueryStacks(*store, Range(kMinute, kMinute + 3, "host == \"db-1\""))), "");
  StackQuery other_metric = Range(kMinute, kMinute + 3);
  other_metric.metric = "no.such";
  EXPECT_EQ(Show(QueryStacks(*store, other_metric)), "");
  EXPECT_NE(Show(QueryStacks(*store, Range(kMinute, kMinute + 3, "latency > 5ms")))
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
  EXPECT_EQ(Show(QueryStacks(*store, Range(kMinute, kMinute + 1))), "main;foo1;bar 5\n");
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
  EXPECT_EQ(Show(QueryStacks(*store, Range(kMinute, kMinute + 1))), "main 1\nmain;foo1;bar 7\n");
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
  EXPECT_EQ(Show(QueryStacks(*store, Range(kMinute, kMinute + 3))),
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
  EXPECT_EQ(Show(QueryStacks(*store, Range(kMinute - 60, kMinute + 120))),
            "main 1\nmain;foo1;bar 18\n");
  // Ragged: [kMinute - 35, kMinute + 95): seconds -30,-20,-10 | minute 0..59 (6) | 60..90 (4).
  EXPECT_EQ(Show(QueryStacks(*store, Range(kMinute - 35, kMinute + 95))), "main;foo1;bar 13\n");
  // Inside one minute: seconds only.
  EXPECT_EQ(Show(QueryStacks(*store, Range(kMinute + 5, kMinute + 25))), "main;foo1;bar 2\n");
  // Host filter.
  StackQuery q = Range(kMinute - 60, kMinute + 120);
  q.hosts = {"db-1"};
  EXPECT_EQ(Show(QueryStacks(*store, q)), "");
  q.hosts = {"db-1", "web-1"};
  EXPECT_EQ(Show(QueryStacks(*store, q)), "main 1\nmain;foo1;bar 18\n");
}

// "host events host_seconds" lines of a region answer's selection.
std::string ShowHosts(const Result<StackAnswer>& answer) {
  if (!answer.ok()) return answer.status().ToString();
  std::string out;
  for (const RegionHost& h : answer->region_hosts) {
    out += h.host + " " + std::to_string(h.events) + " " + std::to_string(h.host_seconds) + "\n";
  }
  return out;
}

TEST(StackStoreTest, RegionCountsEachHostSecondOncePerEventInTheBand) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  constexpr uint64_t kMs = 1'000'000;  // ns
  for (const char* host : {"web-1", "web-2"}) {
    Batch b = MakeBatch(std::string(host) + "/1", 1, host,
                        {Stacks(""), testing::Latency("disk.latency", "op=read"),
                         testing::Latency("disk.latency", "op=write")});
    DefineSeedStacks(&b);
    const bool web1 = host == std::string("web-1");
    // Every second of two minutes: one sample of stack 1; web-2 also one of stack 3.
    for (int64_t t = kMinute; t < kMinute + 120; ++t) {
      b.seconds.push_back({t, {}, {}, {{0, 1, 1}}});
      if (!web1) b.seconds.back().stacks.push_back({0, 3, 1});
      std::vector<HistogramDelta>& h = b.seconds.back().histograms;
      // In the band 50 ms..1 s: web-1 3 reads at +5, a read and a write at +70; web-2 two reads
      // at +30. Outside it: 1 ms everywhere at +5, +10 and +30, 2 s at +70.
      if (web1 && t == kMinute + 5) h.push_back({1, testing::Encoded({100 * kMs, 100 * kMs, 100 * kMs, kMs})});
      if (web1 && t == kMinute + 10) h.push_back({1, testing::Encoded({kMs})});
      if (web1 && t == kMinute + 70) {
        h.push_back({1, testing::Encoded({100 * kMs, 2'000 * kMs})});
        h.push_back({2, testing::Encoded({200 * kMs})});
      }
      if (!web1 && t == kMinute + 30) h.push_back({1, testing::Encoded({500 * kMs, 500 * kMs, kMs})});
    }
    ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
  }
  StackQuery q = Range(kMinute, kMinute + 115);
  q.region = RegionBand{"disk.latency", "value >= 50ms and value <= 1s", true, kMinute,
                        kMinute + 115};
  Result<StackAnswer> a = QueryStacks(*store, q);
  // web-1: stack 1 × (3 + 2); web-2: stacks 1 and 3 × 2.
  EXPECT_EQ(Show(a), "main 2\nmain;foo1;bar 7\n");
  EXPECT_EQ(ShowHosts(a), "web-1 5 2\nweb-2 2 1\n");
  // The baseline: the hosts' other seconds once each, a whole minute from the rollups and a
  // ragged end of 1 s values: web-1 113 seconds of stack 1, web-2 114 of stacks 1 and 3.
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(a->baseline.has_value());
  EXPECT_EQ(FormatFolded(*a->baseline), "main 114\nmain;foo1;bar 227\n");
  // The same baseline from a plain query's sums minus the selected seconds, read second by
  // second: the difference of minutes and seconds is exact.
  EXPECT_EQ(Show(QueryStacks(*store, Range(kMinute, kMinute + 115))),
            "main 115\nmain;foo1;bar 230\n");
  // Without the baseline; the view's --where picks series, --hosts hosts.
  q.region->baseline = false;
  q.region->where = "op == \"write\" and value >= 50ms and value <= 1s";
  a = QueryStacks(*store, q);
  EXPECT_EQ(Show(a), "main;foo1;bar 1\n");
  EXPECT_EQ(ShowHosts(a), "web-1 1 1\n");
  EXPECT_FALSE(a->baseline.has_value());
  q.region->where = "value >= 50ms and value <= 1s";
  q.hosts = {"web-2", "db-9"};
  EXPECT_EQ(Show(QueryStacks(*store, q)), "main 2\nmain;foo1;bar 2\n");
  // The region's seconds bound the selection: [+6, +60) holds only web-2's +30.
  q.hosts = {};
  q.from = kMinute + 6;
  q.to = kMinute + 60;
  EXPECT_EQ(ShowHosts(QueryStacks(*store, q)), "web-2 2 1\n");
  // Nothing in the band: no hosts, no stacks, and an empty baseline when one is asked for.
  q.region->where = "value >= 5s";
  q.region->baseline = true;
  q.region->baseline_from = kMinute;
  q.region->baseline_to = kMinute + 120;
  a = QueryStacks(*store, q);
  EXPECT_EQ(Show(a), "");
  EXPECT_EQ(ShowHosts(a), "");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->baseline, FoldedStacks{});
  // A metric this shard never saw: nothing; a stacks metric as the band's: an error saying so.
  q.region->metric = "no.such";
  EXPECT_EQ(Show(QueryStacks(*store, q)), "");
  q.region->metric = "cpu.stacks";
  EXPECT_NE(Show(QueryStacks(*store, q)).find("a latency or size metric; cpu.stacks is a stacks"),
            std::string::npos);
}

TEST(StackStoreTest, RegionAnswersAlikeOnOneTwoAndThreeThreads) {
  // 3 hosts x 1,200 s: stack 1 + t % 3 once a second, t % 4 events of 100 ms (0: not selected)
  // and one of 1 us: the band count is split over the query threads by time.
  constexpr int64_t kSeconds = 1'200;
  std::string expected_target, expected_baseline;
  {
    uint64_t target[4] = {}, baseline[4] = {};
    for (int h = 0; h < 3; ++h) {
      for (int64_t t = kMinute; t < kMinute + kSeconds; ++t) {
        const uint64_t n = static_cast<uint64_t>(t % 4);
        if (n > 0) {
          target[1 + t % 3] += n;
        } else {
          baseline[1 + t % 3] += 1;
        }
      }
    }
    const char* names[4] = {"", "main;foo1;bar", "main;foo2;bar", "main"};
    for (int k : {3, 1, 2}) {  // folded text order
      expected_target += std::string(names[k]) + " " + std::to_string(target[k]) + "\n";
      expected_baseline += std::string(names[k]) + " " + std::to_string(baseline[k]) + "\n";
    }
  }
  for (int threads : {1, 2, 3}) {
    TempDir dir;
    StoreOptions options;
    options.query_threads = threads;
    // 3 threads with a 1 MiB block cache, whose quarter decides whether the band count fills it
    // (BandFillsCache): the same answer either way.
    if (threads == 3) options.block_cache_mb = 1;
    std::unique_ptr<Store> store = MustOpen(dir.path(), options);
    for (const char* host : {"web-1", "web-2", "web-3"}) {
      uint64_t sequence = 1;
      for (int64_t from = kMinute; from < kMinute + kSeconds; from += 600) {
        Batch b = MakeBatch(std::string(host) + "/1", sequence++, host,
                            {Stacks(""), testing::Latency("disk.latency")});
        DefineSeedStacks(&b);
        for (int64_t t = from; t < from + 600; ++t) {
          b.seconds.push_back({t, {}, {}, {{0, static_cast<uint32_t>(1 + t % 3), 1}}});
          Histogram h;
          h.Record(1'000);
          if (t % 4 > 0) h.Record(100'000'000, static_cast<uint64_t>(t % 4));
          b.seconds.back().histograms.push_back({1, h.Encode()});
        }
        ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
      }
    }
    StackQuery q = Range(kMinute, kMinute + kSeconds);
    q.region = RegionBand{"disk.latency", "value >= 50ms", true, kMinute, kMinute + kSeconds};
    Result<StackAnswer> a = QueryStacks(*store, q);
    EXPECT_EQ(Show(a), expected_target) << threads << " threads";
    ASSERT_TRUE(a.ok() && a->baseline.has_value());
    EXPECT_EQ(FormatFolded(*a->baseline), expected_baseline) << threads << " threads";
    EXPECT_EQ(ShowHosts(a), "web-1 1800 900\nweb-2 1800 900\nweb-3 1800 900\n");
  }
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
