#include "aggregator/store/stack_merge_operator.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <memory>

#include "aggregator/store/testing.h"
#include "core/counts.h"

namespace trailmap::aggregator {
namespace {

using testing::TempDir;

// "id:count id:count" of an encoding, or the error.
std::string Show(std::string_view value) {
  Result<StackCounts> counts = DecodeStackCounts(value);
  if (!counts.ok()) return counts.status().ToString();
  std::string out;
  for (const auto& [id, count] : *counts) {
    if (!out.empty()) out += " ";
    out += std::to_string(id) + ":" + std::to_string(count);
  }
  return out;
}

// ---- the encoding ----

TEST(StackCountsTest, EncodesTheWorkedExample) {
  EXPECT_EQ(EncodeStackCounts({{3, 5}, {10, 1}}), std::string("\x03\x05\x07\x01", 4));
  EXPECT_EQ(Show(EncodeUnsortedStackCounts({{10, 1}, {3, 2}, {3, 3}, {7, 0}})), "3:5 10:1");
  EXPECT_EQ(Show(EncodeStackCounts({{1, 300}, {70000, 1}})), "1:300 70000:1");
}

TEST(StackCountsTest, RefusesWhatIsNotCanonical) {
  EXPECT_NE(Show("").find("empty value"), std::string::npos);
  EXPECT_NE(Show(std::string("\x03", 1)).find("entry 0 is cut short"), std::string::npos);
  EXPECT_NE(Show(std::string("\x03\x05\x00\x01", 4)).find("entry 1 repeats"), std::string::npos);
  EXPECT_NE(Show(std::string("\x03\x00", 2)).find("entry 0 has count 0"), std::string::npos);
  EXPECT_NE(Show(std::string("\x03\x85", 2)).find("cut short"), std::string::npos);
}

// fuzz/corpus/stacks/id_wraps: id 6, then a delta of 2^64 - 1 wrapped the id to 5, which decoded
// as a second entry going back (not sorted, so not canonical). Now refused as past 2^32.
TEST(StackCountsTest, RefusesADeltaThatWrapsTheId) {
  const std::string value = std::string("\x06\x01", 2) + std::string(9, '\xff') + "\x01\x01";
  EXPECT_NE(Show(value).find("entry 1 id past 2^32"), std::string::npos) << Show(value);
  EXPECT_FALSE(DecodeStackCounts(value).ok());
}

// ---- the merge as a pure function ----

// The pure merge of counts far from the bound: it never saturates.
Status PureMerge(const std::string_view* existing, const std::vector<std::string_view>& operands,
                 std::string* out) {
  bool saturated = false;
  Status s = MergeStackCountEncodings(existing, operands, out, &saturated);
  EXPECT_FALSE(saturated);
  return s;
}

TEST(StackMergeTest, AddsCountsOfEqualIds) {
  const std::string existing = EncodeStackCounts({{1, 4}, {5, 1}});
  const std::string_view existing_view = existing;
  const std::string a = EncodeStackCounts({{5, 2}, {9, 1}});
  const std::string b = EncodeStackCounts({{1, 1}});
  std::string out;
  ASSERT_TRUE(PureMerge(&existing_view, {a, b}, &out).ok());
  EXPECT_EQ(Show(out), "1:5 5:3 9:1");
  ASSERT_TRUE(PureMerge(nullptr, {a, b}, &out).ok());
  EXPECT_EQ(Show(out), "1:1 5:2 9:1");
  ASSERT_TRUE(PureMerge(nullptr, {a}, &out).ok());
  EXPECT_EQ(out, a);
}

TEST(StackMergeTest, ACorruptOperandOrValueFailsTheMerge) {
  const std::string good = EncodeStackCounts({{2, 2}});
  std::string out;
  Status s = PureMerge(nullptr, {good, std::string("\x02\x00", 2)}, &out);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("operand 1"), std::string::npos) << s.message();
  const std::string_view bad = "\x01";
  s = PureMerge(&bad, {good}, &out);
  EXPECT_NE(s.message().find("existing value"), std::string::npos) << s.message();
  EXPECT_FALSE(PureMerge(nullptr, {std::string()}, &out).ok());
}

TEST(StackMergeTest, CountsPastTheBoundSaturateInsteadOfFailing) {
  const uint64_t near = kMaxTotalCount - 3;
  const std::string a = EncodeStackCounts({{1, near}, {2, 1}});
  const std::string b = EncodeStackCounts({{1, 5}, {3, 2}});
  const std::string huge = EncodeStackCounts({{2, UINT64_MAX}});  // valid: from before the bound
  std::string out;
  bool saturated = false;
  ASSERT_TRUE(MergeStackCountEncodings(nullptr, {a, b}, &out, &saturated).ok());
  EXPECT_TRUE(saturated);
  EXPECT_EQ(Show(out), "1:4611686018427387904 2:1 3:2");  // only stack 1 is cut
  saturated = false;
  ASSERT_TRUE(MergeStackCountEncodings(nullptr, {huge, b}, &out, &saturated).ok());
  EXPECT_TRUE(saturated);
  EXPECT_EQ(Show(out), "1:5 2:4611686018427387904 3:2");
  auto counters = std::make_shared<MergeCounters>();
  StackMergeOperator op(counters);
  ASSERT_TRUE(op.PartialMerge("k", a, a, &out, nullptr));
  EXPECT_EQ(Show(out), "1:4611686018427387904 2:2");
  EXPECT_EQ(counters->saturated.load(), 1u);
}

TEST(StackMergeTest, OperatorCallbacksFailInsteadOfCountingZero) {
  StackMergeOperator op;
  EXPECT_STREQ(op.Name(), "trailmap.stacks");
  const std::string a = EncodeStackCounts({{1, 1}}), b = EncodeStackCounts({{1, 2}, {4, 1}});
  std::string out;
  ASSERT_TRUE(op.PartialMerge("k", a, b, &out, nullptr));
  EXPECT_EQ(Show(out), "1:3 4:1");
  ASSERT_TRUE(op.PartialMergeMulti("k", {a, b, a}, &out, nullptr));
  EXPECT_EQ(Show(out), "1:4 4:1");
  EXPECT_FALSE(op.PartialMerge("k", a, "\x80", &out, nullptr));  // a varint cut short
  const rocksdb::Slice existing(b);
  std::vector<rocksdb::Slice> operands{a};
  std::string merged;
  rocksdb::Slice existing_operand;
  rocksdb::MergeOperator::MergeOperationOutput output(merged, existing_operand);
  ASSERT_TRUE(op.FullMergeV2(
      rocksdb::MergeOperator::MergeOperationInput("k", &existing, operands, nullptr), &output));
  EXPECT_EQ(Show(merged), "1:3 4:1");
  operands.push_back("\x05");  // an id without its count
  EXPECT_FALSE(op.FullMergeV2(
      rocksdb::MergeOperator::MergeOperationInput("k", &existing, operands, nullptr), &output));

  // One value alone is handed back as it is, once it decodes: no copy into new_value.
  merged.clear();
  const std::vector<rocksdb::Slice> none;
  ASSERT_TRUE(op.FullMergeV2(
      rocksdb::MergeOperator::MergeOperationInput("k", &existing, none, nullptr), &output));
  EXPECT_TRUE(merged.empty());
  EXPECT_EQ(existing_operand.data(), existing.data());
  EXPECT_EQ(Show(existing_operand.ToString()), "1:2 4:1");
  const rocksdb::Slice cut("\x05");
  EXPECT_FALSE(op.FullMergeV2(rocksdb::MergeOperator::MergeOperationInput("k", &cut, none, nullptr),
                              &output));
}

// ---- through a real DB ----

class StackMergeDbTest : public ::testing::Test {
 protected:
  void Open() {
    rocksdb::Options options;
    options.create_if_missing = true;
    options.merge_operator = std::make_shared<StackMergeOperator>(counters_);
    options.max_successive_merges = 4;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_.path(), &db).ok());
    db_.reset(db);
  }
  void Merge(const std::string& key, const StackCounts& counts) {
    ASSERT_TRUE(db_->Merge(rocksdb::WriteOptions(), key, EncodeStackCounts(counts)).ok());
  }
  std::string Get(const std::string& key) {
    std::string value;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), key, &value);
    return s.ok() ? Show(value) : s.ToString();
  }

  uint64_t BackgroundErrors() {
    uint64_t errors = 0;
    EXPECT_TRUE(db_->GetIntProperty(rocksdb::DB::Properties::kBackgroundErrors, &errors));
    return errors;
  }

  TempDir dir_;
  std::shared_ptr<MergeCounters> counters_ = std::make_shared<MergeCounters>();
  std::unique_ptr<rocksdb::DB> db_;
};

