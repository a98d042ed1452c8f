// StackMergeOperator: the RocksDB merge operator of the `stacks` and `stacks_60s` column
// families, and the encoding of their values.
//
// A value is one (second or minute, host, series)'s stack samples: (global stack id, count)
// pairs in increasing id order (ids from the catalog, aggregator/store/catalog.h):
//
//   value := entry { entry }            at least one entry
//   entry := id_delta:varint count:varint
//   id_delta = id - previous id (the first entry's previous id is 0), so every delta is >= 1;
//   count >= 1.
//   Example: {(3, 5), (10, 1)} encodes as 03 05 07 01.
//
// Merging adds the counts of equal ids, so any order and grouping of merges gives the same
// value — until a count passes kMaxTotalCount (core/counts.h): then that count saturates at
// 2^62 (each stack on its own; the others keep theirs) and the merge succeeds and says so
// (*saturated; the operator counts it). Valid operands never fail the merge. An existing value or
// operand that does not decode makes the merge fail, and RocksDB reports Corruption for that key,
// rather than losing counts.
// The RocksDB callbacks (no exception crosses into RocksDB; stateless) are
// aggregator/store/encoding_merge_operator.h's, around MergeStackCountEncodings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "aggregator/store/encoding_merge_operator.h"
#include "core/status.h"
#include "core/varint.h"

namespace trailmap::aggregator {

using StackCounts = std::vector<std::pair<uint32_t, uint64_t>>;  // (stack id, count)

// `counts` sorted by id, ids distinct, counts >= 1 (what DecodeStackCounts returns).
std::string EncodeStackCounts(const StackCounts& counts);
// Sorts `counts` by id and adds up equal ids, then encodes; zero counts are left out. "" when
// nothing is left.
std::string EncodeUnsortedStackCounts(StackCounts counts);
// Calls visit(id, count) for each entry of `value` in order; Corruption naming the entry when
// the value does not decode (the entries before it have been visited). A template, so a scan's
// visit is inlined: it runs for every stack of every key a stack query reads.
template <typename Visit>
Status ForEachStackCount(std::string_view value, Visit&& visit);
// Ok when `value` decodes (ForEachStackCount with nothing to visit).
Status ValidateStackCounts(std::string_view value);
Result<StackCounts> DecodeStackCounts(std::string_view value);

// The merge as a pure function (see the header); *saturated is set when a count was cut at
// kMaxTotalCount. On error *out is unspecified.
Status MergeStackCountEncodings(const std::string_view* existing,
                                const std::vector<std::string_view>& operands, std::string* out,
                                bool* saturated);

class StackMergeOperator : public EncodingMergeOperator {
 public:
  static constexpr const char* kName = "trailmap.stacks";
  explicit StackMergeOperator(std::shared_ptr<MergeCounters> counters = nullptr)
      : EncodingMergeOperator(kName, &MergeStackCountEncodings, &ValidateStackCounts,
                              std::move(counters)) {}
};

template <typename Visit>
Status ForEachStackCount(std::string_view value, Visit&& visit) {
  if (value.empty()) return Status::Corruption("stack counts: empty value");
  size_t pos = 0;
  uint64_t id = 0;
  for (size_t entry = 0; pos < value.size(); ++entry) {
    uint64_t delta = 0, count = 0;
    if (!GetVarint64(value, &pos, &delta) || !GetVarint64(value, &pos, &count)) {
      return Status::Corruption("stack counts: entry " + std::to_string(entry) + " is cut short");
    }
    if (delta == 0) {
      return Status::Corruption("stack counts: entry " + std::to_string(entry) +
                                " repeats or goes back to an id");
    }
    // Checked before adding: a delta near 2^64 would wrap id back below the previous one
    // (found by fuzz/stacks_fuzz).
    if (delta > UINT32_MAX - id) {
      return Status::Corruption("stack counts: entry " + std::to_string(entry) + " id past 2^32");
    }
    id += delta;
    if (count == 0)
      return Status::Corruption("stack counts: entry " + std::to_string(entry) + " has count 0");
    visit(static_cast<uint32_t>(id), count);
  }
  return Status::Ok();
}

}  // namespace trailmap::aggregator
