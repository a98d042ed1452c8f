#include "aggregator/store/histogram_merge_operator.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <memory>

#include "aggregator/store/testing.h"
#include "core/histogram.h"

namespace trailmap::aggregator {
namespace {

using testing::Encoded;
using testing::HistogramOf;
using testing::TempDir;

Histogram MustDecode(std::string_view encoded) {
  Result<Histogram> h = Histogram::Decode(encoded);
  EXPECT_TRUE(h.ok()) << h.status().ToString();
  return h.ok() ? *h : Histogram();
}

// The pure merge of operands far from the count bound: it never saturates.
Status PureMerge(const std::string_view* existing, const std::vector<std::string_view>& operands,
                 std::string* out) {
  bool saturated = false;
  Status s = MergeHistogramEncodings(existing, operands, out, &saturated);
  EXPECT_FALSE(saturated);
  return s;
}

// count events of each value.
std::string Many(std::initializer_list<uint64_t> values, uint64_t count) {
  Histogram h;
  for (uint64_t v : values) h.Record(v, count);
  return h.Encode();
}

// ---- as a pure function ----

TEST(HistogramMergeTest, AddsExistingAndOperands) {
  const std::string existing = Encoded({3, 3});
  const std::string_view existing_view = existing;
  const std::string a = Encoded({200}), b = Encoded({1000, 5});
  std::string out;
  ASSERT_TRUE(PureMerge(&existing_view, {a, b}, &out).ok());
  const Histogram h = MustDecode(out);
  EXPECT_EQ(h, HistogramOf({3, 3, 200, 1000, 5}));
  EXPECT_EQ(h.count(), 5u);
  EXPECT_EQ(h.min(), 3u);
  EXPECT_EQ(h.max(), 1000u);
  EXPECT_EQ(h.BucketCount(3), 2u);
  EXPECT_EQ(h.BucketCount(BucketIndex(1000)), 1u);
}

TEST(HistogramMergeTest, NoExistingValue) {
  const std::string a = Encoded({1, 2}), b = Encoded({2});
  std::string out = "left over";
  ASSERT_TRUE(PureMerge(nullptr, {a, b}, &out).ok());
  EXPECT_EQ(out, Encoded({1, 2, 2}));
}

TEST(HistogramMergeTest, BadOperandOrExistingValueFails) {
  const std::string good = Encoded({10});
  std::string out;
  Status s = PureMerge(nullptr, {good, "\x01\x05garbage"}, &out);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("operand 1"), std::string::npos) << s.message();

  const std::string_view bad_existing = "\x02";  // version 2 does not exist
  s = PureMerge(&bad_existing, {good}, &out);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("existing value"), std::string::npos) << s.message();

  // An empty operand is not an empty histogram: the encoding of nothing is "\x01\x00".
  EXPECT_FALSE(PureMerge(nullptr, {good, ""}, &out).ok());
}

TEST(HistogramMergeTest, ALoneEncodingIsCheckedThenKeptAsItIs) {
  const std::string good = Encoded({10, 300, 70000});
  std::string out;
  ASSERT_TRUE(PureMerge(nullptr, {good}, &out).ok());
  EXPECT_EQ(out, good);
  const std::string_view existing = good;
  ASSERT_TRUE(PureMerge(&existing, {}, &out).ok());
  EXPECT_EQ(out, good);
  std::string spoiled = good;
  spoiled.back() = 0;  // the last bucket's count becomes 0
  Status s = PureMerge(nullptr, {spoiled}, &out);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("operand 0"), std::string::npos) << s.message();
}

