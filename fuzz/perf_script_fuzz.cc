// A perf script window (stacks/stack_collapse.h, as agent/perf_source.cc reads it): the first
// byte picks the CollapseOptions and where to cut the text in two. Properties:
//   - feeding the text in two pieces gives the same stacks and stats as feeding it whole;
//   - the stacks are sorted and distinct, each counts at least 1, and their counts add up to
//     the records' periods (or saturate at kMaxTotalCount, core/counts.h);
//   - per-record mode (SetRecordSink, the agent's path) sees the same records and periods.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/counts.h"
#include "fuzz/fuzz_check.h"
#include "stacks/stack_collapse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  trailmap::CollapseOptions options;
  options.include_pid = flags & 1;
  options.include_tid = flags & 2;
  options.annotate_kernel = flags & 4;
  options.annotate_jit = flags & 8;
  options.include_addrs = flags & 16;
  options.count_samples = flags & 32;

  trailmap::CollapseStats whole_stats;
  const trailmap::FoldedStacks whole = trailmap::CollapsePerfScript(text, options, &whole_stats);

  const size_t cut = text.empty() ? 0 : (size_t{flags} * 131) % (text.size() + 1);
  trailmap::StackCollapser pieces(options);
  pieces.Add(text.substr(0, cut));
  pieces.Add(text.substr(cut));
  const trailmap::FoldedStacks split = pieces.Finish();
  FUZZ_CHECK(split == whole, "cutting the text at %zu changed the stacks", cut);
  FUZZ_CHECK(pieces.stats().records == whole_stats.records &&
             pieces.stats().lines == whole_stats.lines &&
             pieces.stats().malformed_lines == whole_stats.malformed_lines &&
             pieces.stats().event == whole_stats.event);

  unsigned __int128 total = 0;
  bool saturated = false;
  for (size_t i = 0; i < whole.size(); ++i) {
    saturated |= whole[i].count == trailmap::kMaxTotalCount;  // core/counts.h
    FUZZ_CHECK(whole[i].count >= 1);
    FUZZ_CHECK(i == 0 || whole[i - 1].stack < whole[i].stack, "stacks not sorted and distinct");
    total += whole[i].count;
  }

  trailmap::StackCollapser per_record(options);
  uint64_t records = 0;
  unsigned __int128 periods = 0;
  per_record.SetRecordSink([&](const trailmap::CollapsedRecord& r) {
    ++records;
    periods += options.count_samples ? 1 : r.period;
    FUZZ_CHECK(r.frames != nullptr && r.period >= 1);
  });
  per_record.Add(text);
  FUZZ_CHECK(per_record.Finish().empty());
  FUZZ_CHECK(records == whole_stats.records, "per-record mode saw %llu records, not %llu",
             static_cast<unsigned long long>(records),
             static_cast<unsigned long long>(whole_stats.records));
  FUZZ_CHECK(saturated || periods == total,
             "the stacks' counts do not add up to the records' periods");
  return 0;
}
