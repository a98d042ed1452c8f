#include "core/folded.h"

#include <charconv>
#include <string>
#include <system_error>

namespace trailmap {

std::string FormatFolded(const FoldedStacks& stacks) {
  std::string out;
  for (const FoldedStack& s : stacks) {
    out += s.stack;
    out += ' ';
    out += std::to_string(s.count);
    out += '\n';
  }
  return out;
}

FoldedLine SplitFoldedLine(std::string_view line) {
  while (!line.empty() && IsFoldedBlank(line.back())) line.remove_suffix(1);
  while (!line.empty() && IsFoldedBlank(line.front())) line.remove_prefix(1);
  size_t sep = line.size();
  while (sep > 0 && !IsFoldedBlank(line[sep - 1])) --sep;
  FoldedLine out;
  out.count = line.substr(sep);
  std::string_view stack = line.substr(0, sep);
  while (!stack.empty() && IsFoldedBlank(stack.back())) stack.remove_suffix(1);
  out.stack = stack;
  return out;
}

bool ParseFoldedWholeCount(std::string_view count, uint64_t* out) {
  if (count.empty() || count.size() > 19) return false;
  uint64_t v = 0;
  for (char c : count) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

bool ParseFoldedCount(std::string_view count, double* out) {
  if (count.empty() || count[0] < '0' || count[0] > '9') return false;
  size_t i = 0;
  while (i < count.size() && count[i] >= '0' && count[i] <= '9') ++i;
  if (i < count.size() && count[i] == '.') {
    ++i;
    while (i < count.size() && count[i] >= '0' && count[i] <= '9') ++i;
  }
  if (i != count.size()) return false;
  const auto [ptr, ec] = std::from_chars(count.data(), count.data() + count.size(), *out);
  return ec == std::errc();
}

}  // namespace trailmap
