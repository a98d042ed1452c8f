// The rollup pass against late writes, aged-out minutes and failing minutes (aggregator/store/rollup.h),
// with an injected clock. Its own test binary: the failpoint table (core/failpoint.h) is read once
// per process, and this one sets rollup.minute=error@1 before anything reads it.
#include "aggregator/store/rollup.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

#include "aggregator/scan/histogram_query.h"
#include "aggregator/scan/store_query.h"
#include "aggregator/server/aggregator_config.h"
#include "aggregator/store/store.h"
#include "aggregator/store/testing.h"
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
    o.aggregates.enabled = false;  // counts below are of the metric's own minutes
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
    Result<HistogramAnswer> a = QueryHistograms(*store, {"m", m, m + 60, 60, "", {}});
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    uint64_t n = 0;
    for (const QueryCell& c : a->cells) n += c.histogram.count();
    return n;
  }
  uint64_t Seconds(int64_t m) {
    Result<HistogramAnswer> a =
        QueryHistograms(*store, {"m", m, m + 60, 60, "", {}}, QueryPlan::kFinestOnly);
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

// The 10-minute rollup (`hist_600s`, rollup.h): a store with two hosts and two series of "m",
// retentions and a clock the test sets, and answers counted at any column width.
constexpr int64_t kBlockNow = 1'700'006'400;  // a multiple of 600
static_assert(kBlockNow % kRollupBlock == 0);

struct BlockFixture {
  TempDir dir;
  int64_t now = kBlockNow;
  std::unique_ptr<Store> store;
  std::map<std::string, uint64_t> sequences;  // per host
  uint64_t written = 0;                        // events written

  explicit BlockFixture(std::array<int64_t, kHistogramResolutionCount> retention = {},
                        std::function<void(uint32_t, int64_t)> block_hook = {}) {
    StoreOptions o;
    o.sync = false;
    o.rollup_interval_ms = 0;
    o.rollup_quiet_ms = 0;
    o.aggregates.enabled = false;  // counts below are of the metric's own minutes and blocks
    o.retention_seconds = retention;
    o.clock = [this] { return now; };
    o.before_block_write = std::move(block_hook);
    store = std::move(Store::Open(dir.path(), o)).value();
  }
  // `n` events at each of `seconds`, for host h0 or h1 and series op=a or op=b by the second.
  void Write(const std::vector<int64_t>& seconds, int n) {
    for (const char* host : {"h0", "h1"}) {
      Batch b = MakeBatch(std::string(host) + "/1", ++sequences[host], host,
                          {Latency("m", "op=a"), Latency("m", "op=b")});
      for (int64_t t : seconds) {
        Histogram h;
        for (int i = 0; i < n; ++i) h.Record(1000 + static_cast<uint64_t>(t % 977) + i);
        b.seconds.push_back(SecondDelta{t, {{static_cast<uint32_t>(t % 2), h.Encode()}}, {}});
        written += static_cast<uint64_t>(n);
      }
      ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
    }
  }
  void Write(int64_t t, int n) { Write(std::vector<int64_t>{t}, n); }
  Result<HistogramAnswer> Answer(int64_t from, int64_t to, uint32_t step, QueryPlan plan) {
    return QueryHistograms(*store, {"m", from, to, step, "host", {}}, plan);
  }
  // Events in [from, to) as the planned query at `step` answers them; the answer must be the
  // one the seconds give, cell by cell, unless `seconds_gone` (the 1 s data has aged out).
  uint64_t Count(int64_t from, int64_t to, uint32_t step, bool seconds_gone = false) {
    Result<HistogramAnswer> planned = Answer(from, to, step, QueryPlan::kCoarsest);
    EXPECT_TRUE(planned.ok()) << planned.status().ToString();
    if (!planned.ok()) return 0;
    if (!seconds_gone) {
      Result<HistogramAnswer> seconds = Answer(from, to, step, QueryPlan::kFinestOnly);
      EXPECT_TRUE(seconds.ok());
      EXPECT_EQ(planned->cells.size(), seconds->cells.size());
      for (size_t i = 0; i < std::min(planned->cells.size(), seconds->cells.size()); ++i) {
        EXPECT_EQ(planned->cells[i].column, seconds->cells[i].column);
        EXPECT_TRUE(planned->cells[i].histogram == seconds->cells[i].histogram) << "cell " << i;
      }
    }
    uint64_t n = 0;
    for (const QueryCell& c : planned->cells) n += c.histogram.count();
    return n;
  }
  size_t RollUp(bool all, size_t* blocks) {
    Result<size_t> r = store->RollUp(all, blocks);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : 0;
  }
};

// A week of seconds (one every 293 s, two hosts, two series) read at 600 s and hourly columns:
// before the pass (everything pending, read from `hist`) and after it (whole blocks from
// `hist_600s`) the answer is the seconds' answer, cell by cell, and counts every event.
TEST(BlockRollupTest, AWeekAt600sColumnsEqualsItsSeconds) {
  BlockFixture f;
  const int64_t week = 7 * 86400, from = kBlockNow - week;
  std::vector<int64_t> seconds;
  for (int64_t t = from + 7; t < kBlockNow; t += 293) seconds.push_back(t);
  for (size_t i = 0; i < seconds.size(); i += 500) {
    f.Write({seconds.begin() + i, seconds.begin() + std::min(i + 500, seconds.size())}, 3);
  }
  EXPECT_EQ(f.written, seconds.size() * 2 * 3);
  EXPECT_EQ(f.Count(from, kBlockNow, 600), f.written);
  size_t blocks = 0;
  EXPECT_EQ(f.RollUp(true, &blocks), seconds.size());  // one second per minute
  EXPECT_EQ(blocks, size_t{week / kRollupBlock});      // a second in every block
  EXPECT_EQ(f.store->PendingRollups(), 0u);
  EXPECT_EQ(f.store->PendingBlocks(), 0u);
  EXPECT_EQ(f.Count(from, kBlockNow, 600), f.written);
  EXPECT_EQ(f.Count(from, kBlockNow, 3600), f.written);
  EXPECT_EQ(f.Count(from + 3, kBlockNow - 5, 86400), f.written);
  // With no pending minute or block, such a week is read from `hist_600s` alone.
  const HistogramQuery q{"m", from, kBlockNow, 600, "", {}};
  const std::vector<ScanSegment> plan = PlanScan(q, q.from, q.to, kHistogramResolutionCount);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0], (ScanSegment{3, from, kBlockNow}));
}

