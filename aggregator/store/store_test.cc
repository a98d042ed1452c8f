#include "aggregator/store/store.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <chrono>

#include "aggregator/scan/store_query.h"
#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::Encoded;
using testing::Latency;
using testing::MakeBatch;
using testing::ManualOptions;
using testing::OpenTestStore;
using testing::TempDir;

constexpr int64_t kT = 1'700'000'000;

TEST(StoreTest, ReopenKeepsWatermarksCatalogAndData) {
  TempDir dir;
  {
    std::unique_ptr<Store> store = OpenTestStore(dir.path(), ManualOptions());
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
  std::unique_ptr<Store> store = OpenTestStore(dir.path(), ManualOptions());
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

  Result<HistogramAnswer> a = QueryHistograms(*store, {"disk.latency", kT, kT + 2, 1, "op", {}});
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
  a = QueryHistograms(*store, {"disk.latency", kT, kT + 2, 2, "role", {}});
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->groups, (std::vector<std::string>{"(none)", "db"}));
  ASSERT_EQ(a->cells.size(), 2u);
  EXPECT_EQ(a->cells[0].histogram.count(), 1u);  // db-8 has no role label
  EXPECT_EQ(a->cells[1].histogram.count(), 6u);
}

// A background error is reported in Health until a Resume clears it.
TEST(StoreTest, HealthReportsABackgroundErrorUntilResumed) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenTestStore(dir.path(), ManualOptions());
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
