#include "aggregator/store/stack_merge_operator.h"

#include <algorithm>

#include "core/counts.h"
#include "core/varint.h"

namespace trailmap::aggregator {

std::string EncodeStackCounts(const StackCounts& counts) {
  std::string out;
  out.reserve(counts.size() * 3);
  uint32_t previous = 0;
  for (const auto& [id, count] : counts) {
    PutVarint(&out, id - previous);
    PutVarint(&out, count);
    previous = id;
  }
  return out;
}

std::string EncodeUnsortedStackCounts(StackCounts counts) {
  std::sort(counts.begin(), counts.end());
  StackCounts merged;
  merged.reserve(counts.size());
  for (const auto& [id, count] : counts) {
    if (count == 0) continue;
    if (!merged.empty() && merged.back().first == id) {
      merged.back().second += count;
    } else {
      merged.emplace_back(id, count);
    }
  }
  return EncodeStackCounts(merged);
}

Status ValidateStackCounts(std::string_view value) {
  return ForEachStackCount(value, [](uint32_t, uint64_t) {});
}

Result<StackCounts> DecodeStackCounts(std::string_view value) {
  StackCounts out;
  Status s = ForEachStackCount(
      value, [&out](uint32_t id, uint64_t count) { out.emplace_back(id, count); });
  if (!s.ok()) return s;
  return out;
}

Status MergeStackCountEncodings(const std::string_view* existing,
                                const std::vector<std::string_view>& operands, std::string* out,
                                bool* saturated) {
  if ((existing != nullptr) + operands.size() == 1) {  // one value: already in canonical form
    const std::string_view only = existing ? *existing : operands[0];
    if (Status s = ValidateStackCounts(only); !s.ok()) {
      return Status::Corruption((existing ? std::string("existing value: ") : "operand 0: ") +
                                s.message());
    }
    out->assign(only);
    return Status::Ok();
  }
  StackCounts all;
  auto add = [&all](uint32_t id, uint64_t count) { all.emplace_back(id, count); };
  if (existing) {
    if (Status s = ForEachStackCount(*existing, add); !s.ok()) {
      return Status::Corruption("existing value: " + s.message());
    }
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (Status s = ForEachStackCount(operands[i], add); !s.ok()) {
      return Status::Corruption("operand " + std::to_string(i) + ": " + s.message());
    }
  }
  std::sort(all.begin(), all.end());
  StackCounts merged;
  merged.reserve(all.size());
  for (const auto& [id, count] : all) {
    if (merged.empty() || merged.back().first != id) merged.emplace_back(id, 0);
    merged.back().second = SaturatingCountAdd(merged.back().second, count, saturated);
  }
  *out = EncodeStackCounts(merged);
  return Status::Ok();
}

}  // namespace trailmap::aggregator
