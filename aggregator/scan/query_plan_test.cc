// The rollup families and the query plan: a planned query reads the coarsest aligned buckets and
// must answer exactly as the 1 s data does.
#include <gtest/gtest.h>

#include <random>

#include "aggregator/scan/histogram_query.h"
#include "aggregator/scan/store_query.h"
#include "aggregator/store/store.h"
#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::Latency;
using testing::MakeBatch;
using testing::TempDir;

constexpr int64_t kB = 1'699'999'980;  // a multiple of 60
static_assert(kB % 60 == 0);

std::string Plan(const HistogramQuery& q, int64_t lo, int64_t hi, size_t resolutions = 3) {
  std::string out;
  for (const ScanSegment& s : PlanScan(q, lo, hi, resolutions)) {
    if (!out.empty()) out += ' ';
    out += std::to_string(kHistogramResolutions[s.resolution].seconds) + "s[" +
           std::to_string(s.lo - kB) + "," + std::to_string(s.hi - kB) + ")";
  }
  return out;
}

TEST(PlanScanTest, CoarsestAlignedBucketsInsideEachColumnFinerAtTheEdges) {
  // One column of 600 s starting 17 s into a minute: seconds up to the next 10, tens up to the
  // next minute, nine minutes, then back down.
  HistogramQuery q{"m", kB + 17, kB + 617, 600, "", {}};
  EXPECT_EQ(Plan(q, q.from, q.to), "1s[17,20) 10s[20,60) 60s[60,600) 10s[600,610) 1s[610,617)");
  // Forced to the seconds: one segment.
  EXPECT_EQ(Plan(q, q.from, q.to, 1), "1s[17,617)");
  // Without the 60 s family.
  EXPECT_EQ(Plan(q, q.from, q.to, 2), "1s[17,20) 10s[20,610) 1s[610,617)");
  // Aligned minutes: one segment of the 60 s family across every column.
  q = {"m", kB, kB + 3600, 60, "", {}};
  EXPECT_EQ(Plan(q, q.from, q.to), "60s[0,3600)");
  // Step 1 (a heat map at full resolution) and steps below 10 read seconds.
  q = {"m", kB, kB + 3600, 1, "", {}};
  EXPECT_EQ(Plan(q, q.from, q.to), "1s[0,3600)");
  q = {"m", kB, kB + 60, 7, "", {}};
  EXPECT_EQ(Plan(q, q.from, q.to), "1s[0,60)");
  // Columns of 60 s that start 30 s into a minute hold no whole minute: tens only.
  q = {"m", kB + 30, kB + 150, 60, "", {}};
  EXPECT_EQ(Plan(q, q.from, q.to), "10s[30,150)");
  // Columns of 15 s: a 10 s bucket fits only where it does not cross a column edge.
  q = {"m", kB, kB + 45, 15, "", {}};
  EXPECT_EQ(Plan(q, q.from, q.to), "10s[0,10) 1s[10,20) 10s[20,40) 1s[40,45)");
  // A slice that starts inside a column plans its part of that column alone.
  q = {"m", kB + 17, kB + 617, 600, "", {}};
  EXPECT_EQ(Plan(q, kB + 317, q.to),
            "1s[317,320) 10s[320,360) 60s[360,600) 10s[600,610) 1s[610,617)");
  // Minutes whose rollups are behind are read from `hist`.
  q = {"m", kB + 17, kB + 617, 600, "", {}};
  EXPECT_EQ(Plan(q, q.from, q.to), "1s[17,20) 10s[20,60) 60s[60,600) 10s[600,610) 1s[610,617)");
  std::string pending;
  for (const ScanSegment& s : PlanScan(q, q.from, q.to, 3, {kB, kB + 120, kB + 180, kB + 600})) {
    pending += std::to_string(kHistogramResolutions[s.resolution].seconds) + "s[" +
               std::to_string(s.lo - kB) + "," + std::to_string(s.hi - kB) + ") ";
  }
  EXPECT_EQ(pending, "1s[17,60) 60s[60,120) 1s[120,240) 60s[240,600) 1s[600,617) ");
  // Negative seconds round toward -inf.
  EXPECT_EQ(BucketStart(-1, 60), -60);
  EXPECT_EQ(BucketStart(-60, 60), -60);
  EXPECT_EQ(BucketStart(59, 60), 0);
}