TEST(HistogramMergeTest, ValidOperandsPastTheBoundSaturateInsteadOfFailing) {
  // histogram.h's example: {2^61 x 10, 2^61 x 1000} + {2^61 x 10}.
  const std::string existing = Many({10, 1000}, uint64_t{1} << 61);
  const std::string_view existing_view = existing;
  const std::string b = Many({10}, uint64_t{1} << 61);
  std::string out;
  bool saturated = false;
  ASSERT_TRUE(MergeHistogramEncodings(&existing_view, {b}, &out, &saturated).ok());
  EXPECT_TRUE(saturated);
  Histogram h = MustDecode(out);
  EXPECT_EQ(h.count(), kMaxTotalCount);
  EXPECT_EQ(h.BucketCount(10), 3074457345618258603u);
  EXPECT_EQ(h.BucketCount(BucketIndex(1000)), 1537228672809129301u);
  // Operands that each hold up to 2^64 - 1 events (a store from before the bounds): still a
  // valid, saturated result.
  std::string old_value("\x01\x01\x07\x00\x00\x07", 6);
  PutVarint(&old_value, UINT64_MAX);
  saturated = false;
  ASSERT_TRUE(MergeHistogramEncodings(nullptr, {old_value, old_value, b}, &out, &saturated).ok());
  EXPECT_TRUE(saturated);
  h = MustDecode(out);
  EXPECT_EQ(h.count(), kMaxTotalCount);
  EXPECT_EQ(h.min(), 7u);
  EXPECT_EQ(h.max(), 10u);

  auto counters = std::make_shared<MergeCounters>();
  HistogramMergeOperator op(counters);
  const std::string c = Many({10}, kMaxTotalCount);
  ASSERT_TRUE(op.PartialMerge("k", c, c, &out, nullptr));
  EXPECT_EQ(MustDecode(out).count(), kMaxTotalCount);
  ASSERT_TRUE(op.PartialMerge("k", b, b, &out, nullptr));  // 2^62: at the bound, not past it
  EXPECT_EQ(counters->saturated.load(), 1u);
}

TEST(HistogramMergeTest, OperatorCallbacksFailInsteadOfCountingZero) {
  HistogramMergeOperator op;
  EXPECT_STREQ(op.Name(), "trailmap.histogram");
  const std::string a = Encoded({7}), b = Encoded({7, 9});
  std::string out;
  ASSERT_TRUE(op.PartialMerge("k", a, b, &out, nullptr));
  EXPECT_EQ(out, Encoded({7, 7, 9}));
  out.clear();
  ASSERT_TRUE(op.PartialMergeMulti("k", {a, b, a}, &out, nullptr));
  EXPECT_EQ(out, Encoded({7, 7, 7, 9}));
  out.clear();
  EXPECT_FALSE(op.PartialMerge("k", a, "junk", &out, nullptr));

  const rocksdb::Slice existing(b);
  std::vector<rocksdb::Slice> operands{a};
  std::string merged;
  rocksdb::Slice existing_operand;
  rocksdb::MergeOperator::MergeOperationOutput output(merged, existing_operand);
  ASSERT_TRUE(op.FullMergeV2(
      rocksdb::MergeOperator::MergeOperationInput("k", &existing, operands, nullptr), &output));
  EXPECT_EQ(merged, Encoded({7, 7, 9}));

  operands.push_back("junk");
  merged.clear();
  EXPECT_FALSE(op.FullMergeV2(
      rocksdb::MergeOperator::MergeOperationInput("k", &existing, operands, nullptr), &output));

  // One operand alone is handed back as it is, once it decodes: no copy into new_value.
  merged.clear();
  const std::vector<rocksdb::Slice> one{a};
  ASSERT_TRUE(op.FullMergeV2(
      rocksdb::MergeOperator::MergeOperationInput("k", nullptr, one, nullptr), &output));
  EXPECT_TRUE(merged.empty());
  EXPECT_EQ(existing_operand.data(), one[0].data());
  EXPECT_EQ(existing_operand.ToString(), a);
  const std::vector<rocksdb::Slice> junk{"junk"};
  EXPECT_FALSE(op.FullMergeV2(
      rocksdb::MergeOperator::MergeOperationInput("k", nullptr, junk, nullptr), &output));
}

// ---- through a real DB ----

class MergeDbTest : public ::testing::Test {
 protected:
  void Open() {
    rocksdb::Options options;
    options.create_if_missing = true;
    options.merge_operator = std::make_shared<HistogramMergeOperator>(counters_);
    options.max_successive_merges = 4;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_.path(), &db).ok());
    db_.reset(db);
  }
  void Merge(const std::string& key, const std::string& value) {
    ASSERT_TRUE(db_->Merge(rocksdb::WriteOptions(), key, value).ok());
  }
  Histogram Get(const std::string& key) {
    std::string value;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), key, &value);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return MustDecode(value);
  }

  // RocksDB's background error: set if a flush or compaction failed (a failed merge there).
  uint64_t BackgroundErrors() {
    uint64_t errors = 0;
    EXPECT_TRUE(db_->GetIntProperty(rocksdb::DB::Properties::kBackgroundErrors, &errors));
    return errors;
  }

  TempDir dir_;
  std::shared_ptr<MergeCounters> counters_ = std::make_shared<MergeCounters>();
  std::unique_ptr<rocksdb::DB> db_;
};

