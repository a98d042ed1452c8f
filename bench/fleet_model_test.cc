#include "bench/fleet_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "query/views/distribution_stats.h"

namespace trailmap {
namespace {

// 12:00 UTC on 2026-11-22, the top of the daily cycle.
constexpr int64_t kNoon = 1'795'348'800;

// One host's disk.latency (both ops) over `seconds` seconds from `from`.
Histogram HostHistogram(const FleetModel& model, size_t host, int64_t from, int seconds) {
  Histogram all;
  for (int64_t s = from; s < from + seconds; ++s) {
    const Batch b = model.HostSecond(host, s);
    for (const HistogramDelta& d : b.seconds[0].histograms) {
      EXPECT_TRUE(all.MergeEncoded(d.encoded).ok());
    }
  }
  return all;
}

TEST(FleetModel, TheSameSeedGivesTheSameFleet) {
  const FleetModel a({.hosts = 40, .seed = 5}), b({.hosts = 40, .seed = 5}),
      c({.hosts = 40, .seed = 6});
  EXPECT_EQ(a.HostSecond(17, kNoon).seconds[0].histograms[0].encoded,
            b.HostSecond(17, kNoon).seconds[0].histograms[0].encoded);
  EXPECT_NE(a.HostSecond(17, kNoon).seconds[0].histograms[0].encoded,
            c.HostSecond(17, kNoon).seconds[0].histograms[0].encoded);
  // A host's profile does not depend on the fleet's size.
  const FleetModel big({.hosts = 200, .seed = 5});
  EXPECT_EQ(a.hosts()[17].cache_hit, big.hosts()[17].cache_hit);
  EXPECT_EQ(a.hosts()[17].labels, big.hosts()[17].labels);
}

TEST(FleetModel, PlantedHostsAreWhereTheHeaderSays) {
  const FleetModel m({.hosts = 60});
  const auto& h = m.hosts();
  EXPECT_EQ(h[5].name, "sim-006");
  EXPECT_EQ(h[5].slow_kind, SlowKind::kSlowTail);
  EXPECT_EQ(h[22].slow_kind, SlowKind::kShiftedMode);
  EXPECT_EQ(h[22].disk, DiskKind::kSpinning);
  EXPECT_EQ(h[39].slow_kind, SlowKind::kStalls);
  EXPECT_EQ(h[56].slow_kind, SlowKind::kSlowTail);
  EXPECT_TRUE(h[13].bimodal);
  EXPECT_TRUE(h[42].bimodal);
  EXPECT_TRUE(h[31].pauses);
  size_t slow = 0, bimodal = 0, pauses = 0, spinning = 0;
  for (const SimulatedHost& x : h) {
    slow += x.slow;
    bimodal += x.bimodal;
    pauses += x.pauses;
    spinning += x.disk == DiskKind::kSpinning;
    EXPECT_GE(x.cache_hit, 0.45);
    EXPECT_LT(x.cache_hit, 0.95);
  }
  EXPECT_EQ(slow, 4u);
  EXPECT_EQ(bimodal, 2u);
  EXPECT_EQ(pauses, 1u);
  EXPECT_GE(spinning, 12u);  // about 35% of 60, and the shifted-mode host
  EXPECT_LE(spinning, 30u);
}

TEST(FleetModel, TheDailyCycle) {
  EXPECT_DOUBLE_EQ(DailyLoad(kNoon), 1.5);
  EXPECT_NEAR(DailyLoad(kNoon - 43'200), 0.5, 1e-12);
  EXPECT_NEAR(DailyLoad(kNoon - 21'600), 1.0, 1e-12);
  const FleetModel m({.hosts = 1});
  const uint64_t noon = HostHistogram(m, 0, kNoon, 30).count();
  const uint64_t midnight = HostHistogram(m, 0, kNoon - 43'200, 30).count();
  EXPECT_GT(noon, 2.5 * static_cast<double>(midnight));
  EXPECT_LT(noon, 3.5 * static_cast<double>(midnight));
}

// What `columns --sort cov|bimodality|p99` sorts: the hosts' statistics spread, and the planted
// hosts stand out each in its own way.
TEST(FleetModel, HostsDifferSoTheSortKeysHaveSomethingToSort) {
  const FleetModel m({.hosts = 60});
  std::vector<DistributionStats> stats;
  std::vector<Histogram> hists;
  for (size_t i = 0; i < 60; ++i) {
    hists.push_back(HostHistogram(m, i, kNoon, 40));
    stats.push_back(ComputeDistributionStats(hists.back()));
  }
  double cov_lo = 1e9, cov_hi = 0, bi_lo = 1e9, bi_hi = 0;
  std::vector<uint64_t> normal_p99;
  for (size_t i = 0; i < 60; ++i) {
    if (m.hosts()[i].slow || m.hosts()[i].pauses) continue;
    cov_lo = std::min(cov_lo, stats[i].cov);
    cov_hi = std::max(cov_hi, stats[i].cov);
    bi_lo = std::min(bi_lo, stats[i].bimodality);
    bi_hi = std::max(bi_hi, stats[i].bimodality);
    normal_p99.push_back(hists[i].Percentile(99));
  }
  EXPECT_GT(cov_hi, 2 * cov_lo) << cov_lo << " .. " << cov_hi;
  EXPECT_GT(bi_hi - bi_lo, 0.2) << bi_lo << " .. " << bi_hi;
  std::sort(normal_p99.begin(), normal_p99.end());
  const uint64_t median_p99 = normal_p99[normal_p99.size() / 2];
  // The slow tail and the stalls raise the p99 far above the fleet's.
  EXPECT_GT(hists[5].Percentile(99), 4 * median_p99);
  EXPECT_GT(hists[39].Percentile(99), 4 * median_p99);
  // The shifted mode moves the disk band: its p90 is a slow spinning disk's.
  EXPECT_GT(hists[22].Percentile(90), 12'000'000u);
  // A stall second holds every disk I/O (the events that miss the cache) 80 ms later.
  const double ch = m.hosts()[39].cache_hit;
  const double disk_share = 0.7 * (1 - ch) + 0.3 * (1 - 0.6 * ch);
  const Histogram stall = HostHistogram(m, 39, kNoon + 7, 1);
  EXPECT_GE(stall.Percentile(100 * (1 - disk_share / 2)), 80'000'000u);
  EXPECT_LT(stall.Percentile(100 * (1 - disk_share) / 2), 1'000'000u);
  // A pause: a third of the events 40 ms later.
  const Histogram pause = HostHistogram(m, 31, kNoon + 30, 2);
  EXPECT_GE(pause.Percentile(80), 40'000'000u);
  EXPECT_LT(pause.Percentile(50), 40'000'000u);
}

// The frames a host's stacks use in one second, by name.
std::set<std::string> FrameNames(const FleetModel& model, size_t host) {
  std::set<std::string> names;
  for (int64_t s = kNoon; s < kNoon + 5; ++s) {
    for (const FrameDef& f : model.HostSecond(host, s).frames) names.insert(f.name);
  }
  return names;
}

// Each way of being slow has its own hot path, which the differential flame graph of the slow
// hosts against the rest shows; the other hosts never sample them.
TEST(FleetModel, SlowHostsSampleTheHotPathOfTheirKind) {
  const FleetModel m({.hosts = 60, .stack_rate = 200});
  const std::set<std::string> tail = FrameNames(m, 5), shifted = FrameNames(m, 22),
                              stalls = FrameNames(m, 39), normal = FrameNames(m, 7);
  EXPECT_TRUE(tail.count(FleetModel::kHotFrame));
  EXPECT_FALSE(tail.count("io_schedule"));
  EXPECT_TRUE(shifted.count("io_schedule"));
  EXPECT_FALSE(shifted.count(FleetModel::kHotFrame));
  EXPECT_TRUE(stalls.count("G1CollectedHeap::do_collection_pause"));
  for (const char* hot : {FleetModel::kHotFrame, "io_schedule", "jvm_gc_collect"}) {
    EXPECT_FALSE(normal.count(hot)) << hot;
  }
}

}  // namespace
}  // namespace trailmap
