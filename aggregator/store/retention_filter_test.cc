#include "aggregator/store/retention_filter.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include "aggregator/scan/store_query.h"
#include "aggregator/store/keys.h"
#include "aggregator/store/store.h"
#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::Encoded;
using testing::Latency;
using testing::MakeBatch;
using testing::TempDir;

constexpr int64_t kNow = 1'700'006'400;  // a multiple of 60

rocksdb::CompactionFilter::Decision Decide(
    const RetentionFilter& f, int64_t second,
    rocksdb::CompactionFilter::ValueType type = rocksdb::CompactionFilter::ValueType::kValue) {
  std::string unused;
  return f.FilterV2(1, EncodeDataKey(DataKey{1, second, 2, 3}), type, "", &unused, &unused);
}

TEST(RetentionFilterTest, DropsAKeyOnceAllOfItsBucketIsPastTheCutoff) {
  using Decision = rocksdb::CompactionFilter::Decision;
  const RetentionFilter minutes(60, kNow - 3600);
  EXPECT_EQ(Decide(minutes, kNow - 3660), Decision::kRemove);  // [now-3660, now-3600): all old
  EXPECT_EQ(Decide(minutes, kNow - 3659), Decision::kKeep);    // its last second is new enough
  EXPECT_EQ(Decide(minutes, kNow), Decision::kKeep);
  EXPECT_EQ(Decide(minutes, kNow - 7200, rocksdb::CompactionFilter::ValueType::kMergeOperand),
            Decision::kRemove);
  EXPECT_EQ(minutes.dropped(), 2u);
  const RetentionFilter seconds(1, kNow - 10);
  EXPECT_EQ(Decide(seconds, kNow - 11), Decision::kRemove);
  EXPECT_EQ(Decide(seconds, kNow - 10), Decision::kKeep);
  // What it cannot read, it keeps.
  std::string unused;
  EXPECT_EQ(seconds.FilterV2(1, "short", rocksdb::CompactionFilter::ValueType::kValue, "", &unused,
                             &unused),
            Decision::kKeep);
}

TEST(RetentionFilterTest, FactoryReadsTheInjectedClockPerCompaction) {
  int64_t now = kNow;
  RetentionFilterFactory factory("hist", 1, 100, [&now] { return now; });
  EXPECT_STREQ(factory.Name(), "trailmap.retention.hist");
  std::unique_ptr<rocksdb::CompactionFilter> f = factory.CreateCompactionFilter({});
  std::string unused;
  const std::string key = EncodeDataKey(DataKey{1, kNow - 50, 2, 3});
  EXPECT_EQ(f->FilterV2(0, key, rocksdb::CompactionFilter::ValueType::kValue, "", &unused, &unused),
            rocksdb::CompactionFilter::Decision::kKeep);
  now += 100;
  f = factory.CreateCompactionFilter({});
  EXPECT_EQ(f->FilterV2(0, key, rocksdb::CompactionFilter::ValueType::kValue, "", &unused, &unused),
            rocksdb::CompactionFilter::Decision::kRemove);
}

