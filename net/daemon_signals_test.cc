#include "net/daemon_signals.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <chrono>
#include <thread>

namespace trailmap {
namespace {

using std::chrono::milliseconds;

// raise() sends to the calling thread, which blocks the signal: it stays pending until taken.
TEST(DaemonSignals, TakesEachSignalOnceAndTimesOutWithoutOne) {
  const DaemonSignals signals;
  EXPECT_EQ(signals.WaitFor(milliseconds(0)), 0);
  ASSERT_EQ(raise(SIGHUP), 0);  // blocked: the process goes on
  EXPECT_EQ(signals.WaitFor(milliseconds(1000)), SIGHUP);
  EXPECT_EQ(signals.WaitFor(milliseconds(10)), 0);  // taken once
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_EQ(signals.Wait(), SIGTERM);
  ASSERT_EQ(raise(SIGINT), 0);
  EXPECT_EQ(signals.WaitFor(milliseconds(1000)), SIGINT);
}

// A thread started after DaemonSignals inherits the mask, so a signal never interrupts it, and
// one sent to the waiting thread from another is taken there.
TEST(DaemonSignals, ThreadsStartedAfterItBlockTheSignalsToo) {
  const DaemonSignals signals;
  const pthread_t waiter = pthread_self();
  bool blocked[3] = {false, false, false};
  std::thread other([&blocked, waiter] {
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    blocked[0] = sigismember(&mask, SIGINT) == 1;
    blocked[1] = sigismember(&mask, SIGTERM) == 1;
    blocked[2] = sigismember(&mask, SIGHUP) == 1;
    pthread_kill(waiter, SIGHUP);
  });
  other.join();
  EXPECT_TRUE(blocked[0] && blocked[1] && blocked[2]);
  EXPECT_EQ(signals.WaitFor(milliseconds(5000)), SIGHUP);
}

TEST(DaemonSignals, NamesAndWhichStop) {
  EXPECT_EQ(DaemonSignals::Name(SIGINT), "SIGINT");
  EXPECT_EQ(DaemonSignals::Name(SIGTERM), "SIGTERM");
  EXPECT_EQ(DaemonSignals::Name(SIGHUP), "SIGHUP");
  EXPECT_EQ(DaemonSignals::Name(SIGUSR1), "signal " + std::to_string(SIGUSR1));
  EXPECT_TRUE(DaemonSignals::Stops(SIGINT));
  EXPECT_TRUE(DaemonSignals::Stops(SIGTERM));
  EXPECT_FALSE(DaemonSignals::Stops(SIGHUP));
  EXPECT_FALSE(DaemonSignals::Stops(0));
}

}  // namespace
}  // namespace trailmap
