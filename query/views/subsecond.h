// SubsecondView: FlameScope's sub-second offset heat map of CPU samples. One column per second,
// `rows` rows (50: 20 ms each) of offsets within that second, each cell the number of samples
// taken in it; a time range selected on it gives that range's flame graph.
//
// As FlameScope (app/perf/heatmap.py, app/controllers/heatmap.py) builds it: the grid spans
// every timed sample, idle ones included: from `start`, the earliest sample's time, to `end`, the
// last one's, in ceil(end) - floor(start) columns, so a profile that starts or ends idle keeps
// those seconds as empty columns. A sample at time t goes to column floor(t) - floor(start) and
// row floor(rows × (t - floor(t))), row 0 holding offsets [0, 1000 / rows) ms. Where FlameScope
// would fail (a drawn sample exactly on the whole second `end`, whose column ceil(end) leaves
// out) the column is kept; FlameScope's `end` is the last sample in file order, here the latest
// (the same for perf script, which prints samples in time order). FlameScope draws
// row 0 at the bottom (offsets grow upwards, then the next column) and shades cells linearly
// from white (0) through #FF5032 (half the largest count) to #E50914 (the largest), the
// renderers here too (query/render/subsecond.h). Idle samples (process "swapper" with an idle
// function in its stack, FlameScope's idle_regexp) are left out and counted, unless asked for.
//
// Where the samples come from: a perf script file (`trailmap subsecond FILE`), or the fleet.
// The agent's perf source records each timed sample's offset within its second as the histogram
// metric cpu.offsets (ns, latency kind, one series per host: agent/perf_source.h), so the
// fleet's map is a heat map of that metric with one column per second and `rows` linear rows
// over [0, 1 s) (SubsecondFromGrid). Offsets are not stored one by one: a host-second is one
// histogram, stored, rolled up and kept as long as any histogram (the aggregator's retention),
// so the map reaches back as far as the stacks do, at no new storage kind. The cost is
// precision: a histogram bucket is 1/64 of its power of two, 8.4 ms wide from 537 ms up, and a
// bucket across a row boundary is split between the rows by its overlap (as the heat map does),
// so a cell's edge is blurred by at most one bucket (≤ 0.42 of a 20 ms row, ≤ 1 ms below
// 134 ms). A fleet range's flame graph is of whole seconds, since stacks are counted per
// second: "12.340..13.020" gives the stacks of seconds 12 and 13.
//
// Pure: samples (or a fetched grid) in, view out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "query/fetch/partials.h"
#include "stacks/stack_collapse.h"

namespace trailmap {

// One CPU sample: its time and its folded stack (the process name first, as stackcollapse-perf).
struct TimedSample {
  int64_t time_ns = 0;
  std::string stack;
};

// The samples of perf script text (stacks/stack_collapse rules), in the text's order. Samples
// without a time column are counted in `untimed` and left out; idle ones (see above) in `idle`
// unless include_idle.
struct PerfSamples {
  std::vector<TimedSample> samples;
  // The earliest and latest time of every timed sample, idle ones too (FlameScope's start and
  // end); first_time_ns > last_time_ns when none had a time.
  int64_t first_time_ns = INT64_MAX;
  int64_t last_time_ns = INT64_MIN;
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

// The fleet's map from a grid of the offsets metric (one column per second, step 1; groups, if
// any, are added up): column c is the second grid.from + c, and each column's histogram is
// spread over `rows` rows of [0, 1 s) as AssembleHeatmap spreads a column (integer counts that
// add up to the column's count). Offsets at or above 1 s (none from the agent) are counted in
// `untimed`. InvalidArgument for a grid that is not 1 s a column, or rows outside 1..1000.
Result<SubsecondView> SubsecondFromGrid(const MergedGrid& grid, int rows = 50);

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
