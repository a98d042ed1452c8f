// The rollup driver's contract (rollup_driver.h) as the Store runs it: a database from before
// the rollups has every minute and block marked at open and rolled up once, and the driver's
// thread rolls up quiet minutes by itself. The rollups' exactness, late writes, failures and
// retention are rollup_test.cc's (a process of its own, for its failpoint).
#include "aggregator/store/rollup_driver.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <chrono>
#include <thread>

#include "aggregator/scan/store_query.h"
#include "aggregator/store/histogram_merge_operator.h"
#include "aggregator/store/store.h"
#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::Encoded;
using testing::Latency;
using testing::MakeBatch;
using testing::ManualOptions;
using testing::TempDir;

// A database made before hist_10s, hist_60s and hist_600s existed: Open creates them and marks
// every minute `hist` holds pending (and every block `hist_60s` holds), once; the rollup pass
// fills them. Marking again (the markers lost) redoes the rollups without counting anything twice.
TEST(RollupDriverTest, OpeningADatabaseWithoutRollupsBackfillsThem) {
  TempDir dir;
  const int64_t t0 = 1'699'999'980;  // a multiple of 60
  {
    std::unique_ptr<Store> store = testing::OpenTestStore(dir.path(), ManualOptions());
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
    std::unique_ptr<Store> store = testing::OpenTestStore(dir.path(), ManualOptions());
    ASSERT_NE(store, nullptr);
    // Minutes 0..4 of the metric and of its fleet aggregate (aggregator/store/aggregates.h).
    EXPECT_EQ(store->PendingRollups(), 10u);
    // hist_60s's blocks are marked too when it was kept (the minutes mark theirs when rolled up).
    EXPECT_EQ(store->PendingBlocks(), drop_families ? 0u : 2u);
    ASSERT_EQ(*store->RollUp(true), 10u);
    EXPECT_EQ(store->PendingBlocks(), 0u);
    // One unaligned column over everything: 10 s and 60 s buckets in the middle.
    const HistogramQuery q{"m", t0 + 3, t0 + 297, 294, "op", {}};
    Result<HistogramAnswer> planned = QueryHistograms(*store, q);
    Result<HistogramAnswer> seconds = QueryHistograms(*store, q, QueryPlan::kFinestOnly);
    ASSERT_TRUE(planned.ok() && seconds.ok());
    ASSERT_EQ(planned->cells.size(), 2u);
    ASSERT_EQ(seconds->cells.size(), 2u);
    // Seconds 7, 14, ... 294 (42 of them, half per op); the backfill ran once, not twice.
    EXPECT_EQ(planned->cells[0].histogram.count() + planned->cells[1].histogram.count(), 42u);
    EXPECT_TRUE(planned->cells[0].histogram == seconds->cells[0].histogram);
    EXPECT_TRUE(planned->cells[1].histogram == seconds->cells[1].histogram);
    // Aligned minutes read hist_60s alone.
    Result<HistogramAnswer> minutes = QueryHistograms(*store, {"m", t0, t0 + 300, 60, "", {}});
    ASSERT_TRUE(minutes.ok());
    uint64_t n = 0;
    for (const QueryCell& c : minutes->cells) n += c.histogram.count();
    EXPECT_EQ(n, 43u);  // second 0 too
    // The block [t0 - 180, t0 + 420) read from hist_600s alone.
    const HistogramQuery block{"m", t0 - 180, t0 + 420, 600, "op", {}};
    planned = QueryHistograms(*store, block);
    seconds = QueryHistograms(*store, block, QueryPlan::kFinestOnly);
    ASSERT_TRUE(planned.ok() && seconds.ok());
    ASSERT_EQ(planned->cells.size(), 2u);
    EXPECT_EQ(planned->cells[0].histogram.count() + planned->cells[1].histogram.count(), 43u);
    EXPECT_TRUE(planned->cells[0].histogram == seconds->cells[0].histogram);
    EXPECT_TRUE(planned->cells[1].histogram == seconds->cells[1].histogram);
  }
}

// The driver's own thread rolls up quiet minutes; the destructor stops it.
TEST(RollupDriverTest, BackgroundPassRollsUpQuietMinutes) {
  TempDir dir;
  StoreOptions options = ManualOptions();
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
  Result<HistogramAnswer> a = QueryHistograms(*store, {"m", t0, t0 + 180, 60, "", {}});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->cells.size(), 3u);
  EXPECT_EQ(
      a->cells[0].histogram.count() + a->cells[1].histogram.count() + a->cells[2].histogram.count(),
      36u);
}

}  // namespace
}  // namespace trailmap::aggregator
