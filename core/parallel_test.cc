#include "core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace trailmap {
namespace {

// Each index once, whether the loop runs on one thread (n under the threshold) or on several.
TEST(ParallelForTest, CallsEachIndexOnce) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{100}, size_t{1001}}) {
    std::vector<std::atomic<int>> calls(n);
    ParallelFor(n, 64, [&calls](size_t i) { calls[i].fetch_add(1); });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(calls[i].load(), 1) << "n " << n << " index " << i;
  }
}

TEST(ParallelForTest, UnderTheThresholdStaysOnThisThread) {
  std::vector<std::thread::id> ids(50);
  ParallelFor(ids.size(), 64, [&ids](size_t i) { ids[i] = std::this_thread::get_id(); });
  for (const std::thread::id& id : ids) EXPECT_EQ(id, std::this_thread::get_id());
}

TEST(ParallelForTest, OverTheThresholdUsesTheCores) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core";
  std::vector<std::thread::id> ids(1000);
  ParallelFor(ids.size(), 64, [&ids](size_t i) { ids[i] = std::this_thread::get_id(); });
  const std::set<std::thread::id> distinct(ids.begin(), ids.end());
  EXPECT_EQ(distinct.size(), std::min<size_t>(std::thread::hardware_concurrency(), 4));
}

TEST(RunPartsTest, EveryPartRunsOnce) {
  std::vector<std::atomic<int>> calls(5);
  RunParts(5, [&calls](int part) { calls[part].fetch_add(1); });
  for (const std::atomic<int>& c : calls) EXPECT_EQ(c.load(), 1);
}

// Every result consumed once, in order, on the calling thread, whether made there (n under the
// threshold) or on the cores.
TEST(ParallelInOrderTest, ConsumesEachResultInOrderOnThisThread) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{50}, size_t{1001}}) {
    std::vector<std::atomic<int>> made(n);
    std::vector<size_t> order;
    std::set<std::thread::id> makers;
    std::mutex mu;
    const std::thread::id caller = std::this_thread::get_id();
    ParallelInOrder(
        n, 64,
        [&](size_t i) {
          made[i].fetch_add(1);
          std::lock_guard lock(mu);
          makers.insert(std::this_thread::get_id());
          return std::to_string(i * i);
        },
        [&](size_t i, std::string&& text) {
          EXPECT_EQ(std::this_thread::get_id(), caller);
          EXPECT_EQ(text, std::to_string(i * i));
          order.push_back(i);
        });
    ASSERT_EQ(order.size(), n);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(order[i], i) << "n " << n;
      EXPECT_EQ(made[i].load(), 1) << "n " << n << " index " << i;
    }
    if (n < 64) {
      EXPECT_TRUE(n == 0 || makers == std::set<std::thread::id>{caller});
    } else if (std::thread::hardware_concurrency() >= 2) {
      EXPECT_EQ(makers.count(caller), 0u) << "made on the cores, not here";
    }
  }
}

}  // namespace
}  // namespace trailmap
