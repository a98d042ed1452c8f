// EncodingMergeOperator: the RocksDB side shared by trailmap's merge operators. Each one is a
// pure merge function over encoded values (MergeHistogramEncodings, MergeStackCountEncodings)
// and a name; this class turns it into FullMergeV2 / PartialMerge / PartialMergeMulti.
//
// A function that fails (an existing value or operand does not decode) fails the merge, logged
// to RocksDB's info log with the operator's name: RocksDB then reports Corruption for the key
// instead of dropping counts. Valid operands never fail: a count that would pass kMaxTotalCount
// (core/counts.h) saturates; each such merge is counted in MergeCounters::saturated and logged
// (warning) to the info log. No exception crosses into RocksDB: every callback catches everything
// and fails the merge. Stateless but for the counters (atomic); one instance serves any number of
// column families and threads.
#pragma once

#include <rocksdb/merge_operator.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trailmap::aggregator {

// What the merge operators of one store did, shared by them and read by the store.
struct MergeCounters {
  std::atomic<uint64_t> saturated{0};  // merges that cut a count at kMaxTotalCount
};

class EncodingMergeOperator : public rocksdb::MergeOperator {
 public:
  // Writes the merge of `existing` (if non-null) and `operands` to *out and sets *saturated (it
  // is false on entry) when a count was cut at kMaxTotalCount; on error *out is unspecified.
  using MergeFn = Status (*)(const std::string_view* existing,
                             const std::vector<std::string_view>& operands, std::string* out,
                             bool* saturated);

  // Ok when one encoding decodes: then it is its own merge (a key written once, as most are).
  using ValidateFn = Status (*)(std::string_view value);

  // `counters` (may be null: not counted) are shared with whoever reads them.
  EncodingMergeOperator(const char* name, MergeFn merge, ValidateFn validate,
                        std::shared_ptr<MergeCounters> counters)
      : name_(name), merge_(merge), validate_(validate), counters_(std::move(counters)) {}

  const char* Name() const override { return name_; }
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override;
  bool PartialMerge(const rocksdb::Slice& key, const rocksdb::Slice& left,
                    const rocksdb::Slice& right, std::string* new_value,
                    rocksdb::Logger* logger) const override;
  bool PartialMergeMulti(const rocksdb::Slice& key, const std::deque<rocksdb::Slice>& operands,
                         std::string* new_value, rocksdb::Logger* logger) const override;

 private:
  template <typename Operands>
  bool MergeOrFail(const rocksdb::Slice* existing, const Operands& operands, std::string* out,
                   rocksdb::Logger* logger) const;

  const char* const name_;
  const MergeFn merge_;
  const ValidateFn validate_;
  const std::shared_ptr<MergeCounters> counters_;
};

}  // namespace trailmap::aggregator
