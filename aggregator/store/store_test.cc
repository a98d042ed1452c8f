#include "aggregator/store/store.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "aggregator/store/histogram_merge_operator.h"

#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::Encoded;
using testing::Latency;
using testing::MakeBatch;
using testing::TempDir;

constexpr int64_t kT = 1'700'000'000;

StoreOptions TestOptions() {
  StoreOptions o;
  o.sync = false;  // tests survive without fsync; the reopen tests close cleanly
  o.rollup_interval_ms = 0;  // RollUp when the test says
  return o;
}

std::unique_ptr<Store> MustOpen(const std::string& dir) {
  Result<std::unique_ptr<Store>> store = Store::Open(dir, TestOptions());
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

// One second of one latency histogram holding `values`, from agent "web-1/1".
Batch OneSecond(uint64_t sequence, int64_t time, std::initializer_list<uint64_t> values) {
  Batch b = MakeBatch("web-1/1", sequence, "web-1", {Latency("disk.latency", "op=read")});
  b.seconds.push_back(SecondDelta{time, {HistogramDelta{0, Encoded(values)}}, {}});
  return b;
}

uint64_t TotalCount(const Store& store, const std::string& metric) {
  Result<HistogramAnswer> a = store.QueryHistograms({metric, kT - 100, kT + 100, 200, "", {}});
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  uint64_t n = 0;
  for (const QueryCell& c : a->cells) n += c.histogram.count();
  return n;
}

TEST(StoreTest, GroupCommitJudgesEachBatchAfterTheOnesBeforeIt) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  Batch other = OneSecond(1, kT, {7});
  other.agent = "db-1/9";
  other.host = "db-1";
  Batch malformed = OneSecond(3, kT, {1});
  malformed.agent = "";
  const std::vector<Batch> batches = {OneSecond(1, kT, {10}), OneSecond(2, kT + 1, {20, 30}),
                                      OneSecond(1, kT, {10}), OneSecond(4, kT, {40}), other,
                                      malformed, OneSecond(3, kT + 2, {50})};
  std::vector<const Batch*> group;
  for (const Batch& b : batches) group.push_back(&b);
  const std::vector<Result<ApplyOutcome>> r = store->ApplyBatches(group);
  ASSERT_EQ(r.size(), 7u);
  EXPECT_EQ(r[0]->status, Ack::Status::kApplied);
  EXPECT_EQ(r[1]->status, Ack::Status::kApplied);  // follows 1 in the same group
  EXPECT_EQ(r[2]->status, Ack::Status::kDuplicate);
  EXPECT_EQ(r[3]->status, Ack::Status::kOutOfOrder);
  EXPECT_EQ(r[3]->expected, 3u);
  EXPECT_EQ(r[4]->status, Ack::Status::kApplied);
  EXPECT_EQ(r[5].status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(r[6]->status, Ack::Status::kApplied);
  EXPECT_EQ(store->Watermark("web-1/1"), 3u);
  EXPECT_EQ(store->Watermark("db-1/9"), 1u);
  EXPECT_EQ(TotalCount(*store, "disk.latency"), 5u);  // 10, 20, 30, 7, 50

  // And it all survives a reopen: one write held the group.
  store.reset();
  store = MustOpen(dir.path());
  EXPECT_EQ(store->Watermark("web-1/1"), 3u);
  EXPECT_EQ(TotalCount(*store, "disk.latency"), 5u);
}

TEST(StoreTest, AppliesInSequenceOnceAndReportsGaps) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  EXPECT_EQ(store->Watermark("web-1/1"), 0u);

  Result<ApplyOutcome> r = store->ApplyBatch(OneSecond(1, kT, {10, 20}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, Ack::Status::kApplied);
  EXPECT_EQ(r->watermark, 1u);
  EXPECT_EQ(r->expected, 2u);
  EXPECT_EQ(r->histograms, 1u);
  EXPECT_EQ(r->new_ids, 3u);  // host, metric, series
  EXPECT_EQ(store->Watermark("web-1/1"), 1u);
  EXPECT_EQ(TotalCount(*store, "disk.latency"), 2u);

  // The resend is recognised and nothing is written.
  r = store->ApplyBatch(OneSecond(1, kT, {10, 20}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kDuplicate);
  EXPECT_EQ(r->watermark, 1u);
  EXPECT_EQ(TotalCount(*store, "disk.latency"), 2u);

  // A gap: 3 arrives before 2.
  r = store->ApplyBatch(OneSecond(3, kT, {30}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kOutOfOrder);
  EXPECT_EQ(r->expected, 2u);
  EXPECT_EQ(store->Watermark("web-1/1"), 1u);
  EXPECT_EQ(TotalCount(*store, "disk.latency"), 2u);

  r = store->ApplyBatch(OneSecond(2, kT + 1, {30}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kApplied);
  EXPECT_EQ(r->new_ids, 0u);
  r = store->ApplyBatch(OneSecond(3, kT, {40}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kApplied);
  EXPECT_EQ(store->Watermark("web-1/1"), 3u);
  EXPECT_EQ(TotalCount(*store, "disk.latency"), 4u);

  // Another agent (a restarted one, say) has its own watermark.
  Batch other = OneSecond(1, kT, {50});
  other.agent = "web-1/2";
  r = store->ApplyBatch(other);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kApplied);
  EXPECT_EQ(store->Watermark("web-1/2"), 1u);
  EXPECT_EQ(store->Watermark("web-1/1"), 3u);
}

TEST(StoreTest, SkipRejectedMovesOnlyTheExpectedSequence) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  ASSERT_TRUE(store->ApplyBatch(OneSecond(1, kT, {1})).ok());
  Result<ApplyOutcome> past_gap = store->SkipRejected("web-1/1", 3);  // not judged before its turn
  ASSERT_TRUE(past_gap.ok());
  EXPECT_EQ(past_gap->status, Ack::Status::kOutOfOrder);
  EXPECT_EQ(past_gap->expected, 2u);
  EXPECT_EQ(store->SkipRejected("web-1/1", 1)->status, Ack::Status::kRejected);  // judged before
  EXPECT_EQ(store->Watermark("web-1/1"), 1u);
  Result<ApplyOutcome> next = store->SkipRejected("web-1/1", 2);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->status, Ack::Status::kRejected);
  EXPECT_EQ(next->watermark, 2u);
  EXPECT_EQ(store->Watermark("web-1/1"), 2u);
  EXPECT_EQ(TotalCount(*store, "disk.latency"), 1u);
  Result<ApplyOutcome> r = store->ApplyBatch(OneSecond(3, kT, {1}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kApplied);
  EXPECT_EQ(store->SkipRejected("new/1", 1)->status, Ack::Status::kRejected);
  EXPECT_EQ(store->Watermark("new/1"), 1u);
  EXPECT_EQ(store->SkipRejected("", 1).status().code(), Status::Code::kInvalidArgument);
}

TEST(StoreTest, RefusesBatchThatPointsPastItsSeries) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  Batch b = OneSecond(1, kT, {1});
  b.seconds[0].histograms[0].series = 5;
  Result<ApplyOutcome> r = store->ApplyBatch(b);
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store->Watermark("web-1/1"), 0u);
}

TEST(StoreTest, ReopenKeepsWatermarksCatalogAndData) {
  TempDir dir;
  {
    std::unique_ptr<Store> store = MustOpen(dir.path());
    Batch b = MakeBatch("db-7/1", 1, "db-7",
                        {Latency("disk.latency", "op=read"), Latency("disk.latency", "op=write"),
                         SeriesDef{"cpu.usage", MetricKind::kScalar, "1", ""}});
    b.labels = {{"role", "db"}};
    b.seconds.push_back(
        SecondDelta{kT, {{0, Encoded({100})}, {1, Encoded({200, 300})}}, {{2, 0.75}}});
    ASSERT_TRUE(store->ApplyBatch(b).ok());
    ASSERT_TRUE(store->SkipRejected("db-7/1", 2).ok());
    ASSERT_TRUE(store->Flush().ok());
    b.sequence = 3;
    b.seconds[0].time = kT + 1;
    ASSERT_TRUE(store->ApplyBatch(b).ok());  // only in the WAL at reopen
  }
  std::unique_ptr<Store> store = MustOpen(dir.path());
  EXPECT_EQ(store->Watermark("db-7/1"), 3u);
  Result<ApplyOutcome> r = store->ApplyBatch(MakeBatch("db-7/1", 3, "db-7", {}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kDuplicate);

  const std::vector<MetricInfo> metrics = store->Metrics();
  ASSERT_EQ(metrics.size(), 2u);
  EXPECT_EQ(metrics[0].name, "cpu.usage");
  EXPECT_EQ(metrics[0].kind, MetricKind::kScalar);
  EXPECT_EQ(metrics[0].unit, "1");
  EXPECT_EQ(metrics[1].name, "disk.latency");
  EXPECT_EQ(metrics[1].kind, MetricKind::kLatency);
  EXPECT_EQ(metrics[1].unit, "ns");

  EXPECT_EQ(store->ScalarAt("cpu.usage", "db-7", "", kT), 0.75);
  EXPECT_EQ(store->ScalarAt("cpu.usage", "db-7", "", kT + 2), std::nullopt);

  Result<HistogramAnswer> a = store->QueryHistograms({"disk.latency", kT, kT + 2, 1, "op", {}});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->groups, (std::vector<std::string>{"read", "write"}));
  ASSERT_EQ(a->cells.size(), 4u);
  EXPECT_EQ(a->cells[1].column, 0u);
  EXPECT_EQ(a->cells[1].group, 1u);
  EXPECT_EQ(a->cells[1].histogram.count(), 2u);
  EXPECT_EQ(a->cells[3].column, 1u);
  EXPECT_EQ(a->cells[3].histogram.max(), 300u);

  // New ids continue after the loaded ones, and labels group after the reopen.
  Batch more = MakeBatch("db-8/1", 1, "db-8", {Latency("disk.latency", "op=trim")});
  more.seconds.push_back(SecondDelta{kT, {{0, Encoded({5})}}, {}});
  r = store->ApplyBatch(more);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->new_ids, 2u);  // host and series; the metric is known
  a = store->QueryHistograms({"disk.latency", kT, kT + 2, 2, "role", {}});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->groups, (std::vector<std::string>{"(none)", "db"}));
  ASSERT_EQ(a->cells.size(), 2u);
  EXPECT_EQ(a->cells[0].histogram.count(), 1u);  // db-8 has no role label
  EXPECT_EQ(a->cells[1].histogram.count(), 6u);
}

