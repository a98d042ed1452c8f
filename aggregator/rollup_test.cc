// The rollup pass against late writes, aged-out minutes and failing minutes (aggregator/rollup.h),
// with an injected clock. Its own test binary: the failpoint table (core/failpoint.h) is read once
// per process, and this one sets rollup.minute=error@1 before anything reads it.
#include "aggregator/rollup.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <stdlib.h>

#include <map>

#include "aggregator/store.h"
#include "aggregator/testing.h"
#include "core/counts.h"

namespace trailmap::aggregator {
namespace {

using testing::Encoded;
using testing::Latency;
using testing::MakeBatch;
using testing::TempDir;

// The first minute the pass tries fails (FailingMinuteIsSkippedReportedAndRetried).
const bool kFailpointsSet = setenv("TRAILMAP_FAILPOINTS", "rollup.minute=error@1", 1) == 0;

constexpr int64_t kRetention = 2 * 86400;
constexpr int64_t kNow = 1'700'006'400;  // a multiple of 60

using Clock = PendingMinutes::Clock;

TEST(PendingMinutesTest, AFailedMinuteWaitsOutADoublingBackoff) {
  PendingMinutes p;
  const Clock::time_point t0 = Clock::now();
  p.Touch(1, 60);
  p.Touch(1, 120);
  EXPECT_EQ(p.Ready(Clock::duration::zero(), 16, t0).size(), 2u);
  EXPECT_EQ(p.Failed(1, 60, t0), 1u);
  std::vector<PendingMinutes::Minute> ready = p.Ready(Clock::duration::zero(), 16, t0);
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].start, 120);
  EXPECT_EQ(p.Ready(Clock::duration::zero(), 16, t0, /*ignore_backoff=*/true).size(), 2u);
  EXPECT_EQ(p.Ready(Clock::duration::zero(), 16, t0 + std::chrono::seconds(1)).size(), 2u);
  // Second failure: 2 s; ninth and later: the cap.
  EXPECT_EQ(p.Failed(1, 60, t0), 2u);
  EXPECT_EQ(p.Ready(Clock::duration::zero(), 16, t0 + std::chrono::milliseconds(1999)).size(), 1u);
  EXPECT_EQ(p.Ready(Clock::duration::zero(), 16, t0 + std::chrono::seconds(2)).size(), 2u);
  for (int i = 0; i < 20; ++i) p.Failed(1, 60, t0);
  EXPECT_EQ(p.Ready(Clock::duration::zero(), 16, t0 + PendingMinutes::kMaxBackoff -
                                                   std::chrono::seconds(1)).size(), 1u);
  EXPECT_EQ(p.Ready(Clock::duration::zero(), 16, t0 + PendingMinutes::kMaxBackoff).size(), 2u);
}

TEST(PendingMinutesTest, TouchIfPendingBumpsOnlyAPendingMinute) {
  PendingMinutes p;
  EXPECT_FALSE(p.TouchIfPending(1, 60));
  EXPECT_EQ(p.size(), 0u);
  p.Touch(1, 60);
  const uint64_t g = p.Ready(Clock::duration::zero(), 1)[0].generation;
  EXPECT_TRUE(p.Unchanged(1, 60, g));
  EXPECT_TRUE(p.TouchIfPending(1, 60));
  EXPECT_FALSE(p.Unchanged(1, 60, g));
  EXPECT_FALSE(p.Clear(1, 60, g));
  EXPECT_TRUE(p.Drop(1, 60));
  EXPECT_EQ(p.size(), 0u);
}

// A store with the 1 s retention kRetention and a clock the test moves.
struct Fixture {
  TempDir dir;
  int64_t now = kNow;
  std::unique_ptr<Store> store;
  uint64_t sequence = 0;

