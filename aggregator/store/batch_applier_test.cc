// The batch applier's rules (batch_applier.h): exactly once, in sequence, a group judged batch
// after batch, rejected batches skipped in their turn, idle agents forgotten, and a failed write
// taking everything back. Through the Store that owns it, and (the failed write) on its own.
#include "aggregator/store/batch_applier.h"

#include <gtest/gtest.h>
#include <memory>
#include <string>

#include "aggregator/store/aggregates.h"
#include "aggregator/store/backfill_driver.h"
#include "aggregator/store/catalog.h"
#include "aggregator/store/database.h"
#include "aggregator/store/rollup_driver.h"
#include "aggregator/store/store.h"
#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::Encoded;
using testing::Latency;
using testing::MakeBatch;
using testing::ManualOptions;
using testing::OpenTestStore;
using testing::StoredEvents;
using testing::TempDir;

constexpr int64_t kT = 1'700'000'000;

// One second of one latency histogram holding `values`, from agent "web-1/1".
Batch OneSecond(uint64_t sequence, int64_t time, std::initializer_list<uint64_t> values) {
  Batch b = MakeBatch("web-1/1", sequence, "web-1", {Latency("disk.latency", "op=read")});
  b.seconds.push_back(SecondDelta{time, {HistogramDelta{0, Encoded(values)}}, {}});
  return b;
}

TEST(BatchApplierTest, GroupCommitJudgesEachBatchAfterTheOnesBeforeIt) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenTestStore(dir.path(), ManualOptions());
  Batch other = OneSecond(1, kT, {7});
  other.agent = "db-1/9";
  other.host = "db-1";
  Batch malformed = OneSecond(3, kT, {1});
  malformed.agent = "";
  const std::vector<Batch> batches = {OneSecond(1, kT, {10}),
                                      OneSecond(2, kT + 1, {20, 30}),
                                      OneSecond(1, kT, {10}),
                                      OneSecond(4, kT, {40}),
                                      other,
                                      malformed,
                                      OneSecond(3, kT + 2, {50})};
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
  EXPECT_EQ(StoredEvents(*store, "disk.latency"), 5u);  // 10, 20, 30, 7, 50

  // And it all survives a reopen: one write held the group.
  store.reset();
  store = OpenTestStore(dir.path(), ManualOptions());
  EXPECT_EQ(store->Watermark("web-1/1"), 3u);
  EXPECT_EQ(StoredEvents(*store, "disk.latency"), 5u);
}

