#include "aggregator/store/periodic_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace trailmap::aggregator {
namespace {

using std::chrono::milliseconds;

// Waits up to 5 s for `done`; the tests' bound, never their pace.
template <typename Done>
bool WaitFor(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

TEST(PeriodicThreadTest, RunsTheTaskUntilStopped) {
  std::atomic<int> runs{0};
  PeriodicThread thread;
  thread.Start("test", milliseconds(1), [&runs] {
    ++runs;
    return true;
  });
  ASSERT_TRUE(WaitFor([&runs] { return runs >= 3; }));
  thread.Stop();
  const int after = runs;
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(runs, after);
  EXPECT_TRUE(thread.stopping());
  EXPECT_EQ(thread.failures(), 0u);
}

// Stop does not wait out the interval: an hour-long one ends at once.
TEST(PeriodicThreadTest, StopWakesTheThread) {
  std::atomic<int> runs{0};
  PeriodicThread thread;
  thread.Start("test", std::chrono::hours(1), [&runs] {
    ++runs;
    return true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  thread.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(runs, 0);
}

// A pass that throws is caught at the thread's boundary and counted; the next pass runs.
TEST(PeriodicThreadTest, APassThatThrowsIsCountedAndTheThreadGoesOn) {
  std::atomic<int> runs{0};
  PeriodicThread thread;
  thread.Start("test", milliseconds(1), [&runs]() -> bool {
    if (++runs <= 2) throw std::runtime_error("a bad pass");
    return true;
  });
  ASSERT_TRUE(WaitFor([&runs] { return runs >= 4; }));
  thread.Stop();
  EXPECT_EQ(thread.failures(), 2u);
}

// A task that returns false ends its thread; Stop after that (and twice) is harmless.
TEST(PeriodicThreadTest, ATaskThatReturnsFalseEndsTheThread) {
  std::atomic<int> runs{0};
  PeriodicThread thread;
  thread.Start("test", milliseconds(1), [&runs] { return ++runs < 2; });
  ASSERT_TRUE(WaitFor([&runs] { return runs >= 2; }));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(runs, 2);
  thread.Stop();
  thread.Stop();
}

TEST(RunCaughtTest, CountsWhatIsThrownAndSaysWhetherTheBodyEndedWell) {
  std::atomic<uint64_t> failures{0};
  EXPECT_TRUE(RunCaught("test", &failures, [] {}));
  EXPECT_FALSE(RunCaught("test", &failures, [] { throw std::runtime_error("x"); }));
  EXPECT_FALSE(RunCaught("test", &failures, [] { throw 7; }));
  EXPECT_EQ(failures, 2u);
}

}  // namespace
}  // namespace trailmap::aggregator
