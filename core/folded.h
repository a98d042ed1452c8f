// FlameGraph's folded format, line by line: what every reader of it shares. The agent's folded
// source (agent/folded_source), `trailmap import --stacks` (cli/stack_import) and
// `trailmap flame --folded` (query/views/flame) each add their own rules on top: the agent its
// "@UNIX_SECONDS" prefix, "#fields" lines and whole counts from 1 to 2^40; import whole counts up
// to 2^40, zero dropped; flame graphs flamegraph.pl's fractional counts.
//
//   line   := [BLANKS] STACK BLANKS COUNT [BLANKS]
//   STACK  := FRAME { ';' FRAME }     root first; a frame may hold spaces, never ';' or '\n'
//   COUNT  := the text after the LAST run of blanks
//   BLANKS := spaces, tabs or '\r'
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trailmap {

// One folded stack: frames root first, joined by ';', and its sample count (sum of periods).
struct FoldedStack {
  std::string stack;
  uint64_t count = 0;
  bool operator==(const FoldedStack&) const = default;
};
using FoldedStacks = std::vector<FoldedStack>;

// "stack count\n" per entry, in the order given.
std::string FormatFolded(const FoldedStacks& stacks);

inline bool IsFoldedBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// One line cut into its parts, blanks cut at both ends of each.
struct FoldedLine {
  std::string_view stack;  // "" when the line holds no blank before its last word
  std::string_view count;  // the last word; "" only for a blank line
  bool blank() const { return count.empty(); }
};

// Splits one line (without its '\n').
FoldedLine SplitFoldedLine(std::string_view line);

// COUNT as a whole number: digits only (at most 19, so it fits). Zero and values past
// kMaxItemCount (core/counts.h) are returned as they are: each reader says what it accepts.
bool ParseFoldedWholeCount(std::string_view count, uint64_t* out);

// COUNT as flamegraph.pl reads it (\d+(\.\d*)?): "12", "2.5", "3.".
bool ParseFoldedCount(std::string_view count, double* out);

// Calls fn(line, number) for each line of `text` (split at '\n'; the last may lack one; numbers
// from 1), in order.
template <typename Fn>
void ForEachFoldedTextLine(std::string_view text, Fn&& fn) {
  uint64_t number = 0;
  while (!text.empty()) {
    const size_t n = text.find('\n');
    const std::string_view line = text.substr(0, n);
    text.remove_prefix(n == std::string_view::npos ? text.size() : n + 1);
    fn(line, ++number);
  }
}

}  // namespace trailmap