TEST(BatchApplierTest, AppliesInSequenceOnceAndReportsGaps) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenTestStore(dir.path(), ManualOptions());
  EXPECT_EQ(store->Watermark("web-1/1"), 0u);

  Result<ApplyOutcome> r = store->ApplyBatch(OneSecond(1, kT, {10, 20}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, Ack::Status::kApplied);
  EXPECT_EQ(r->watermark, 1u);
  EXPECT_EQ(r->expected, 2u);
  EXPECT_EQ(r->histograms, 1u);
  EXPECT_EQ(r->new_ids, 3u);  // host, metric, series
  EXPECT_EQ(store->Watermark("web-1/1"), 1u);
  EXPECT_EQ(StoredEvents(*store, "disk.latency"), 2u);

  // The resend is recognised and nothing is written.
  r = store->ApplyBatch(OneSecond(1, kT, {10, 20}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kDuplicate);
  EXPECT_EQ(r->watermark, 1u);
  EXPECT_EQ(StoredEvents(*store, "disk.latency"), 2u);

  // A gap: 3 arrives before 2.
  r = store->ApplyBatch(OneSecond(3, kT, {30}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kOutOfOrder);
  EXPECT_EQ(r->expected, 2u);
  EXPECT_EQ(store->Watermark("web-1/1"), 1u);
  EXPECT_EQ(StoredEvents(*store, "disk.latency"), 2u);

  r = store->ApplyBatch(OneSecond(2, kT + 1, {30}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kApplied);
  EXPECT_EQ(r->new_ids, 0u);
  r = store->ApplyBatch(OneSecond(3, kT, {40}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kApplied);
  EXPECT_EQ(store->Watermark("web-1/1"), 3u);
  EXPECT_EQ(StoredEvents(*store, "disk.latency"), 4u);

  // Another agent (a restarted one, say) has its own watermark.
  Batch other = OneSecond(1, kT, {50});
  other.agent = "web-1/2";
  r = store->ApplyBatch(other);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kApplied);
  EXPECT_EQ(store->Watermark("web-1/2"), 1u);
  EXPECT_EQ(store->Watermark("web-1/1"), 3u);
}

TEST(BatchApplierTest, SkipRejectedMovesOnlyTheExpectedSequence) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenTestStore(dir.path(), ManualOptions());
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
  EXPECT_EQ(StoredEvents(*store, "disk.latency"), 1u);
  Result<ApplyOutcome> r = store->ApplyBatch(OneSecond(3, kT, {1}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kApplied);
  EXPECT_EQ(store->SkipRejected("new/1", 1)->status, Ack::Status::kRejected);
  EXPECT_EQ(store->Watermark("new/1"), 1u);
  EXPECT_EQ(store->SkipRejected("", 1).status().code(), Status::Code::kInvalidArgument);
}

TEST(BatchApplierTest, RefusesBatchThatPointsPastItsSeries) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenTestStore(dir.path(), ManualOptions());
  Batch b = OneSecond(1, kT, {1});
  b.seconds[0].histograms[0].series = 5;
  Result<ApplyOutcome> r = store->ApplyBatch(b);
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(store->Watermark("web-1/1"), 0u);
}

// Watermarks of agents idle for agent_idle_seconds are deleted (and stay deleted after a reopen);
// an active agent's stay. A pruned agent that comes back is new: outOfOrder, expected 1.
TEST(BatchApplierTest, PrunesTheWatermarksOfIdleAgentsOnly) {
  TempDir dir;
  int64_t now = kT;
  StoreOptions options = ManualOptions();
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
  EXPECT_EQ(StoredEvents(*store, "disk.latency"), 3u);  // 1, 2 and 7
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

// The applier on its own, over a database whose writes fail: every batch of the group gets the
// error, and the watermarks, the catalog's new ids and the hosts' progress are as before, so
// the resend is applied in full once writes are taken again.
TEST(BatchApplierTest, AFailedWriteTakesBackWatermarksAndNewIds) {
  TempDir dir;
  const StoreOptions options = ManualOptions();
  Result<std::unique_ptr<Database>> opened = Database::Open(dir.path(), options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Database& db = **opened;
  Catalog catalog;
  Aggregates aggregates(options.aggregates);
  RollupDriver rollups(options, db, catalog);
  BackfillDriver backfill(options, db, catalog, aggregates, rollups);
  BatchApplier applier(options, db, catalog, aggregates, rollups, backfill);

  db.background_errors().Set("flush", "IO error: injected");
  const Batch first = OneSecond(1, kT, {10});
  const Batch second = OneSecond(2, kT + 1, {20});
  std::vector<Result<ApplyOutcome>> failed = applier.ApplyBatches({&first, &second});
  ASSERT_EQ(failed.size(), 2u);
  for (const Result<ApplyOutcome>& r : failed) {
    EXPECT_EQ(r.status().code(), Status::Code::kIOError);
    EXPECT_NE(r.status().message().find("writing 2 batch(es): IO error: not written while RocksDB "
                                        "holds a background error in flush: IO error: injected"),
              std::string::npos)
        << r.status().ToString();
  }
  EXPECT_EQ(applier.Watermark("web-1/1"), 0u);
  EXPECT_FALSE(catalog.FindMetric("disk.latency").has_value());
  EXPECT_FALSE(catalog.FindHost("web-1").has_value());
  EXPECT_TRUE(applier.HostsThrough({}).empty());
  // The minute of the metric and of its fleet aggregate, marked pending before the write and left
  // so: a pass rolls them up to nothing.
  EXPECT_EQ(rollups.minutes().size(), 2u);
  EXPECT_NE(db.LastError().find("writing 2 batch(es)"), std::string::npos) << db.LastError();

  ASSERT_TRUE(db.ResumeIfDue());
  std::vector<Result<ApplyOutcome>> applied = applier.ApplyBatches({&first, &second});
  ASSERT_TRUE(applied[0].ok() && applied[1].ok());
  EXPECT_EQ(applied[0]->status, Ack::Status::kApplied);
  EXPECT_EQ(applied[0]->new_ids, 3u);  // host, metric, series: made again
  EXPECT_EQ(applied[1]->status, Ack::Status::kApplied);
  EXPECT_EQ(applier.Watermark("web-1/1"), 2u);
  EXPECT_EQ(applier.NewestSecond(), kT + 1);
}

}  // namespace
}  // namespace trailmap::aggregator
