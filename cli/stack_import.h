// Reading stack files for `trailmap import --stacks`: perf script text folded one second of
// sample time at a time, and FlameGraph's folded "stack count" lines. Pure functions of text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "stacks/stack_collapse.h"

namespace trailmap {

// The timestamp of a perf script sample header ("comm 123 [000] 4512.337164: 1 cpu-clock:"):
// the first blank-separated token of the form DIGITS.DIGITS: ; nullopt when there is none.
std::optional<double> PerfSampleTime(std::string_view line);

// perf script text folded as stacks/stack_collapse folds it, but a second of sample time at a
// time: `seconds` holds (offset from the first sample's second, that second's stacks) in the
// order met. Without timestamps everything is at offset 0 and `timed` is false. A last record
// without its blank line is counted (unlike stackcollapse-perf.pl, which drops it).
struct TimedStacks {
  std::vector<std::pair<int64_t, FoldedStacks>> seconds;
  CollapseStats stats;  // lines, records, malformed lines, other-event records, the event kept
  bool timed = false;
};
TimedStacks CollapsePerfScriptBySecond(std::string_view text);

// Folded lines, "frame;frame;... COUNT" (the count after the last blank, a whole number up to
// kMaxItemCount = 2^40); blank lines skipped, zero counts dropped. InvalidArgument naming the
// first line that is not one.
Result<FoldedStacks> ParseFoldedStackLines(std::string_view text);

// "a;b;c" -> {"a", "b", "c"} (an empty frame stays an empty string).
std::vector<std::string> SplitFoldedFrames(std::string_view stack);

}  // namespace trailmap