// A database made before hist_10s, hist_60s and hist_600s existed: Open creates them and marks
// every minute `hist` holds pending (and every block `hist_60s` holds), once; the rollup pass
// fills them. Marking again (the markers lost) redoes the rollups without counting anything twice.
TEST(StoreTest, OpeningADatabaseWithoutRollupsBackfillsThem) {
  TempDir dir;
  const int64_t t0 = 1'699'999'980;  // a multiple of 60
  {
    std::unique_ptr<Store> store = MustOpen(dir.path());
    Batch b = MakeBatch("a/1", 1, "a", {Latency("m", "op=read"), Latency("m", "op=write")});
    for (int64_t s = 0; s < 300; s += 7) {
      b.seconds.push_back(
          SecondDelta{t0 + s, {{static_cast<uint32_t>(s % 2), Encoded({1000 + uint64_t(s)})}}, {}});
    }
    ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
  }
  auto drop_rollups = [&dir](bool drop_families) {
    rocksdb::DBOptions db_options;
    std::vector<std::string> names;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(db_options, dir.path(), &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    rocksdb::ColumnFamilyOptions cf;
    cf.merge_operator = std::make_shared<HistogramMergeOperator>();
    for (const std::string& n : names) families.emplace_back(n, cf);
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(db_options, dir.path(), families, &handles, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    for (rocksdb::ColumnFamilyHandle* h : handles) {
      if (h->GetName() == "meta") {
        ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), h, "Rollups").ok());
        ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), h, "Rollups600").ok());
      } else if (drop_families && (h->GetName() == "hist_10s" || h->GetName() == "hist_60s" ||
                                   h->GetName() == "hist_600s")) {
        ASSERT_TRUE(db->DropColumnFamily(h).ok());
      }
    }
    for (rocksdb::ColumnFamilyHandle* h : handles)
      ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
    ASSERT_TRUE(db->Close().ok());
  };

  for (bool drop_families : {true, false}) {  // an old database; then a backfill cut short
    drop_rollups(drop_families);
    std::unique_ptr<Store> store = MustOpen(dir.path());
    ASSERT_NE(store, nullptr);
    // Minutes 0..4 of the metric and of its fleet aggregate (aggregator/store/aggregates.h).
    EXPECT_EQ(store->PendingRollups(), 10u);
    // hist_60s's blocks are marked too when it was kept (the minutes mark theirs when rolled up).
    EXPECT_EQ(store->PendingBlocks(), drop_families ? 0u : 2u);
    ASSERT_EQ(*store->RollUp(true), 10u);
    EXPECT_EQ(store->PendingBlocks(), 0u);
    // One unaligned column over everything: 10 s and 60 s buckets in the middle.
    const HistogramQuery q{"m", t0 + 3, t0 + 297, 294, "op", {}};
    Result<HistogramAnswer> planned = store->QueryHistograms(q);
    Result<HistogramAnswer> seconds = store->QueryHistograms(q, QueryPlan::kFinestOnly);
    ASSERT_TRUE(planned.ok() && seconds.ok());
    ASSERT_EQ(planned->cells.size(), 2u);
    ASSERT_EQ(seconds->cells.size(), 2u);
    // Seconds 7, 14, ... 294 (42 of them, half per op); the backfill ran once, not twice.
    EXPECT_EQ(planned->cells[0].histogram.count() + planned->cells[1].histogram.count(), 42u);
    EXPECT_TRUE(planned->cells[0].histogram == seconds->cells[0].histogram);
    EXPECT_TRUE(planned->cells[1].histogram == seconds->cells[1].histogram);
    // Aligned minutes read hist_60s alone.
    Result<HistogramAnswer> minutes = store->QueryHistograms({"m", t0, t0 + 300, 60, "", {}});
    ASSERT_TRUE(minutes.ok());
    uint64_t n = 0;
    for (const QueryCell& c : minutes->cells) n += c.histogram.count();
    EXPECT_EQ(n, 43u);  // second 0 too
    // The block [t0 - 180, t0 + 420) read from hist_600s alone.
    const HistogramQuery block{"m", t0 - 180, t0 + 420, 600, "op", {}};
    planned = store->QueryHistograms(block);
    seconds = store->QueryHistograms(block, QueryPlan::kFinestOnly);
    ASSERT_TRUE(planned.ok() && seconds.ok());
    ASSERT_EQ(planned->cells.size(), 2u);
    EXPECT_EQ(planned->cells[0].histogram.count() + planned->cells[1].histogram.count(), 43u);
    EXPECT_TRUE(planned->cells[0].histogram == seconds->cells[0].histogram);
    EXPECT_TRUE(planned->cells[1].histogram == seconds->cells[1].histogram);
  }
}

