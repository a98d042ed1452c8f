#include "ingest/spool.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace trailmap {
namespace {

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/spool-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Spool> Open(uint64_t max_bytes = 1 << 20, std::string host = "web-1") {
    SpoolOptions o;
    o.dir = dir_;
    o.max_bytes = max_bytes;
    Result<std::unique_ptr<Spool>> spool = Spool::Open(o, host);
    EXPECT_TRUE(spool.ok()) << spool.status().ToString();
    return spool.ok() ? std::move(*spool) : nullptr;
  }
  // Appends batch `sequence` holding the text "batch-<sequence>" padded to `size`.
  static void Add(Spool* spool, uint64_t sequence, size_t size = 0) {
    std::vector<uint64_t> dropped;
    std::string bytes = "batch-" + std::to_string(sequence);
    bytes.resize(std::max(size, bytes.size()), '.');
    ASSERT_TRUE(spool->Append(sequence, 10, 0, 0, bytes, &dropped).ok());
  }
  // "1 2 3d" for owed sequences 1, 2 and a dropped 3.
  static std::string OwedText(const Spool& spool) {
    std::string out;
    for (const SpooledBatch& b : spool.Owed()) {
      out += (out.empty() ? "" : " ") + std::to_string(b.sequence) + (b.dropped ? "d" : "");
    }
    return out;
  }
  std::vector<std::string> Segments() const {
    std::vector<std::string> out;
    for (const auto& f : std::filesystem::directory_iterator(dir_)) {
      if (f.path().extension() == ".spool") out.push_back(f.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string dir_;
};

TEST_F(SpoolTest, KeepsWhatIsOwedTheAgentIdAndTheSequenceAcrossARestart) {
  std::string id;
  {
    auto spool = Open();
    id = spool->agent_id();
    EXPECT_EQ(id.substr(0, 6), "web-1/");
    EXPECT_EQ(spool->next_sequence(), 1u);
    for (uint64_t s = 1; s <= 5; ++s) Add(spool.get(), s);
    spool->Done(1);
    spool->Done(3);
    EXPECT_EQ(OwedText(*spool), "2 4 5");
    EXPECT_EQ(spool->counters().batches, 3u);
    EXPECT_EQ(spool->counters().appended, 5u);
  }
  auto spool = Open();
  EXPECT_EQ(spool->agent_id(), id);
  EXPECT_EQ(spool->next_sequence(), 6u);
  EXPECT_EQ(OwedText(*spool), "2 4 5");
  EXPECT_EQ(spool->counters().replayed, 3u);
  EXPECT_EQ(*spool->Read(4), "batch-4");
  EXPECT_EQ(spool->Read(3).status().code(), Status::Code::kNotFound);
  // Everything done: the sequence still continues after another restart.
  for (uint64_t s : {2, 4, 5}) spool->Done(s);
  spool.reset();
  spool = Open();
  EXPECT_EQ(OwedText(*spool), "");
  EXPECT_EQ(spool->next_sequence(), 6u);
  EXPECT_EQ(spool->agent_id(), id);
}

TEST_F(SpoolTest, StackAndFrameHighWaterMarksSurviveEvenWhenEverythingIsDone) {
  {
    auto spool = Open(64 << 10);  // 4 KiB segments: the batch's segment is deleted below
    std::vector<uint64_t> dropped;
    ASSERT_TRUE(spool->Append(1, 1, 17, 40, "stacks", &dropped).ok());
    ASSERT_TRUE(spool->Append(2, 1, 9, 3, std::string(5000, 'x'), &dropped).ok());
    Add(spool.get(), 3);  // in a new segment, whose header carries 17 and 40
    for (uint64_t s = 1; s <= 3; ++s) spool->Done(s);
    EXPECT_EQ(spool->stack_high(), 17u);
    EXPECT_EQ(spool->frame_high(), 40u);
  }
  auto spool = Open(64 << 10);
  EXPECT_EQ(spool->stack_high(), 17u);
  EXPECT_EQ(spool->frame_high(), 40u);
  EXPECT_EQ(spool->next_sequence(), 4u);
  EXPECT_EQ(Segments().size(), 1u);  // only the one just started
}

TEST_F(SpoolTest, ATornTailIsCutOffOnOpenAndNothingBeforeItIsLost) {
  {
    auto spool = Open();
    for (uint64_t s = 1; s <= 3; ++s) Add(spool.get(), s, 100);
  }
  const std::string last = Segments().back();
  const auto size = std::filesystem::file_size(last);
  std::filesystem::resize_file(last, size - 30);  // batch 3 half written
  {
    auto spool = Open();
    EXPECT_EQ(OwedText(*spool), "1 2");
    EXPECT_EQ(spool->counters().truncated_bytes, 9u + 24 + 100 - 30);
    EXPECT_EQ(spool->next_sequence(), 3u);
    Add(spool.get(), 3, 100);
  }
  auto spool = Open();
  EXPECT_EQ(OwedText(*spool), "1 2 3");
  EXPECT_EQ(spool->counters().truncated_bytes, 0u);
  EXPECT_EQ(spool->Read(3)->substr(0, 7), "batch-3");
}

TEST_F(SpoolTest, ACorruptRecordEndsItsSegmentAndIsNeverReturned) {
  {
    auto spool = Open();
    for (uint64_t s = 1; s <= 3; ++s) Add(spool.get(), s, 100);
  }
  const std::string last = Segments().back();
  {
    std::fstream f(last, std::ios::in | std::ios::out | std::ios::binary);
    // Batch 2's payload: the header record, batch 1's record, then into batch 2's.
    f.seekp(static_cast<std::streamoff>(std::filesystem::file_size(last) - 2 * 133 + 50));
    f.put('#');
  }
  auto spool = Open();
  EXPECT_EQ(OwedText(*spool), "1");
  EXPECT_EQ(spool->counters().truncated_bytes, 2u * 133);
  EXPECT_EQ(spool->next_sequence(), 2u);
}

TEST_F(SpoolTest, WhenFullTheOldestAreDroppedButTheirSequencesStayOwed) {
  std::string owed;
  {
    auto spool = Open(64 << 10);
    std::vector<uint64_t> dropped, all_dropped;
    for (uint64_t s = 1; s <= 200; ++s) {
      ASSERT_TRUE(spool->Append(s, 7, 0, 0, std::string(1000, 'b'), &dropped).ok());
    }
    const SpoolCounters c = spool->counters();
    EXPECT_LE(c.bytes, 64u << 10);
    ASSERT_GT(c.dropped_batches, 0u);
    EXPECT_EQ(dropped.size(), c.dropped_batches);
    EXPECT_EQ(c.dropped_events, 7 * c.dropped_batches);
    EXPECT_EQ(c.batches, 200 - c.dropped_batches);
    for (size_t i = 0; i < dropped.size(); ++i) EXPECT_EQ(dropped[i], i + 1);  // the oldest
    const std::vector<SpooledBatch> o = spool->Owed();
    ASSERT_EQ(o.size(), 200u);
    EXPECT_TRUE(o[0].dropped);
    EXPECT_FALSE(o[199].dropped);
    EXPECT_EQ(spool->Read(1).status().code(), Status::Code::kNotFound);
    owed = OwedText(*spool);
    // A batch larger than the whole spool is refused, not half kept.
    EXPECT_EQ(spool->Append(201, 1, 0, 0, std::string(70 << 10, 'x'), &dropped).code(),
              Status::Code::kResourceExhausted);
  }
  auto spool = Open(64 << 10);
  EXPECT_EQ(OwedText(*spool), owed);  // the dropped ones too
  // Acknowledging everything drains it back to one small segment.
  for (uint64_t s = 1; s <= 200; ++s) spool->Done(s);
  EXPECT_EQ(spool->counters().batches, 0u);
  EXPECT_LT(spool->counters().bytes, 4096u);
}

TEST_F(SpoolTest, RenumberTakesANewAgentIdAndSurvivesARestart) {
  {
    auto spool = Open();
    for (uint64_t s = 1; s <= 5; ++s) Add(spool.get(), s);
    spool->Done(1);
    spool->Done(2);
    ASSERT_TRUE(spool->Renumber("web-1/new").ok());
    EXPECT_EQ(OwedText(*spool), "1 2 3");
    EXPECT_EQ(*spool->Read(1), "batch-3");
    EXPECT_EQ(spool->next_sequence(), 4u);
    Add(spool.get(), 4);
  }
  auto spool = Open();
  EXPECT_EQ(spool->agent_id(), "web-1/new");
  EXPECT_EQ(OwedText(*spool), "1 2 3 4");
  EXPECT_EQ(*spool->Read(3), "batch-5");
  EXPECT_EQ(*spool->Read(4), "batch-4");
  EXPECT_EQ(spool->next_sequence(), 5u);
}

TEST_F(SpoolTest, ARenamedHostTakesANewAgentIdAndKeepsTheBatches) {
  std::string id;
  {
    auto spool = Open();
    id = spool->agent_id();
    Add(spool.get(), 7);
  }
  auto spool = Open(1 << 20, "web-2");
  EXPECT_EQ(spool->agent_id().substr(0, 6), "web-2/");
  EXPECT_EQ(OwedText(*spool), "1");
  EXPECT_EQ(*spool->Read(1), "batch-7");
}

TEST_F(SpoolTest, OneAgentPerDirectory) {
  auto spool = Open();
  SpoolOptions o;
  o.dir = dir_;
  Result<std::unique_ptr<Spool>> second = Spool::Open(o, "web-1");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(second.status().message().find("in use by another trailmap-agent"), std::string::npos);
}

TEST_F(SpoolTest, FsyncPolicies) {
  for (SpoolFsync policy : {SpoolFsync::kAlways, SpoolFsync::kNever}) {
    std::filesystem::remove_all(dir_);
    SpoolOptions o;
    o.dir = dir_;
    o.fsync = policy;
    auto spool = Spool::Open(o, "web-1");
    ASSERT_TRUE(spool.ok());
    const uint64_t before = (*spool)->counters().fsyncs;
    for (uint64_t s = 1; s <= 5; ++s) Add(spool->get(), s);
    EXPECT_EQ((*spool)->counters().fsyncs - before, policy == SpoolFsync::kAlways ? 5u : 0u);
  }
  EXPECT_EQ(*ParseSpoolFsync("interval"), SpoolFsync::kInterval);
  EXPECT_EQ(ParseSpoolFsync("often").status().message(),
            "spool fsync must be always, interval or never, got 'often'");
}

// The disk refuses writes (failpoint spool.write, as ENOSPC would): batches are held in memory,
// read back and acknowledged as any other, and the spool writes to disk again once it can. A
// restart then has what reached the disk, and the sequence goes on past every batch handed over.
TEST_F(SpoolTest, WhenTheDiskRefusesBatchesAreHeldInMemoryAndStillSent) {
#ifndef TRAILMAP_FAILPOINTS
  FAIL() << "needs a build with -DTRAILMAP_FAILPOINTS=ON (scripts/test)";
#endif
  auto spool = Open();
  Add(spool.get(), 1);
  ASSERT_EQ(setenv("TRAILMAP_FAILPOINTS", "spool.write=error", 1), 0);
  Add(spool.get(), 2);
  Add(spool.get(), 3);
  ASSERT_EQ(unsetenv("TRAILMAP_FAILPOINTS"), 0);
  Add(spool.get(), 4);
  EXPECT_EQ(spool->counters().held_in_memory, 2u);
  EXPECT_EQ(spool->counters().batches, 4u);
  EXPECT_EQ(OwedText(*spool), "1 2 3 4");
  for (uint64_t s = 1; s <= 4; ++s) {
    Result<std::string> b = spool->Read(s);
    ASSERT_TRUE(b.ok()) << s << ": " << b.status().ToString();
    EXPECT_EQ(*b, "batch-" + std::to_string(s));
  }
  spool->Done(2);  // acknowledged: gone from memory
  EXPECT_EQ(OwedText(*spool), "1 3 4");
  spool.reset();
  // Batch 3 never reached the disk: a restart (as after kill -9) has 1 and 4, and goes on at 5.
  spool = Open();
  EXPECT_EQ(OwedText(*spool), "1 4");
  EXPECT_EQ(spool->next_sequence(), 5u);
  EXPECT_EQ(*spool->Read(4), "batch-4");
}

// Killed while the disk refuses writes: the batches held in memory were sent (and may have been
// applied) under their sequences and stack and frame ids, which no segment records. The next run
// must go on above them (HELD), or the aggregator would take its new batches for duplicates.
TEST_F(SpoolTest, AKillWhileBatchesAreHeldInMemoryNeverReusesTheirSequences) {
#ifndef TRAILMAP_FAILPOINTS
  FAIL() << "needs a build with -DTRAILMAP_FAILPOINTS=ON (scripts/test)";
#endif
  auto hold_two_and_kill = [this](std::unique_ptr<Spool> spool) {
    ASSERT_EQ(spool->next_sequence(), 2u);
    ASSERT_EQ(setenv("TRAILMAP_FAILPOINTS", "spool.write=error", 1), 0);
    std::vector<uint64_t> dropped;
    ASSERT_TRUE(spool->Append(2, 1, 7, 40, "batch-2", &dropped).ok());
    ASSERT_TRUE(spool->Append(3, 1, 9, 55, "batch-3", &dropped).ok());
    ASSERT_EQ(unsetenv("TRAILMAP_FAILPOINTS"), 0);
    EXPECT_EQ(spool->counters().held_in_memory, 2u);
    spool.reset();  // as a kill -9: batches 2 and 3 existed only in memory
  };
  auto spool = Open();
  Add(spool.get(), 1);
  spool->Done(1);
  hold_two_and_kill(std::move(spool));
  // A torn HELD is ignored, not an error: the segments alone say 2.
  {
    std::FILE* f = std::fopen((dir_ + "/HELD").c_str(), "r+");
    ASSERT_NE(f, nullptr);
    std::fputc('x', f);
    std::fclose(f);
  }
  spool = Open();
  EXPECT_EQ(spool->next_sequence(), 2u);
  hold_two_and_kill(std::move(spool));
  spool = Open();
  EXPECT_EQ(OwedText(*spool), "");
  EXPECT_EQ(spool->next_sequence(), 4u);
  EXPECT_EQ(spool->stack_high(), 9u);
  EXPECT_EQ(spool->frame_high(), 55u);
}

TEST(SpoolInMemory, DropsTheOldestAndKeepsNothingOnDisk) {
  SpoolOptions o;
  o.max_bytes = 250;
  auto spool = Spool::Open(o, "web-1", "web-1/m");
  ASSERT_TRUE(spool.ok());
  EXPECT_EQ((*spool)->agent_id(), "web-1/m");
  std::vector<uint64_t> dropped;
  for (uint64_t s = 1; s <= 3; ++s) {
    ASSERT_TRUE((*spool)->Append(s, 2, 0, 0, std::string(100, 'a'), &dropped).ok());
  }
  EXPECT_EQ(dropped, std::vector<uint64_t>{1});
  EXPECT_EQ((*spool)->counters().dropped_events, 2u);
  EXPECT_EQ((*spool)->counters().bytes, 200u);
  (*spool)->Done(1);
  (*spool)->Done(2);
  EXPECT_EQ((*spool)->counters().bytes, 100u);
  EXPECT_EQ((*spool)->Owed().size(), 1u);
}

}  // namespace
}  // namespace trailmap
