#include "aggregator/store/cache_warmer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "aggregator/store/store.h"
#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::Encoded;
using testing::Latency;
using testing::MakeBatch;
using testing::ManualOptions;
using testing::TempDir;

constexpr int64_t kT = 1'700'000'000;

// The cache warming after Open reads exactly each metric's newest warm_cache_seconds of `hist`
// and `stacks`: here disk.latency's seconds kT..kT+999 (its newest 600: 600 keys), net.latency's
// kT-500..kT-401 (all 100, each within 600 s of its newest), the same again of their fleet
// pre-aggregates (metrics of their own: aggregates.h), and cpu.stacks' kT..kT+99 (100).
TEST(CacheWarmerTest, WarmsTheCacheWithEachMetricsNewestSeconds) {
  TempDir dir;
  StoreOptions off = ManualOptions();
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
  StoreOptions on = ManualOptions();
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