  explicit Fixture(std::function<void(uint32_t, int64_t)> hook = {}) {
    StoreOptions o;
    o.sync = false;
    o.rollup_interval_ms = 0;
    o.rollup_quiet_ms = 0;
    o.retention_seconds = {kRetention, 0, 0};
    o.clock = [this] { return now; };
    o.before_rollup_write = std::move(hook);
    store = std::move(Store::Open(dir.path(), o)).value();
  }
  // `n` values at second `t`.
  void Write(int64_t t, int n) {
    Batch b = MakeBatch("a/1", ++sequence, "a", {Latency("m")});
    Histogram h;
    for (int i = 0; i < n; ++i) h.Record(1000 + i);
    b.seconds.push_back(SecondDelta{t, {{0, h.Encode()}}, {}});
    ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
  }
  // The count of minute [m, m + 60) as hist_60s holds it (the minute must not be pending).
  uint64_t Minute(int64_t m) {
    Result<HistogramAnswer> a = store->QueryHistograms({"m", m, m + 60, 60, "", {}});
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    uint64_t n = 0;
    for (const QueryCell& c : a->cells) n += c.histogram.count();
    return n;
  }
  uint64_t Seconds(int64_t m) {
    Result<HistogramAnswer> a =
        store->QueryHistograms({"m", m, m + 60, 60, "", {}}, QueryPlan::kFinestOnly);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    uint64_t n = 0;
    for (const QueryCell& c : a->cells) n += c.histogram.count();
    return n;
  }
};

// rollup.minute=error@1: the first minute tried fails, the pass goes on with the next, and the
// failed one is retried after its backoff. FIRST in this file: the failpoint fires at the first
// minute the process rolls up.
TEST(RollupTest, FailingMinuteIsSkippedReportedAndRetried) {
  ASSERT_TRUE(kFailpointsSet);
  const int64_t first = kNow - 180, second = kNow - 120;
  Fixture f;
  f.Write(first + 1, 2);
  f.Write(second + 1, 6);
  EXPECT_EQ(f.store->PendingRollups(), 2u);
  Result<size_t> done = f.store->RollUp(true);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(*done, 1u);  // the second minute, not stopped by the first
  EXPECT_EQ(f.store->Health().rollup_failures, 1u);
  EXPECT_EQ(f.store->PendingRollups(), 1u);
  EXPECT_EQ(f.Minute(second), 6u);
  EXPECT_EQ(f.Minute(first), 2u);  // pending: read from `hist`, still exact
  // The thread's pass respects the backoff (1 s after the first failure)...
  EXPECT_EQ(*f.store->RollUp(false), 0u);
  EXPECT_EQ(f.store->PendingRollups(), 1u);
  // ... and the minute is done once it has passed (RollUp(true) ignores it).
  EXPECT_EQ(*f.store->RollUp(true), 1u);
  EXPECT_EQ(f.store->PendingRollups(), 0u);
  EXPECT_EQ(f.Minute(first), 2u);
  EXPECT_EQ(f.store->Health().rollup_failures, 1u);
}

// A late second (merged straight into the rollups) that lands while the pass holds a minute it
// computed from an older snapshot: the pass must not Put over it.
TEST(RollupTest, ALateWriteDuringThePassIsNotOverwritten) {
  // The minute, fresh when first written, late (past the retention less an hour) by the time
  // the second write comes.
  const int64_t minute = kNow - 60;
  Fixture* self = nullptr;
  bool late_written = false;
  Fixture f([&](uint32_t, int64_t m) {
    if (m != minute || late_written) return;
    late_written = true;
    self->now = minute + kRetention - 1800;  // half an hour before the minute ages out
    self->Write(minute + 30, 5);
  });
  self = &f;
  f.Write(minute + 10, 3);
  EXPECT_EQ(f.store->PendingRollups(), 1u);
  // The pass computes 3, the hook writes the late 5 before the pass writes, the pass sees the
  // minute changed, drops what it computed and does it again from a newer snapshot.
  Result<size_t> done = f.store->RollUp(true);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(late_written);
  EXPECT_EQ(*done, 1u);
  EXPECT_EQ(f.store->PendingRollups(), 0u);
  EXPECT_EQ(f.Minute(minute), 8u);
  EXPECT_EQ(f.Seconds(minute), 8u);
  EXPECT_EQ(f.store->Health().rollup_failures, 0u);
}

