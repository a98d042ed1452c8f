// SubsecondView: FlameScope's sub-second offset heat map of CPU samples. One column per second,
// `rows` rows (50: 20 ms each) of offsets within that second, each cell the number of samples
// taken in it; a time range selected on it gives that range's flame graph.
//
// As FlameScope (app/util/heatmap.py) builds it: the first column is the second of the earliest
// sample (floor of its time); a sample at time t goes to column floor(t) - floor(start) and row
// floor(rows × (t - floor(t))), row 0 holding offsets [0, 1000 / rows) ms. FlameScope draws
// row 0 at the bottom (offsets grow upwards, then the next column) and shades cells linearly
// from white (0) through #FF5032 (half the largest count) to #E50914 (the largest), the
// renderers here too (query/render/subsecond.h). Idle samples (process "swapper" with an idle
// function in its stack, FlameScope's idle_regexp) are left out and counted, unless asked for.
//
// Where the samples come from: a perf script file (`trailmap subsecond FILE`). The fleet's perf
// sources do not keep sub-second offsets yet; the plan (not built) is that the agent's perf
// source, which already reads each sample's time (core/stack_collapse.h's record sink), also
// records the offset within its second as a histogram metric (cpu.offsets, ns, kept as long as
// any histogram: the log-linear buckets near 1 s are 8 ms wide, finer than a 20 ms row), so the
// fleet's map is a heat map of that metric at no new storage; its ranges' flame graphs would be
// whole seconds, since stacks are counted per second.
//
// Pure: samples in, view out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/stack_collapse.h"
#include "core/status.h"

namespace trailmap {

// One CPU sample: its time and its folded stack (the process name first, as stackcollapse-perf).
struct TimedSample {
  int64_t time_ns = 0;
  std::string stack;
};

// The samples of perf script text (core/stack_collapse rules), in the text's order. Samples
// without a time column are counted in `untimed` and left out; idle ones (see above) in `idle`
// unless include_idle.
struct PerfSamples {
  std::vector<TimedSample> samples;
  uint64_t untimed = 0;
  uint64_t idle = 0;
  CollapseStats stats;
};
PerfSamples ReadPerfSamples(std::string_view perf_script, bool include_idle = false);

struct SubsecondView {
  int64_t start_second = 0;  // unix (or perf clock) second of column 0
  int rows = 50;
  std::vector<std::vector<uint64_t>> counts;  // [column][row], row 0 = offsets [0, 1000/rows) ms
  uint64_t max_count = 0;
  uint64_t samples = 0;
  uint64_t idle = 0;     // left out as idle
  uint64_t untimed = 0;  // left out for lacking a time
  int columns() const { return static_cast<int>(counts.size()); }
};

// rows from 1 to 1000; at most kMaxSubsecondColumns seconds (a longer span is refused, naming
// it: FlameScope's view is for minutes of samples, not days).
inline constexpr int kMaxSubsecondColumns = 36'000;
Result<SubsecondView> BuildSubsecondView(const PerfSamples& samples, int rows = 50);

// A range "A..B" of seconds relative to the view's start (FlameScope's selection: "12.340..13.020"
// is from 340 ms into column 12 to 20 ms into column 13), parsed; B > A >= 0.
struct SubsecondRange {
  double from = 0;
  double to = 0;
};
Result<SubsecondRange> ParseSubsecondRange(std::string_view text);

// The folded stacks of the samples in [start + from, start + to), sorted, counted as samples.
FoldedStacks FoldSubsecondRange(const PerfSamples& samples, int64_t start_second,
                                const SubsecondRange& range);

}  // namespace trailmap