// Through a real store: old and new seconds written, a full compaction, then each family holds
// exactly what its retention keeps.
TEST(RetentionFilterTest, CompactionDropsEachFamilysOldKeysAndKeepsTheRest) {
  TempDir dir;
  int64_t now = kNow;
  StoreOptions options;
  options.sync = false;
  options.retention_seconds = {1000, 5000, 0};  // hist 1000 s, hist_10s 5000 s, hist_60s forever
  options.clock = [&now] { return now; };
  options.rollup_interval_ms = 0;
  std::unique_ptr<Store> store = std::move(Store::Open(dir.path(), options)).value();

  // One value at each age: 9000 s (only the 60 s family keeps it), 3000 s (10 s and 60 s), 1001 s
  // (just past the 1 s retention), 1000 s (just inside it) and 100 s (all three keep it).
  Batch b = MakeBatch("a/1", 1, "a", {Latency("m")});
  for (int64_t age : {9000, 3000, 1001, 1000, 100}) {
    b.seconds.push_back(SecondDelta{kNow - age, {{0, Encoded({static_cast<uint64_t>(age)})}}, {}});
  }
  ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
  // All older than the 1 s retention less an hour: merged into the rollups at ingest, since
  // their seconds will not be kept to be rolled up later.
  EXPECT_EQ(store->PendingRollups(), 0u);

  // Each family alone: seconds (forced), tens (step 10 on aligned edges) and minutes.
  auto count = [&store](uint32_t step, QueryPlan plan) {
    Result<HistogramAnswer> a =
        QueryHistograms(*store, {"m", kNow - 10800, kNow + 60, step, "", {}}, plan);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    uint64_t n = 0;
    for (const QueryCell& c : a->cells) n += c.histogram.count();
    return n;
  };
  EXPECT_EQ(count(1, QueryPlan::kFinestOnly), 5u);
  EXPECT_EQ(count(10, QueryPlan::kCoarsest), 5u);
  EXPECT_EQ(count(60, QueryPlan::kCoarsest), 5u);

  ASSERT_TRUE(store->Flush().ok());
  ASSERT_TRUE(store->Compact().ok());
  // hist keeps ages 1000 and 100 (a key 1000 s old ends exactly at the cutoff + 1).
  EXPECT_EQ(count(1, QueryPlan::kFinestOnly), 2u);
  // hist_10s keeps 3000, 1001, 1000 and 100 (buckets ending after now - 5000).
  EXPECT_EQ(count(10, QueryPlan::kCoarsest), 4u);
  // hist_60s keeps everything.
  EXPECT_EQ(count(60, QueryPlan::kCoarsest), 5u);

  // Time passes; the next compaction reads the clock again.
  now += 4000;
  ASSERT_TRUE(store->Compact().ok());
  EXPECT_EQ(count(1, QueryPlan::kFinestOnly), 0u);
  // hist_10s now keeps buckets ending after kNow - 1000: ages 1000 and 100 (their bucket starts
  // there), not 1001 (its bucket started at 1010).
  EXPECT_EQ(count(10, QueryPlan::kCoarsest), 2u);
  EXPECT_EQ(count(60, QueryPlan::kCoarsest), 5u);
}

// scalar, stacks and stacks_60s: each its own retention, through a real store.
TEST(RetentionFilterTest, ScalarAndStackFamiliesAgeOutByTheirOwnRetention) {
  TempDir dir;
  int64_t now = kNow;
  StoreOptions options;
  options.sync = false;
  options.scalar_retention_seconds = 1000;
  options.stacks_retention_seconds = 500;
  options.stacks_60s_retention_seconds = 2000;
  options.clock = [&now] { return now; };
  options.rollup_interval_ms = 0;
  std::unique_ptr<Store> store = std::move(Store::Open(dir.path(), options)).value();

  Batch b = MakeBatch("a/1", 1, "a",
                      {SeriesDef{"load", MetricKind::kScalar, "", ""},
                       SeriesDef{"cpu.stacks", MetricKind::kStacks, "samples", ""}});
  b.frames = {{1, "main"}};
  b.stacks = {{1, {1}}};
  // Ages 3000 (past every retention), 1200 (only stacks_60s keeps its minute), 600 (scalar and
  // stacks_60s) and 60 (all three).
  for (int64_t age : {3000, 1200, 600, 60}) {
    b.seconds.push_back(SecondDelta{kNow - age, {}, {{0, static_cast<double>(age)}}, {{1, 1, 1}}});
  }
  ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
  auto stacks = [&store](int64_t from, int64_t to) {
    StackQuery q;
    q.from = from;
    q.to = to;
    Result<StackAnswer> a = QueryStacks(*store, q);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    uint64_t n = 0;
    for (const FoldedStack& s : a->stacks) n += s.count;
    return n;
  };
  auto scalars = [&store] {
    int n = 0;
    for (int64_t age : {3000, 1200, 600, 60}) n += store->ScalarAt("load", "a", "", kNow - age) ? 1 : 0;
    return n;
  };
  EXPECT_EQ(scalars(), 4);
  EXPECT_EQ(stacks(kNow - 3600, kNow), 4u);

  ASSERT_TRUE(store->Flush().ok());
  ASSERT_TRUE(store->Compact().ok());
  EXPECT_EQ(scalars(), 2);  // ages 600 and 60
  EXPECT_EQ(*store->ScalarAt("load", "a", "", kNow - 600), 600.0);
  // One second never holds a whole minute, so it reads `stacks`: only age 60 is left. A whole
  // minute reads `stacks_60s`: those of ages 1200, 600 and 60 are left.
  uint64_t seconds = 0, minutes = 0;
  for (int64_t age : {3000, 1200, 600, 60}) {
    seconds += stacks(kNow - age, kNow - age + 1);
    minutes += stacks(kNow - age, kNow - age + 60);
  }
  EXPECT_EQ(seconds, 1u);
  EXPECT_EQ(minutes, 3u);
}

}  // namespace
}  // namespace trailmap::aggregator
