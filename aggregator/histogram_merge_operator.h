// HistogramMergeOperator: the RocksDB merge operator of the `hist` column family.
//
// Every value and every operand is a core/histogram.h encoding; merging adds the histograms, so
// the result of any order and grouping of merges is the same histogram (count, sum, min, max and
// every bucket). An existing value or operand that does not decode makes the merge fail: RocksDB
// then reports Corruption for that key (and stops background work if it happens in a compaction)
// rather than dropping counts. Operands are validated at ingest (core/batch.h DecodeBatch), so a
// failure here means the data on disk is damaged, and it must be seen, not hidden.
//
// No exception crosses into RocksDB: every callback catches everything and fails the merge.
// Stateless, so one instance may serve any number of column families and threads.
#pragma once

#include <rocksdb/merge_operator.h>

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trailmap::aggregator {

// The merge as a pure function: decodes `existing` (if non-null) and every operand, adds them, and
// writes the encoding of the sum to *out (replacing its contents). On error *out is unspecified.
Status MergeHistogramEncodings(const std::string_view* existing,
                               const std::vector<std::string_view>& operands, std::string* out);

class HistogramMergeOperator : public rocksdb::MergeOperator {
 public:
  static constexpr const char* kName = "trailmap.histogram";

  const char* Name() const override { return kName; }
  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override;
  bool PartialMerge(const rocksdb::Slice& key, const rocksdb::Slice& left,
                    const rocksdb::Slice& right, std::string* new_value,
                    rocksdb::Logger* logger) const override;
  bool PartialMergeMulti(const rocksdb::Slice& key, const std::deque<rocksdb::Slice>& operands,
                         std::string* new_value, rocksdb::Logger* logger) const override;
};

}  // namespace trailmap::aggregator
