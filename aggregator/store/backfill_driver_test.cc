// The backfill's contract (backfill_driver.h): every minute a store held before its aggregates
// were configured is written once, a minute written to meanwhile is read again, a store without
// data needs none, and one started with backfill off leaves the aggregates unread. The whole
// path against the hosts' answers, with a kill in the middle, is aggregates_test.cc's.
#include "aggregator/store/backfill_driver.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

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

constexpr int64_t kMinute = 1'700'000'040;  // a multiple of 60

// Batch `sequence` of agent `agent` on host `host`: one event at second 7 of each minute given.
Batch Events(const std::string& agent, uint64_t sequence, const std::string& host,
             std::initializer_list<int64_t> minutes) {
  Batch b = MakeBatch(agent, sequence, host, {Latency("disk.latency")});
  for (int64_t m : minutes) b.seconds.push_back(SecondDelta{m + 7, {{0, Encoded({1000})}}, {}});
  return b;
}

// A store that held three minutes of two hosts before its fleet aggregate existed.
void WriteWithoutAggregates(const std::string& dir) {
  StoreOptions none = ManualOptions();
  none.aggregates.enabled = false;
  std::unique_ptr<Store> store = OpenTestStore(dir, none);
  ASSERT_NE(store, nullptr);
  for (const char* host : {"a", "b"}) {
    const Batch b =
        Events(std::string(host) + "/1", 1, host, {kMinute, kMinute + 60, kMinute + 120});
    ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
  }
}

TEST(BackfillDriverTest, WritesEachMinuteOnceAndRereadsOneWrittenMeanwhile) {
  TempDir dir;
  WriteWithoutAggregates(dir.path());
  StoreOptions options = ManualOptions();
  Store* live = nullptr;
  int writes_meanwhile = 0;
  // Before the first minute's write: an ingest write to that same minute.
  options.before_backfill_write = [&live, &writes_meanwhile](uint32_t, int64_t minute) {
    if (writes_meanwhile > 0) return;
    ++writes_meanwhile;
    ASSERT_EQ(minute, kMinute);
    ASSERT_EQ(live->ApplyBatch(Events("c/1", 1, "c", {kMinute}))->status, Ack::Status::kApplied);
  };
  std::unique_ptr<Store> store = OpenTestStore(dir.path(), options);
  ASSERT_NE(store, nullptr);
  live = store.get();
  EXPECT_EQ(store->BackfillMinutesLeft(), 3u);
  EXPECT_EQ(StoredEvents(*store, "disk.latency", /*aggregate=*/true), 0u);

  Result<size_t> one = store->BackfillAggregates(1);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(*one, 1u);  // the minute written to meanwhile, read again and written once
  EXPECT_EQ(writes_meanwhile, 1);
  EXPECT_EQ(store->BackfillMinutesLeft(), 2u);
  // Minute 0: a, b (backfilled) and c (merged at ingest, then in the minute read again).
  EXPECT_EQ(StoredEvents(*store, "disk.latency", true), 3u);

  Result<size_t> rest = store->BackfillAggregates();
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(*rest, 2u);
  EXPECT_EQ(store->BackfillMinutesLeft(), 0u);
  EXPECT_EQ(StoredEvents(*store, "disk.latency", true), StoredEvents(*store, "disk.latency"));
  EXPECT_EQ(StoredEvents(*store, "disk.latency"), 7u);

  // Done, and recorded: a reopen has nothing left to do.
  store.reset();
  store = OpenTestStore(dir.path(), ManualOptions());
  EXPECT_EQ(store->BackfillMinutesLeft(), 0u);
  EXPECT_EQ(*store->BackfillAggregates(), 0u);
}

TEST(BackfillDriverTest, AStoreWithoutDataNeedsNone) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenTestStore(dir.path(), ManualOptions());
  EXPECT_EQ(store->BackfillMinutesLeft(), 0u);
  EXPECT_EQ(*store->BackfillAggregates(), 0u);
}

TEST(BackfillDriverTest, WithBackfillOffNothingIsWritten) {
  TempDir dir;
  WriteWithoutAggregates(dir.path());
  StoreOptions off = ManualOptions();
  off.aggregates.backfill = false;
  std::unique_ptr<Store> store = OpenTestStore(dir.path(), off);
  EXPECT_EQ(store->BackfillMinutesLeft(), 0u);
  EXPECT_EQ(*store->BackfillAggregates(), 0u);
  EXPECT_EQ(StoredEvents(*store, "disk.latency", true), 0u);
}

// With a thread (rollup_interval_ms > 0) the backfill runs by itself and its thread ends.
TEST(BackfillDriverTest, ItsThreadBackfillsByItself) {
  TempDir dir;
  WriteWithoutAggregates(dir.path());
  StoreOptions threaded = ManualOptions();
  threaded.rollup_interval_ms = 5;
  std::unique_ptr<Store> store = OpenTestStore(dir.path(), threaded);
  for (int i = 0; i < 1000 && store->BackfillMinutesLeft() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(store->BackfillMinutesLeft(), 0u);
  EXPECT_EQ(StoredEvents(*store, "disk.latency", true), 6u);
  EXPECT_EQ(store->ThreadFailures(), 0u);
}

}  // namespace
}  // namespace trailmap::aggregator
