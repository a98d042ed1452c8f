// The stacks value encoding (aggregator/store/stack_merge_operator.h): the input is cut into an
// existing value and two operands at points its first two bytes pick. Properties:
//   - DecodeStackCounts and ForEachStackCount agree, and a value that decodes re-encodes to the
//     same bytes (the encoding is canonical);
//   - MergeStackCountEncodings adds counts id by id, whatever the order of the operands, and its
//     result decodes; it fails only when an input does not decode or a sum passes
//     kMaxTotalCount.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "aggregator/store/stack_merge_operator.h"
#include "core/counts.h"
#include "fuzz/fuzz_check.h"

namespace {

using trailmap::aggregator::StackCounts;

bool Decode(std::string_view value, StackCounts* out) {
  trailmap::Result<StackCounts> counts = trailmap::aggregator::DecodeStackCounts(value);
  StackCounts visited;
  const trailmap::Status s = trailmap::aggregator::ForEachStackCount(
      value, [&](uint32_t id, uint64_t count) { visited.emplace_back(id, count); });
  FUZZ_CHECK(s.ok() == counts.ok());
  if (!counts.ok()) return false;
  FUZZ_CHECK(visited == *counts);
  FUZZ_CHECK(trailmap::aggregator::EncodeStackCounts(*counts) == value, "not canonical");
  *out = std::move(*counts);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);
  const size_t cut1 = data[0] % (rest.size() + 1);
  const size_t cut2 = cut1 + data[1] % (rest.size() - cut1 + 1);
  // An empty part stands for "no existing value" or "no such operand".
  const std::string_view existing = rest.substr(0, cut1);
  std::vector<std::string_view> operands;
  for (std::string_view op : {rest.substr(cut1, cut2 - cut1), rest.substr(cut2)}) {
    if (!op.empty()) operands.push_back(op);
  }
  if (operands.empty()) {
    StackCounts counts;
    Decode(existing, &counts);
    return 0;
  }
  std::vector<StackCounts> parts(operands.size() + 1);
  bool ok = existing.empty() || Decode(existing, &parts[0]);
  for (size_t i = 0; i < operands.size(); ++i) ok &= Decode(operands[i], &parts[i + 1]);
  const std::string_view* existing_ptr = existing.empty() ? nullptr : &existing;
  std::string merged;
  bool saturated = false;
  const trailmap::Status s =
      trailmap::aggregator::MergeStackCountEncodings(existing_ptr, operands, &merged, &saturated);
  if (!ok) {
    FUZZ_CHECK(!s.ok(), "merged a value that does not decode");
    return 0;
  }
  std::map<uint32_t, unsigned __int128> sums;
  for (const StackCounts& p : parts) {
    for (const auto& [id, count] : p) sums[id] += count;
  }
  // Past kMaxTotalCount (core/counts.h) a merge may refuse or saturate, and what it gives must
  // still decode; below it, it adds exactly.
  bool past_bound = false;
  for (const auto& [id, sum] : sums) past_bound |= sum > trailmap::kMaxTotalCount;
  StackCounts result;
  if (past_bound) {
    FUZZ_CHECK(!s.ok() || Decode(merged, &result), "a saturated merge does not decode");
    return 0;
  }
  FUZZ_CHECK(s.ok(), "merge failed below the count bound: %s", s.ToString().c_str());
  FUZZ_CHECK(!saturated, "a merge below the count bound says it saturated");
  FUZZ_CHECK(Decode(merged, &result), "the merge does not decode");
  StackCounts expected;
  for (const auto& [id, sum] : sums) expected.emplace_back(id, static_cast<uint64_t>(sum));
  FUZZ_CHECK(result == expected, "the merge lost or invented counts");
  // The same inputs in reverse order, the existing value as the last operand.
  std::vector<std::string_view> reversed(operands.rbegin(), operands.rend());
  if (!existing.empty()) reversed.push_back(existing);
  const std::string_view first = reversed.front();
  reversed.erase(reversed.begin());
  std::string other;
  FUZZ_CHECK(
      trailmap::aggregator::MergeStackCountEncodings(&first, reversed, &other, &saturated).ok());
  FUZZ_CHECK(other == merged, "the merge depends on the order of operands");
  return 0;
}
