// EncodingMergeOperator: the RocksDB side shared by trailmap's merge operators. Each one is a
// pure merge function over encoded values (MergeHistogramEncodings, MergeStackCountEncodings)
// and a name; this class turns it into FullMergeV2 / PartialMerge / PartialMergeMulti.
//
// A function that fails (an existing value or operand does not decode, a sum overflows) fails
// the merge, logged to RocksDB's info log with the operator's name: RocksDB then reports
// Corruption for the key instead of dropping counts. No exception crosses into RocksDB: every
// callback catches everything and fails the merge. Stateless; one instance serves any number of
// column families and threads.
#pragma once

#include <rocksdb/merge_operator.h>

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trailmap::aggregator {

class EncodingMergeOperator : public rocksdb::MergeOperator {
 public:
  // Writes the merge of `existing` (if non-null) and `operands` to *out; on error *out is
  // unspecified.
  using MergeFn = Status (*)(const std::string_view* existing,
                             const std::vector<std::string_view>& operands, std::string* out);

  EncodingMergeOperator(const char* name, MergeFn merge) : name_(name), merge_(merge) {}

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
};

}  // namespace trailmap::aggregator