TEST_F(StackMergeDbTest, CountsExactAcrossFlushCompactionAndReopen) {
  Open();
  for (uint32_t i = 1; i <= 10; ++i) Merge("a", {{1, 1}, {i + 1, i}});  // > max_successive_merges
  Merge("b", {{7, 7}});
  EXPECT_EQ(Get("a"), "1:10 2:1 3:2 4:3 5:4 6:5 7:6 8:7 9:8 10:9 11:10");
  ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  Merge("a", {{1, 5}});  // on top of a flushed value
  EXPECT_EQ(Get("a"), "1:15 2:1 3:2 4:3 5:4 6:5 7:6 8:7 9:8 10:9 11:10");
  ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  ASSERT_TRUE(db_->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());
  EXPECT_EQ(Get("a"), "1:15 2:1 3:2 4:3 5:4 6:5 7:6 8:7 9:8 10:9 11:10");
  Merge("a", {{12, 1}});  // left in the WAL across the reopen
  db_.reset();
  Open();
  EXPECT_EQ(Get("a"), "1:15 2:1 3:2 4:3 5:4 6:5 7:6 8:7 9:8 10:9 11:10 12:1");
  EXPECT_EQ(Get("b"), "7:7");
}

TEST_F(StackMergeDbTest, CountsPastTheBoundSaturateAcrossFlushCompactionAndReopen) {
  Open();
  const uint64_t near = kMaxTotalCount - 10;
  Merge("a", {{1, near}, {2, 1}});
  Merge("b", {{7, 7}});
  ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  for (int i = 0; i < 6; ++i) Merge("a", {{1, near}, {2, 1}});
  EXPECT_EQ(Get("a"), "1:4611686018427387904 2:7");
  ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  ASSERT_TRUE(db_->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());
  EXPECT_EQ(BackgroundErrors(), 0u);
  EXPECT_GT(counters_->saturated.load(), 0u);
  Merge("a", {{3, 1}});
  Merge("b", {{7, 1}});
  ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  ASSERT_TRUE(db_->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());
  EXPECT_EQ(BackgroundErrors(), 0u);
  db_.reset();
  Open();
  EXPECT_EQ(Get("a"), "1:4611686018427387904 2:7 3:1");
  EXPECT_EQ(Get("b"), "7:8");
}

TEST_F(StackMergeDbTest, UndecodableOperandFailsTheRead) {
  Open();
  Merge("a", {{1, 1}});
  ASSERT_TRUE(db_->Merge(rocksdb::WriteOptions(), "a", "\x01\x00").ok());
  std::string value;
  EXPECT_TRUE(db_->Get(rocksdb::ReadOptions(), "a", &value).IsCorruption());
  Merge("b", {{2, 2}});
  EXPECT_EQ(Get("b"), "2:2");
}

}  // namespace
}  // namespace trailmap::aggregator
