#include "core/open_files.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace trailmap {
namespace {

// From a soft limit below the hard one, the soft limit is raised to the hard limit.
TEST(OpenFiles, TheSoftLimitIsRaisedToTheHardOne) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  if (before.rlim_max < 2) GTEST_SKIP() << "a hard limit of " << before.rlim_max;
  rlimit lowered = before;
  lowered.rlim_cur = before.rlim_max / 2;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  EXPECT_EQ(RaiseOpenFileLimit(), before.rlim_max);
  rlimit after{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(after.rlim_cur, before.rlim_max);
  EXPECT_EQ(RaiseOpenFileLimit(), before.rlim_max);  // already there: unchanged
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &before), 0);
}

}  // namespace
}  // namespace trailmap
