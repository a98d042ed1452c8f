#include "core/failpoint.h"

#include <stdlib.h>

#include <gtest/gtest.h>

namespace trailmap {
namespace {

#ifdef TRAILMAP_FAILPOINTS
// The table is read once per process, on the first FailpointFires: set it before that.
TEST(FailpointTest, FiresAsTheEnvironmentSays) {
  ASSERT_EQ(setenv("TRAILMAP_FAILPOINTS",
                   "test.every=error,test.third=error@3,test.nap=sleep:1,bad,test.x=explode", 1),
            0);
  EXPECT_TRUE(TRAILMAP_FAILPOINT("test.every"));
  EXPECT_TRUE(TRAILMAP_FAILPOINT("test.every"));
  EXPECT_FALSE(TRAILMAP_FAILPOINT("test.third"));
  EXPECT_FALSE(TRAILMAP_FAILPOINT("test.third"));
  EXPECT_TRUE(TRAILMAP_FAILPOINT("test.third"));
  EXPECT_FALSE(TRAILMAP_FAILPOINT("test.third"));
  EXPECT_FALSE(TRAILMAP_FAILPOINT("test.nap"));  // sleeps, then goes on
  EXPECT_FALSE(TRAILMAP_FAILPOINT("test.x"));    // unknown action: ignored (and logged)
  EXPECT_FALSE(TRAILMAP_FAILPOINT("test.unset"));
}
#else
TEST(FailpointTest, CompiledOut) { EXPECT_FALSE(TRAILMAP_FAILPOINT("anything")); }
#endif

}  // namespace
}  // namespace trailmap