// Answers are exact while blocks are pending: minutes rolled up but their block not yet (its end
// has not passed), and a rolled block one of whose minutes is pending again.
TEST(BlockRollupTest, QueriesAreExactWhileBlocksArePending) {
  BlockFixture f;
  const int64_t b0 = kBlockNow - 1200, b1 = kBlockNow - 600;
  f.Write({b0 + 5, b0 + 70, b0 + 599, b1 + 1, b1 + 301}, 2);
  f.now = b1 + 400;  // the second block has not ended
  size_t blocks = 0;
  EXPECT_EQ(f.RollUp(false, &blocks), 5u);
  EXPECT_EQ(blocks, 1u);
  EXPECT_EQ(f.store->PendingBlocks(), 1u);
  EXPECT_EQ(f.Count(b0, kBlockNow, 600), 20u);
  EXPECT_EQ(f.Count(b0 - 30, kBlockNow + 30, 1260), 20u);
  // A new second in the rolled block: its minute is pending, so is (for queries) the block.
  f.Write(b0 + 75, 5);
  EXPECT_EQ(f.store->PendingRollups(), 1u);
  EXPECT_EQ(f.Count(b0, kBlockNow, 600), 30u);
  f.now = kBlockNow;
  // The pass does the minute, then both blocks (the first marked again by its minute).
  EXPECT_EQ(f.RollUp(false, &blocks), 1u);
  EXPECT_EQ(blocks, 2u);
  EXPECT_EQ(f.store->PendingBlocks(), 0u);
  EXPECT_EQ(f.Count(b0, kBlockNow, 600), 30u);
  EXPECT_EQ(f.Count(b0, b1, 600), 22u);
}

