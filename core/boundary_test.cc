#include "core/boundary.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

namespace trailmap {
namespace {

TEST(CatchAtBoundary, ReturnsTrueWhenTheBodyReturns) {
  std::atomic<uint64_t> failures{0};
  int ran = 0;
  EXPECT_TRUE(CatchAtBoundary("part", &failures, [&ran] { ++ran; }));
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(failures.load(), 0u);
}

TEST(CatchAtBoundary, LogsAndCountsWhatTheBodyThrows) {
  std::atomic<uint64_t> failures{0};
  testing::internal::CaptureStderr();
  EXPECT_FALSE(CatchAtBoundary("perf", &failures, [] { throw std::runtime_error("no memory"); }));
  EXPECT_FALSE(CatchAtBoundary("perf", &failures, [] { throw 42; }));
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("perf: unexpected error: no memory\n"), std::string::npos) << log;
  EXPECT_NE(log.find("perf: unexpected error (not a std::exception)\n"), std::string::npos) << log;
  EXPECT_EQ(failures.load(), 2u);
  // No counter: logged all the same.
  testing::internal::CaptureStderr();
  EXPECT_FALSE(CatchAtBoundary("exec", nullptr, [] { throw std::logic_error("bug"); }));
  EXPECT_NE(testing::internal::GetCapturedStderr().find("exec: unexpected error: bug"),
            std::string::npos);
}

// The use it is for: a thread whose body throws ends normally instead of ending the process.
TEST(CatchAtBoundary, AThreadWhoseBodyThrowsEndsAndIsCounted) {
  std::atomic<uint64_t> failures{0};
  testing::internal::CaptureStderr();
  std::thread t([&failures] {
    int attempts = 0;
    while (!CatchAtBoundary("loop", &failures, [&attempts] {
      if (++attempts < 3) throw std::runtime_error("attempt " + std::to_string(attempts));
    })) {
    }
  });
  t.join();
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(failures.load(), 2u);
}

}  // namespace
}  // namespace trailmap