// The Store's own thread rolls up quiet minutes; the destructor stops it.
TEST(StoreTest, BackgroundPassRollsUpQuietMinutes) {
  TempDir dir;
  StoreOptions options = TestOptions();
  options.rollup_interval_ms = 20;
  options.rollup_quiet_ms = 0;
  std::unique_ptr<Store> store = std::move(Store::Open(dir.path(), options)).value();
  const int64_t t0 = 1'699'999'980;  // a multiple of 60
  Batch b = MakeBatch("a/1", 1, "a", {Latency("m")});
  for (int64_t s = 0; s < 180; s += 5)
    b.seconds.push_back(SecondDelta{t0 + s, {{0, Encoded({7})}}, {}});
  ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
  for (int i = 0; i < 500 && store->PendingRollups() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(store->PendingRollups(), 0u);
  // Minutes read from hist_60s alone: 36 values.
  Result<HistogramAnswer> a = store->QueryHistograms({"m", t0, t0 + 180, 60, "", {}});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->cells.size(), 3u);
  EXPECT_EQ(a->cells[0].histogram.count() + a->cells[1].histogram.count() +
                a->cells[2].histogram.count(),
            36u);
}

// Watermarks of agents idle for agent_idle_seconds are deleted (and stay deleted after a reopen);
// an active agent's stay. A pruned agent that comes back is new: outOfOrder, expected 1.
TEST(StoreTest, PrunesTheWatermarksOfIdleAgentsOnly) {
  TempDir dir;
  int64_t now = kT;
  StoreOptions options = TestOptions();
  options.agent_idle_seconds = 100;
  options.clock = [&now] { return now; };
  std::unique_ptr<Store> store = std::move(Store::Open(dir.path(), options)).value();
  Batch other = OneSecond(1, kT, {7});
  other.agent = "db-1/9";
  other.host = "db-1";
  ASSERT_EQ(store->ApplyBatch(OneSecond(1, kT, {1}))->status, Ack::Status::kApplied);
  ASSERT_EQ(store->ApplyBatch(OneSecond(2, kT, {2}))->status, Ack::Status::kApplied);
  now = kT + 60;
  ASSERT_EQ(store->ApplyBatch(other)->status, Ack::Status::kApplied);

  now = kT + 100;  // web-1/1 idle exactly 100 s: kept
  EXPECT_EQ(*store->PruneIdleAgents(), 0u);
  now = kT + 101;
  EXPECT_EQ(*store->PruneIdleAgents(), 1u);
  EXPECT_EQ(store->Watermark("web-1/1"), 0u);
  EXPECT_EQ(store->Watermark("db-1/9"), 1u);
  EXPECT_EQ(store->Health().agents, 1u);
  EXPECT_EQ(store->Health().agents_pruned, 1u);

  // Reopened (Open prunes too, before any batch): still gone, the other still there; the data
  // and the catalog stay.
  store.reset();
  store = std::move(Store::Open(dir.path(), options)).value();
  EXPECT_EQ(store->Watermark("web-1/1"), 0u);
  EXPECT_EQ(store->Watermark("db-1/9"), 1u);
  EXPECT_EQ(TotalCount(*store, "disk.latency"), 3u);  // 1, 2 and 7
  // The agent's next batch: it has to start again from 1 (its shipper takes a new incarnation).
  Result<ApplyOutcome> r = store->ApplyBatch(OneSecond(3, kT, {3}));
  EXPECT_EQ(r->status, Ack::Status::kOutOfOrder);
  EXPECT_EQ(r->expected, 1u);

  // Past db-1/9's idle time at the next open.
  store.reset();
  now = kT + 161;
  store = std::move(Store::Open(dir.path(), options)).value();
  EXPECT_EQ(store->Watermark("db-1/9"), 0u);
  EXPECT_EQ(store->Health().agents_pruned, 1u);
}

