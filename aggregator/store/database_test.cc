#include "aggregator/store/database.h"

#include <gtest/gtest.h>
#include <rocksdb/write_batch.h>

#include <string>

#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::TempDir;

std::unique_ptr<Database> MustOpen(const std::string& dir, const StoreOptions& options = {}) {
  Result<std::unique_ptr<Database>> db = Database::Open(dir, options);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(db).value() : nullptr;
}

rocksdb::Status PutMeta(Database& db, const std::string& key) {
  rocksdb::WriteBatch wb;
  wb.Put(db.meta(), key, "v");
  return db.Write(rocksdb::WriteOptions(), &wb);
}

TEST(DatabaseTest, OpensEveryFamilyAndKeepsWhatIsWrittenAcrossAReopen) {
  TempDir dir;
  {
    std::unique_ptr<Database> db = MustOpen(dir.path());
    ASSERT_NE(db, nullptr);
    for (size_t r = 0; r < kHistogramResolutionCount; ++r) {
      ASSERT_NE(db->hist(r), nullptr);
      EXPECT_EQ(db->hist(r)->GetName(), kHistogramResolutions[r].family);
    }
    EXPECT_EQ(db->scalar()->GetName(), "scalar");
    EXPECT_EQ(db->meta()->GetName(), "meta");
    EXPECT_EQ(db->stacks()->GetName(), "stacks");
    EXPECT_EQ(db->stacks_60s()->GetName(), "stacks_60s");
    EXPECT_EQ(db->dir(), dir.path());
    ASSERT_TRUE(PutMeta(*db, "k").ok());
    EXPECT_TRUE(db->Flush().ok());
    EXPECT_TRUE(db->Compact().ok());
    EXPECT_GT(db->DiskBytes(), 0u);
  }
  std::unique_ptr<Database> db = MustOpen(dir.path());
  std::string value;
  ASSERT_TRUE(db->db()->Get(rocksdb::ReadOptions(), db->meta(), "k", &value).ok());
  EXPECT_EQ(value, "v");
}

// While RocksDB holds a background error nothing is written (a failed WAL write aborts RocksDB
// builds with assertions), and the refusal says which error; once resumed, writes go through.
TEST(DatabaseTest, WritesAreRefusedWhileABackgroundErrorHolds) {
  TempDir dir;
  std::unique_ptr<Database> db = MustOpen(dir.path());
  EXPECT_EQ(db->WriteRefusal(), "");
  db->background_errors().Set("flush", "IO error: No space left on device");
  const rocksdb::Status refused = PutMeta(*db, "k");
  EXPECT_TRUE(refused.IsIOError());
  EXPECT_NE(refused.ToString().find("not written while RocksDB holds a background error in "
                                    "flush: IO error: No space left on device"),
            std::string::npos)
      << refused.ToString();
  EXPECT_EQ(db->WriteRefusal(), "background error in flush: IO error: No space left on device");
  std::string value;
  EXPECT_TRUE(db->db()->Get(rocksdb::ReadOptions(), db->meta(), "k", &value).IsNotFound());
  EXPECT_TRUE(db->ResumeIfDue());  // DB::Resume on a database with no real error: ok
  EXPECT_EQ(db->WriteRefusal(), "");
  EXPECT_TRUE(PutMeta(*db, "k").ok());
}

// Below the disk's reserve a write is refused as NoSpace, before RocksDB sees it.
TEST(DatabaseTest, WritesAreRefusedBelowTheDiskReserve) {
  TempDir dir;
  StoreOptions options;
  options.min_free_mb = size_t{1} << 40;
  std::unique_ptr<Database> db = MustOpen(dir.path(), options);
  const rocksdb::Status refused = PutMeta(*db, "k");
  EXPECT_TRUE(refused.IsNoSpace()) << refused.ToString();
  EXPECT_NE(refused.ToString().find("disk full: "), std::string::npos) << refused.ToString();
  EXPECT_EQ(db->WriteRefusal(),
            "disk full: less than store.min_free_mb free; writes refused until space returns");
}

TEST(DatabaseTest, PropertiesAndErrors) {
  TempDir dir;
  std::unique_ptr<Database> db = MustOpen(dir.path());
  EXPECT_TRUE(db->IntProperty("rocksdb.estimate-pending-compaction-bytes").ok());
  const Result<uint64_t> none = db->IntProperty("rocksdb.no-such-property");
  EXPECT_EQ(
      none.status().ToString(),
      Status::NotFound("RocksDB has no integer property rocksdb.no-such-property").ToString());
  EXPECT_EQ(db->SaturatedMerges(), 0u);
  db->CountSaturated(3);
  EXPECT_EQ(db->SaturatedMerges(), 3u);
  EXPECT_EQ(db->LastError(), "");
  db->NoteError("rollup of minute 60 of m: IO error");
  EXPECT_EQ(db->LastError(), "rollup of minute 60 of m: IO error");
}

}  // namespace
}  // namespace trailmap::aggregator
