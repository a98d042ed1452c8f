// HistogramMergeOperator: the RocksDB merge operator of the `hist` column family.
//
// Every value and every operand is a core/histogram.h encoding; merging adds the histograms, so
// the result of any order and grouping of merges is the same histogram (count, sum, min, max and
// every bucket) — until a total passes kMaxTotalCount (core/counts.h): then the sum saturates
// (core/histogram.h: scaled to exactly 2^62 events, proportions, min and max kept), the merge
// succeeds and says so (*saturated; the operator counts it). Valid operands never fail the merge,
// so no key can be poisoned by counts. An existing value or operand that does not decode makes
// the merge fail: RocksDB
// then reports Corruption for that key (and stops background work if it happens in a compaction)
// rather than dropping counts. Operands are validated at ingest (core/batch.h DecodeBatch), so a
// failure here means the data on disk is damaged, and it must be seen, not hidden.
//
// The RocksDB callbacks (no exception crosses into RocksDB; stateless) are
// aggregator/store/encoding_merge_operator.h's, around MergeHistogramEncodings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "aggregator/store/encoding_merge_operator.h"
#include "core/histogram.h"
#include "core/status.h"

namespace trailmap::aggregator {

// The merge as a pure function: decodes `existing` (if non-null) and every operand, adds them, and
// writes the encoding of the sum to *out (replacing its contents); *saturated is set when the sum
// was cut at kMaxTotalCount. On error *out is unspecified.
Status MergeHistogramEncodings(const std::string_view* existing,
                               const std::vector<std::string_view>& operands, std::string* out,
                               bool* saturated);

class HistogramMergeOperator : public EncodingMergeOperator {
 public:
  static constexpr const char* kName = "trailmap.histogram";
  explicit HistogramMergeOperator(std::shared_ptr<MergeCounters> counters = nullptr)
      : EncodingMergeOperator(kName, &MergeHistogramEncodings, &Histogram::Validate,
                              std::move(counters)) {}
};

}  // namespace trailmap::aggregator