// A background error is reported in Health until a Resume clears it.
TEST(StoreTest, HealthReportsABackgroundErrorUntilResumed) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  EXPECT_EQ(store->Health().background_error, "");
  EXPECT_TRUE(store->ResumeIfDue());
  // As RocksDB's listener would be told (a real one: tests/disk_full_system_test.cc).
  BackgroundErrors errors;
  errors.Set("flush", "IO error: No space left on device");
  EXPECT_EQ(errors.Current(), "background error in flush: IO error: No space left on device");
  const auto t0 = BackgroundErrors::Clock::now();
  EXPECT_TRUE(errors.ResumeDue(t0));
  errors.ResumeDone(rocksdb::Status::IOError("still full"), t0);
  EXPECT_FALSE(errors.ResumeDue(t0 + std::chrono::milliseconds(999)));
  EXPECT_TRUE(errors.ResumeDue(t0 + std::chrono::seconds(1)));
  errors.ResumeDone(rocksdb::Status::IOError("still full"), t0);
  EXPECT_FALSE(errors.ResumeDue(t0 + std::chrono::milliseconds(1999)));  // doubled
  errors.ResumeDone(rocksdb::Status::OK(), t0);
  EXPECT_EQ(errors.Current(), "");
  EXPECT_FALSE(errors.ResumeDue(t0 + std::chrono::hours(1)));
  EXPECT_EQ(errors.errors(), 1u);
  EXPECT_EQ(errors.recoveries(), 1u);
  Result<uint64_t> pending = store->IntProperty("rocksdb.estimate-pending-compaction-bytes");
  ASSERT_TRUE(pending.ok()) << pending.status().ToString();
  EXPECT_FALSE(store->IntProperty("rocksdb.no-such-property").ok());
}

}  // namespace
}  // namespace trailmap::aggregator

