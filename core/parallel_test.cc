#include "core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
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

// What a part throws reaches the caller once every part has ended, instead of ending the process
// (an exception that leaves a std::thread's body calls std::terminate).
TEST(RunParts, APartThatThrowsIsThrownOnTheCallingThreadAfterTheOthersEnd) {
  std::atomic<int> ended{0};
  EXPECT_THROW(RunParts(4,
                        [&ended](int part) {
                          if (part == 2) throw std::runtime_error("part 2");
                          std::this_thread::sleep_for(std::chrono::milliseconds(20));
                          ++ended;
                        }),
               std::runtime_error);
  EXPECT_EQ(ended.load(), 3);
  // Part 0 runs on the calling thread: the helpers are joined before it is thrown.
  ended = 0;
  EXPECT_THROW(RunParts(3,
                        [&ended](int part) {
                          if (part == 0) throw std::logic_error("part 0");
                          std::this_thread::sleep_for(std::chrono::milliseconds(20));
                          ++ended;
                        }),
               std::logic_error);
  EXPECT_EQ(ended.load(), 2);
  EXPECT_THROW(ParallelFor(100, 1,
                           [](size_t i) {
                             if (i == 57) throw std::runtime_error("57");
                           }),
               std::runtime_error);
}

TEST(ParallelInOrder, WhatMakeOrConsumeThrowsStopsTheRestAndIsThrownHere) {
  for (size_t min_parallel : {size_t{1}, size_t{1000}}) {  // on threads, and on this one
    std::vector<size_t> consumed;
    EXPECT_THROW(ParallelInOrder(
                     100, min_parallel,
                     [](size_t i) {
                       if (i == 40) throw std::runtime_error("make 40");
                       return i;
                     },
                     [&consumed](size_t i, size_t v) {
                       EXPECT_EQ(i, v);
                       consumed.push_back(i);
                     }),
                 std::runtime_error);
    ASSERT_LE(consumed.size(), 40u) << min_parallel;
    for (size_t i = 0; i < consumed.size(); ++i) EXPECT_EQ(consumed[i], i);
    EXPECT_THROW(ParallelInOrder(
                     100, min_parallel, [](size_t i) { return i; },
                     [](size_t i, size_t) {
                       if (i == 10) throw std::logic_error("consume 10");
                     }),
                 std::logic_error);
  }
}

}  // namespace
}  // namespace trailmap