// The 600 s family: whole 10-minute blocks inside a column, except blocks that are pending or
// hold a pending minute, which are read at 60 s and finer (aggregator/store/rollup.h).
TEST(PlanScanTest, WholeBlocksFromTheTenMinuteFamilyUnlessPending) {
  constexpr int64_t kC = 1'699'999'800;  // a multiple of 600
  static_assert(kC % 600 == 0);
  const auto plan = [](const HistogramQuery& q, size_t resolutions,
                       const std::vector<int64_t>& minutes = {},
                       const std::vector<int64_t>& blocks = {}) {
    std::string out;
    for (const ScanSegment& s : PlanScan(q, q.from, q.to, resolutions, minutes, blocks)) {
      if (!out.empty()) out += ' ';
      out += std::to_string(kHistogramResolutions[s.resolution].seconds) + "s[" +
             std::to_string(s.lo - kC) + "," + std::to_string(s.hi - kC) + ")";
    }
    return out;
  };
  HistogramQuery q{"m", kC + 17, kC + 1817, 1800, "", {}};
  EXPECT_EQ(plan(q, 4),
            "1s[17,20) 10s[20,60) 60s[60,600) 600s[600,1800) 10s[1800,1810) 1s[1810,1817)");
  EXPECT_EQ(plan(q, 3), "1s[17,20) 10s[20,60) 60s[60,1800) 10s[1800,1810) 1s[1810,1817)");
  // A pending block: its minutes from `hist_60s`.
  EXPECT_EQ(plan(q, 4, {}, {kC + 600}),
            "1s[17,20) 10s[20,60) 60s[60,1200) 600s[1200,1800) 10s[1800,1810) 1s[1810,1817)");
  // A pending minute: its seconds from `hist`, the rest of its block from `hist_60s`.
  EXPECT_EQ(plan(q, 4, {kC + 1260}),
            "1s[17,20) 10s[20,60) 60s[60,600) 600s[600,1200) 60s[1200,1260) 1s[1260,1320) "
            "60s[1320,1800) 10s[1800,1810) 1s[1810,1817)");
  // A heat map of a week at 600 s columns, and of a year at 8-hour columns: the 600 s family alone.
  q = {"m", kC, kC + 7 * 86400, 600, "", {}};
  EXPECT_EQ(plan(q, 4), "600s[0,604800)");
  q = {"m", kC, kC + 365 * 86400, 8 * 3600, "", {}};
  EXPECT_EQ(plan(q, 4), "600s[0,31536000)");
  // Columns of 600 s that start 5 minutes into a block hold no whole block: minutes only.
  q = {"m", kC + 300, kC + 1500, 600, "", {}};
  EXPECT_EQ(plan(q, 4), "60s[300,1500)");
}

// A random fleet: 5 hosts (labels role=web|db), series op=read, op=write and one without fields,
// random histograms at random seconds over an hour, some seconds sent twice (merge operands).
class RollupEqualityTest : public ::testing::Test {
 protected:
  void SetUp() override { Load(); }

  static StoreOptions Options(int threads = 1) {
    StoreOptions options;
    options.sync = false;
    options.query_threads = threads;
    options.rollup_interval_ms = 0;  // the test says when to roll up
    return options;
  }

  void Load() {
    const StoreOptions options = Options();
    std::unique_ptr<Store> store = std::move(Store::Open(dir_.path(), options)).value();
    std::mt19937_64 rng(20261122);
    for (int h = 0; h < 5; ++h) {
      const std::string host = "h" + std::to_string(h);
      uint64_t sequence = 0;
      for (int pass = 0; pass < 2; ++pass) {
        for (int64_t start = -130; start < 3700; start += 200) {
          Batch b = MakeBatch(host + "/1", ++sequence, host,
                              {Latency("disk.latency", "op=read"),
                               Latency("disk.latency", "op=write"), Latency("disk.latency")});
          b.labels = {{"role", h < 3 ? "web" : "db"}};
          for (int64_t s = start; s < start + 200; ++s) {
            if (rng() % (pass == 0 ? 3 : 20) != 0) continue;  // the second pass: a few late deltas
            SecondDelta second{kB + s, {}, {}};
            for (uint32_t series = 0; series < 3; ++series) {
              if (rng() % 2) continue;
              Histogram hist;
              for (int n = 1 + static_cast<int>(rng() % 4); n > 0; --n) {
                // 100 ns .. ~100 ms, log-uniform-ish, a count of 1..5.
                hist.Record(100ull << (rng() % 20) | (rng() % 1000), 1 + rng() % 5);
              }
              second.histograms.push_back({series, hist.Encode()});
            }
            b.seconds.push_back(std::move(second));
          }
          ASSERT_EQ(store->ApplyBatch(b)->status, Ack::Status::kApplied);
        }
        if (pass == 0) {
          ASSERT_TRUE(store->Flush().ok());  // part in tables, part in memtables
        }
      }
    }
  }