// A block is redone from `hist_60s` whenever more data lands in it: a fresh late second (its
// minute rolled up again, which marks the block), one past the 1 s retention (merged at ingest),
// and one that comes while the pass holds the block computed from an older snapshot.
TEST(BlockRollupTest, ABlockIsRedoneAfterMoreLateData) {
  const int64_t block = kBlockNow - 600;
  BlockFixture* self = nullptr;
  bool armed = false, late_written = false;
  BlockFixture f({kRetention, 0, 0, 0}, [&](uint32_t, int64_t b) {
    if (b != block || !armed || late_written) return;
    late_written = true;
    self->now = block + kRetention - 1800;  // half an hour before the block's seconds age out
    self->Write(block + 300, 7);            // past the 1 s retention: merged into the rollups
  });
  self = &f;
  size_t blocks = 0;
  f.Write(block + 10, 3);
  f.RollUp(true, &blocks);
  EXPECT_EQ(blocks, 1u);
  EXPECT_EQ(f.Count(block, block + 600, 600), 6u);
  // A late second still inside the 1 s retention: its minute is rolled up again, then the block.
  f.Write(block + 130, 4);
  EXPECT_EQ(f.store->PendingRollups(), 1u);
  EXPECT_EQ(f.RollUp(true, &blocks), 1u);
  EXPECT_EQ(blocks, 1u);
  EXPECT_EQ(f.Count(block, block + 600, 600), 14u);
  // Another one, and while the pass holds the block, a second merged straight into the rollups:
  // the pass must not Put over it; it drops what it computed and does the block again.
  armed = true;
  f.Write(block + 200, 2);
  EXPECT_EQ(f.RollUp(true, &blocks), 1u);
  EXPECT_TRUE(late_written);
  EXPECT_EQ(blocks, 1u);
  EXPECT_EQ(f.store->PendingBlocks(), 0u);
  EXPECT_EQ(f.Count(block, block + 600, 600), 32u);
  // Past the 1 s retention (less an hour): merged into every rollup at ingest, nothing pending.
  f.Write(block + 500, 1);
  EXPECT_EQ(f.store->PendingRollups(), 0u);
  EXPECT_EQ(f.store->PendingBlocks(), 0u);
  EXPECT_EQ(f.Count(block, block + 600, 600), 34u);
  EXPECT_EQ(f.store->Health().rollup_failures, 0u);
}

// `hist_600s` keeps 2 years by default and drops a block once all of it is older than its own
// retention; the finer families go by theirs, and a range past them still answers at 600 s.
TEST(BlockRollupTest, RetentionOfTheBlocksIsHonored) {
  EXPECT_EQ(kDefaultRetention[3], 730 * 86400);
  const int64_t day = 86400;
  BlockFixture f({day, 2 * day, 3 * day, 10 * day});
  const int64_t old_block = kBlockNow - 1200, new_block = kBlockNow - 600;
  f.Write({old_block + 1, new_block + 1}, 2);
  f.RollUp(true, nullptr);
  // Five days on: only the 600 s keys are left, and both blocks answer at 600 s.
  f.now = kBlockNow + 5 * day;
  ASSERT_TRUE(f.store->Flush().ok());
  ASSERT_TRUE(f.store->Compact().ok());
  EXPECT_EQ(f.Count(old_block, kBlockNow, 600, /*seconds_gone=*/true), 8u);
  EXPECT_EQ(f.Count(old_block, kBlockNow, 60, /*seconds_gone=*/true), 0u);
  // Ten days after the old block's end, it goes; the new one stays until its own end is as old.
  f.now = new_block + 10 * day;
  ASSERT_TRUE(f.store->Compact().ok());
  EXPECT_EQ(f.Count(old_block, kBlockNow, 600, true), 4u);
  f.now = kBlockNow + 10 * day;
  ASSERT_TRUE(f.store->Compact().ok());
  EXPECT_EQ(f.Count(old_block, kBlockNow, 600, true), 0u);
}

// A pending block that starts past the 60 s retention is not rolled up again from what is left
// of `hist_60s`: its `hist_600s` key stands. A second older than the 60 s retention (less an
// hour) is merged into `hist_600s` at ingest, even when `hist` keeps it forever.
TEST(BlockRollupTest, AgedOutBlocksKeepTheirRollupsAndLateSecondsLandInThem) {
  const int64_t day = 86400;
  BlockFixture f({0, 0, 3 * day, 0});  // seconds forever, minutes 3 days
  const int64_t block = kBlockNow - 600;
  f.Write(block + 10, 3);
  f.RollUp(true, nullptr);
  EXPECT_EQ(f.Count(block, block + 600, 600), 6u);
  // Four days later a second of that block comes: `hist` keeps it, but its block starts past the
  // 60 s retention, so it goes straight into `hist_600s`; its minute is rolled up (for `hist_10s`)
  // and marks the block, which is past the retention: the marker goes, the key stands.
  f.now = kBlockNow + 4 * day;
  f.Write(block + 20, 4);
  EXPECT_EQ(f.store->PendingRollups(), 1u);
  EXPECT_EQ(f.Count(block, block + 600, 600), 14u);  // a pending minute: read from `hist`
  EXPECT_EQ(f.RollUp(true, nullptr), 1u);
  EXPECT_EQ(f.store->PendingBlocks(), 0u);
  EXPECT_EQ(f.store->Health().rollup_aged_out, 1u);
  ASSERT_TRUE(f.store->Flush().ok());
  ASSERT_TRUE(f.store->Compact().ok());  // `hist_60s` drops the block's minutes
  EXPECT_EQ(f.Count(block, block + 600, 600), 14u);
  EXPECT_EQ(f.Count(block, block + 600, 60, true), 0u);
}

}  // namespace
}  // namespace trailmap::aggregator
