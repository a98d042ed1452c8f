#include "aggregator/store/disk_guard.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::TempDir;

TEST(DiskGuardTest, NoReserveOrNoDirectoryChecksNothing) {
  TempDir dir;
  DiskGuard off(dir.path(), 0);
  EXPECT_TRUE(off.Check().ok());
  EXPECT_FALSE(off.low());
  DiskGuard nowhere("", 1 << 20);
  EXPECT_TRUE(nowhere.Check().ok());
}

TEST(DiskGuardTest, AReserveTheDiskHasPasses) {
  TempDir dir;
  DiskGuard guard(dir.path(), 1);
  EXPECT_TRUE(guard.Check().ok());
  EXPECT_FALSE(guard.low());
}

// A reserve no file system has (2^40 MiB): refused with what is free, where, and the reserve, and
// refused again on the next write (not only the first).
TEST(DiskGuardTest, BelowTheReserveEveryWriteIsRefusedWithTheNumbers) {
  TempDir dir;
  DiskGuard guard(dir.path(), size_t{1} << 40);
  for (int i = 0; i < 2; ++i) {
    const Status s = guard.Check();
    EXPECT_EQ(s.code(), Status::Code::kResourceExhausted);
    EXPECT_EQ(s.message().rfind("disk full: ", 0), 0u) << s.message();
    EXPECT_NE(s.message().find(" MiB free under " + dir.path() + ", reserve 1099511627776 MiB"),
              std::string::npos)
        << s.message();
    EXPECT_TRUE(guard.low());
  }
}

// A directory that cannot be looked at is not called full: RocksDB may try, and will say why.
TEST(DiskGuardTest, ADirectoryThatCannotBeReadIsNotFull) {
  DiskGuard guard("/nonexistent/trailmap-disk-guard", size_t{1} << 40);
  EXPECT_TRUE(guard.Check().ok());
  EXPECT_FALSE(guard.low());
}

}  // namespace
}  // namespace trailmap::aggregator