  // Every minute is pending after the load; answers must be exact before, during and after the
  // rollup pass.
  void ExpectSameAnswers(int threads) {
    std::unique_ptr<Store> store = std::move(Store::Open(dir_.path(), Options(threads))).value();
    EXPECT_GT(store->PendingRollups(), 60u);  // marked at ingest, kept across the reopen
    ExpectSameAnswers(*store, 0);
    Result<size_t> rolled = store->RollUp(true);
    ASSERT_TRUE(rolled.ok()) << rolled.status().ToString();
    EXPECT_GT(*rolled, 60u);
    EXPECT_EQ(store->PendingRollups(), 0u);
    ExpectSameAnswers(*store, 8);
    // A late delta makes its minute pending again: exact while it is, and after the next pass.
    Batch late = MakeBatch("late/1", 1, "h2", {Latency("disk.latency", "op=read")});
    Histogram h;
    h.Record(123456, 7);
    late.seconds.push_back(SecondDelta{kB + 65, {{0, h.Encode()}}, {}});
    ASSERT_EQ(store->ApplyBatch(late)->status, Ack::Status::kApplied);
    EXPECT_EQ(store->PendingRollups(), 2u);  // the minute, and the fleet aggregate's minute
    ExpectSameAnswers(*store, 0);
    ASSERT_EQ(*store->RollUp(true), 2u);
    ExpectSameAnswers(*store, 0);
  }

  // The fixed ranges below and `random_ranges` more.
  void ExpectSameAnswers(const Store& store_ref, int random_ranges) {
    const Store* store = &store_ref;
    std::vector<std::tuple<int64_t, int64_t, uint32_t>> ranges = {
        {17, 617, 600},      // one unaligned column over 10 minutes (columns, trails)
        {-125, 3650, 3775},  // one column over everything, both edges unaligned
        {3, 1803, 60},       // minutes that start 3 s in
        {0, 3600, 60},       // aligned minutes
        {5, 1805, 30},       // half minutes
        {13, 1513, 500},     // a step that is no multiple of 60
        {7, 307, 7},         // a step below 10: seconds only
        {-200, -100, 20},    // before the data
    };
    std::mt19937 rng(7);
    for (int i = 0; i < random_ranges; ++i) {
      const int64_t from = static_cast<int64_t>(rng() % 1200) - 150;
      const uint32_t steps[] = {10, 20, 60, 90, 120, 300, 3600};
      const uint32_t step = steps[rng() % std::size(steps)];
      const int64_t to = from + step * (1 + rng() % 12) - static_cast<int64_t>(rng() % step);
      ranges.emplace_back(from, to, step);
    }
    const std::vector<std::pair<std::string, std::string>> views = {
        {"", ""},
        {"host", ""},
        {"op", R"(role == "web" or op == "read")"},
        {"role", R"(latency > 50us and host != "h1")"},
        {"host", R"(op != "write" and latency < 10ms)"},
    };
    uint64_t compared = 0;
    for (const auto& [from, to, step] : ranges) {
      for (const auto& [group_by, where] : views) {
        HistogramQuery q{"disk.latency", kB + from, kB + to, step, group_by, {}};
        q.where = where;
        SCOPED_TRACE("[" + std::to_string(from) + ", " + std::to_string(to) + ") step " +
                     std::to_string(step) + " by '" + group_by + "' where '" + where + "'");
        Result<HistogramAnswer> planned = QueryHistograms(*store, q);
        Result<HistogramAnswer> seconds = QueryHistograms(*store, q, QueryPlan::kFinestOnly);
        ASSERT_TRUE(planned.ok()) << planned.status().ToString();
        ASSERT_TRUE(seconds.ok()) << seconds.status().ToString();
        EXPECT_EQ(testing::AnswerDifference(*planned, *seconds), "");
        for (const QueryCell& c : seconds->cells) compared += c.histogram.count();
      }
    }
    // Not vacuous: the queries covered a lot of events.
    EXPECT_GT(compared, 100'000u);
  }

  TempDir dir_;
};

TEST_F(RollupEqualityTest, PlannedQueriesAnswerExactlyAsTheSecondsOnOneThread) {
  ExpectSameAnswers(1);
}

TEST_F(RollupEqualityTest, PlannedQueriesAnswerExactlyAsTheSecondsInParallelSlices) {
  ExpectSameAnswers(3);
}

}  // namespace
}  // namespace trailmap::aggregator