// A late second into a minute that is not pending adds to its rollups without marking it.
TEST(RollupTest, ALateWriteAddsToTheRollupsOfARolledUpMinute) {
  const int64_t minute = kNow - 60;
  Fixture f;
  f.Write(minute + 10, 3);
  ASSERT_EQ(*f.store->RollUp(true), 1u);
  f.now = minute + kRetention - 1800;
  f.Write(minute + 30, 5);
  EXPECT_EQ(f.store->PendingRollups(), 0u);
  EXPECT_EQ(f.Minute(minute), 8u);
}

// A pending minute some of whose seconds aged out: the rollup is not rewritten from what is left.
TEST(RollupTest, APendingMinutePastTheRetentionKeepsItsRollups) {
  const int64_t minute = kNow - 60;
  Fixture f;
  f.Write(minute + 10, 3);
  ASSERT_EQ(*f.store->RollUp(true), 1u);
  f.Write(minute + 50, 4);  // pending again
  EXPECT_EQ(f.store->PendingRollups(), 1u);
  // Time passes until the minute's first seconds are past the retention, and a compaction
  // drops them: `hist` holds only the 4 of second 50.
  f.now = minute + kRetention + 20;
  ASSERT_TRUE(f.store->Flush().ok());
  ASSERT_TRUE(f.store->Compact().ok());
  EXPECT_EQ(f.Seconds(minute), 4u);
  // Rewritten from what is left it would say 4; it keeps the 3 it had and the marker goes.
  EXPECT_EQ(*f.store->RollUp(true), 0u);
  EXPECT_EQ(f.store->PendingRollups(), 0u);
  EXPECT_EQ(f.store->Health().rollup_aged_out, 1u);
  EXPECT_EQ(f.Minute(minute), 3u);
}

// Seconds each near 2^62 (a key that itself saturated) sum past the bound in the 10 s and 60 s
// rollups: they saturate, the walk goes on, and each saturated value is counted.
TEST(RollupTest, SumsPastTheBoundSaturateAndAreCounted) {
  TempDir dir;
  rocksdb::Options options;
  options.create_if_missing = true;
  std::unique_ptr<rocksdb::DB> db;
  {
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir.path(), &raw).ok());
    db.reset(raw);
  }
  const int64_t minute = kNow - 60;
  const uint64_t near = kMaxTotalCount - 10;
  for (int64_t s : {minute + 1, minute + 2, minute + 31}) {
    Histogram h;
    h.Record(1000, near);
    ASSERT_TRUE(db->Put({}, EncodeDataKey({7, s, 1, 2}), h.Encode()).ok());
  }
  Histogram small;
  small.Record(5, 3);
  ASSERT_TRUE(db->Put({}, EncodeDataKey({7, minute + 4, 2, 2}), small.Encode()).ok());
  std::map<std::pair<size_t, uint32_t>, uint64_t> counts;  // (resolution, host) -> events
  uint64_t saturated = 0;
  Status s = ComputeMinuteRollup(
      db.get(), nullptr, db->DefaultColumnFamily(), 7, minute,
      [&](size_t resolution, const DataKey& key, const std::string& value) {
        counts[{resolution, key.host}] += Histogram::Decode(value)->count();
        return Status::Ok();
      },
      &saturated);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Host 1: the first ten seconds saturate, the 30s bucket does not, the minute does.
  EXPECT_EQ(saturated, 2u);
  EXPECT_EQ((counts[{1, 1}]), kMaxTotalCount + near);
  EXPECT_EQ((counts[{2, 1}]), kMaxTotalCount);
  EXPECT_EQ((counts[{1, 2}]), 3u);
  EXPECT_EQ((counts[{2, 2}]), 3u);
}

}  // namespace
}  // namespace trailmap::aggregator