TEST_F(MergeDbTest, CountsExactAcrossFlushCompactionAndReopen) {
  Open();
  // Ten operands for "a" (more than max_successive_merges), values 1..10.
  for (uint64_t v = 1; v <= 10; ++v) Merge("a", Encoded({v, 1000 * v}));
  Merge("b", Encoded({42}));
  Histogram a = Get("a");
  EXPECT_EQ(a.count(), 20u);
  EXPECT_EQ(a.min(), 1u);
  EXPECT_EQ(a.max(), 10000u);
  EXPECT_EQ(a.sum(), 55u + 55000u);

  ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  EXPECT_EQ(Get("a").count(), 20u);
  Merge("a", Encoded({5}));  // on top of a flushed value
  EXPECT_EQ(Get("a").count(), 21u);
  EXPECT_EQ(Get("a").BucketCount(5), 2u);

  ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  ASSERT_TRUE(db_->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());
  a = Get("a");
  EXPECT_EQ(a.count(), 21u);
  EXPECT_EQ(a.sum(), 55u + 55000u + 5u);
  EXPECT_EQ(Get("b"), HistogramOf({42}));

  Merge("a", Encoded({10000}));  // left in the WAL across the reopen
  db_.reset();
  Open();
  a = Get("a");
  EXPECT_EQ(a.count(), 22u);
  EXPECT_EQ(a.BucketCount(BucketIndex(10000)), 2u);
  EXPECT_EQ(Get("b").count(), 1u);
}

TEST_F(MergeDbTest, OperandsPastTheBoundSaturateAcrossFlushCompactionAndReopen) {
  Open();
  const uint64_t near = kMaxTotalCount - 1000;  // each operand valid alone
  Merge("big", Many({100}, near));
  Merge("small", Encoded({5}));
  ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  Merge("big", Many({200}, near));  // 2 * near passes 2^62
  Merge("small", Encoded({6}));
  Histogram big = Get("big");  // merged on read
  EXPECT_EQ(big.count(), kMaxTotalCount);
  EXPECT_EQ(big.BucketCount(100), kMaxTotalCount / 2);
  EXPECT_EQ(big.BucketCount(BucketIndex(200)), kMaxTotalCount / 2);
  // Flushed as operands, then compacted: the merge runs inside a compaction.
  ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  for (int i = 0; i < 5; ++i) Merge("big", Many({300}, near));
  ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  ASSERT_TRUE(db_->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());
  EXPECT_EQ(BackgroundErrors(), 0u);
  big = Get("big");
  EXPECT_EQ(big.count(), kMaxTotalCount);
  EXPECT_EQ(big.min(), 100u);
  EXPECT_EQ(big.max(), 300u);
  EXPECT_GT(counters_->saturated.load(), 0u);
  // Writes go on, to that key and to others.
  Merge("big", Encoded({1}));
  Merge("small", Encoded({7}));
  ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  ASSERT_TRUE(db_->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());
  EXPECT_EQ(BackgroundErrors(), 0u);
  db_.reset();
  Open();
  big = Get("big");
  EXPECT_EQ(big.count(), kMaxTotalCount);
  EXPECT_EQ(big.min(), 1u);
  EXPECT_EQ(Get("small"), HistogramOf({5, 6, 7}));
  EXPECT_EQ(BackgroundErrors(), 0u);
}

TEST_F(MergeDbTest, UndecodableOperandFailsTheRead) {
  Open();
  Merge("alone", "not a histogram");  // a key written once, through the merge operator
  std::string alone;
  EXPECT_TRUE(db_->Get(rocksdb::ReadOptions(), "alone", &alone).IsCorruption());
  Merge("a", Encoded({1}));
  Merge("a", "not a histogram");
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), "a", &value);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  // Other keys are unaffected.
  Merge("b", Encoded({2}));
  EXPECT_EQ(Get("b").count(), 1u);
}

}  // namespace
}  // namespace trailmap::aggregator