namespace trailmap::aggregator {
namespace {

// The cache warming after Open reads exactly each metric's newest warm_cache_seconds of `hist`
// and `stacks`: here disk.latency's seconds kT..kT+999 (its newest 600: 600 keys), net.latency's
// kT-500..kT-401 (all 100, each within 600 s of its newest), the same again of their fleet
// pre-aggregates (metrics of their own: aggregates.h), and cpu.stacks' kT..kT+99 (100).
TEST(StoreTest, WarmsTheCacheWithEachMetricsNewestSeconds) {
  TempDir dir;
  StoreOptions off = TestOptions();
  off.warm_cache_seconds = 0;
  {
    Result<std::unique_ptr<Store>> store = Store::Open(dir.path(), off);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_TRUE((*store)->CacheWarmed());  // off: nothing to wait for
    Batch b = MakeBatch("web-1/1", 1, "web-1",
                        {Latency("disk.latency"), Latency("net.latency"),
                         SeriesDef{"cpu.stacks", MetricKind::kStacks, "samples", ""}});
    b.frames = {{1, "main"}};
    b.stacks = {{1, {1}}};
    for (int64_t t = 0; t < 1000; ++t) {
      SecondDelta s{kT + t, {HistogramDelta{0, Encoded({10})}}, {}, {}};
      if (t < 100) {
        b.seconds.push_back(SecondDelta{kT - 500 + t, {HistogramDelta{1, Encoded({20})}}, {}, {}});
        s.stacks.push_back(StackCount{2, 1, 3});
      }
      b.seconds.push_back(std::move(s));
    }
    std::sort(b.seconds.begin(), b.seconds.end(),
              [](const SecondDelta& x, const SecondDelta& y) { return x.time < y.time; });
    Result<ApplyOutcome> r = (*store)->ApplyBatch(b);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->status, Ack::Status::kApplied);
    EXPECT_EQ((*store)->WarmedKeys(), 0u);
  }
  StoreOptions on = TestOptions();
  on.warm_cache_seconds = 600;
  Result<std::unique_ptr<Store>> store = Store::Open(dir.path(), on);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  for (int i = 0; i < 1000 && !(*store)->CacheWarmed(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE((*store)->CacheWarmed());
  EXPECT_EQ((*store)->WarmedKeys(), 2 * (600u + 100u) + 100u);
}

}  // namespace
}  // namespace trailmap::aggregator
