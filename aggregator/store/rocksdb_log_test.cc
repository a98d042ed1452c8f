#include "aggregator/store/rocksdb_log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RocksDbLog, AppendsOneLinePerMessageAtOrAboveItsLevel) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/LOG";
  {
    RocksDbLog log(path);
    rocksdb::Log(rocksdb::InfoLogLevel::INFO_LEVEL, &log, "flushed %d files", 3);
    rocksdb::Log(rocksdb::InfoLogLevel::DEBUG_LEVEL, &log, "not kept");
    rocksdb::Log(rocksdb::InfoLogLevel::WARN_LEVEL, &log, "a count passed %s", "2^62");
    EXPECT_EQ(log.dropped(), 0u);
  }
  const std::string text = ReadAll(path);
  EXPECT_NE(text.find("[INFO] flushed 3 files\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[WARN] a count passed 2^62\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("not kept"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
}

// /dev/full refuses every write with ENOSPC, as a full disk does: lines are dropped and counted,
// and the logger goes on (RocksDB's own would abort at its next line once one write failed).
TEST(RocksDbLog, AFullDiskDropsLinesAndGoesOn) {
  RocksDbLog log("/dev/full");
  for (int i = 0; i < 3; ++i) rocksdb::Log(rocksdb::InfoLogLevel::INFO_LEVEL, &log, "line %d", i);
  EXPECT_EQ(log.dropped(), 3u);
  EXPECT_TRUE(log.Close().ok());
}

TEST(RocksDbLog, ALargeLogIsRotatedOnOpen) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/LOG";
  {
    std::ofstream big(path);
    big << std::string(2000, 'x') << "\n";
  }
  {
    RocksDbLog log(path, /*rotate_bytes=*/1000);
    rocksdb::Log(rocksdb::InfoLogLevel::INFO_LEVEL, &log, "fresh");
  }
  EXPECT_EQ(ReadAll(path + ".old").size(), 2001u);
  EXPECT_NE(ReadAll(path).find("fresh"), std::string::npos);
  EXPECT_EQ(ReadAll(path).find("xxx"), std::string::npos);
}

}  // namespace
}  // namespace trailmap::aggregator
