#include "aggregator/stack_merge_operator.h"

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

Status ForEachStackCount(std::string_view value,
                         const std::function<void(uint32_t, uint64_t)>& visit) {
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
  if ((existing != nullptr) + operands.size() == 1) {  // one value: already in canonical form
    out->assign(existing ? *existing : operands[0]);
    return Status::Ok();
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
