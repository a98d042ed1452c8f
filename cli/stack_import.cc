#include "cli/stack_import.h"

#include <cstdlib>

#include "core/counts.h"
#include "core/folded.h"

namespace trailmap {

std::optional<double> PerfSampleTime(std::string_view line) {
  size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
    size_t end = pos;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    const std::string_view token = line.substr(pos, end - pos);
    if (token.size() >= 4 && token.back() == ':') {
      const std::string_view number = token.substr(0, token.size() - 1);
      const size_t dot = number.find('.');
      const bool digits = dot != std::string_view::npos && dot > 0 && dot + 1 < number.size() &&
                          number.find_first_not_of("0123456789.") == std::string_view::npos &&
                          number.find('.', dot + 1) == std::string_view::npos;
      if (digits) return std::strtod(std::string(number).c_str(), nullptr);
    }
    pos = end;
  }
  return std::nullopt;
}

TimedStacks CollapsePerfScriptBySecond(std::string_view text) {
  TimedStacks out;
  CollapseOptions options;
  options.count_samples = true;  // samples, as the agent's perf source counts them
  StackCollapser collapser(options);
  std::optional<int64_t> first;
  int64_t current = 0;
  bool any = false;
  const auto flush = [&out, &collapser, &current, &any] {
    if (!any) return;
    FoldedStacks stacks = collapser.Finish();  // the collapser's stats and event carry on
    if (!stacks.empty()) out.seconds.emplace_back(current, std::move(stacks));
    any = false;
  };
  size_t start = 0;
  bool in_record = false;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const bool blank = line.empty();
    if (!in_record && !blank && line[0] != '#' && line[0] != ' ' && line[0] != '\t') {
      // A sample header: a new second starts a new fold.
      if (std::optional<double> t = PerfSampleTime(line)) {
        const auto second = static_cast<int64_t>(*t);
        if (!first) first = second;
        out.timed = true;
        if (second - *first != current) {
          flush();
          current = second - *first;
        }
      }
      in_record = true;
    }
    if (blank) in_record = false;
    collapser.Add(line);
    collapser.Add("\n");
    any = true;
  }
  collapser.Add("\n");  // a last record without its blank line still counts here
  flush();
  out.stats = collapser.stats();
  return out;
}

Result<FoldedStacks> ParseFoldedStackLines(std::string_view text) {
  FoldedStacks out;
  Status status;
  ForEachFoldedTextLine(text, [&](std::string_view text_line, uint64_t number) {
    if (!status.ok()) return;
    const FoldedLine line = SplitFoldedLine(text_line);
    if (line.blank()) return;
    uint64_t count = 0;
    if (line.stack.empty() || !ParseFoldedWholeCount(line.count, &count)) {
      status = Status::InvalidArgument("line " + std::to_string(number) +
                                       ": expected \"frame;frame;... COUNT\" (a whole count "
                                       "after the last space)");
    } else if (count > kMaxItemCount) {
      status = Status::InvalidArgument("line " + std::to_string(number) + ": count " +
                                       std::to_string(count) +
                                       " is more than one line may carry (2^40)");
    } else if (count > 0) {
      out.push_back({std::string(line.stack), count});
    }
  });
  if (!status.ok()) return status;
  return out;
}

std::vector<std::string> SplitFoldedFrames(std::string_view stack) {
  std::vector<std::string> frames;
  size_t start = 0;
  while (start <= stack.size()) {
    size_t semi = stack.find(';', start);
    if (semi == std::string_view::npos) semi = stack.size();
    frames.emplace_back(stack.substr(start, semi - start));
    start = semi + 1;
  }
  return frames;
}

}  // namespace trailmap
