#include "query/views/subsecond.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "query/views/heatmap.h"

namespace trailmap {
namespace {

constexpr int64_t kNsPerSecond = 1'000'000'000;

// FlameScope's idle_stack alternatives, looked for in the frames of a "swapper" sample.
constexpr std::string_view kIdleFunctions[] = {"cpuidle",
                                               "cpu_idle",
                                               "cpu_bringup_and_idle",
                                               "native_safe_halt",
                                               "xen_hypercall_sched_op",
                                               "xen_hypercall_vcpu_op"};

bool IsIdle(const CollapsedRecord& r) {
  if (r.comm.find("swapper") == std::string_view::npos) return false;
  for (std::string_view frame : *r.frames) {
    for (std::string_view idle : kIdleFunctions) {
      if (frame.find(idle) != std::string_view::npos) return true;
    }
  }
  return false;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// "12.340" as nanoseconds; false unless DIGITS[.DIGITS] with at most 9 fraction digits.
bool ParseSecondsNs(std::string_view text, int64_t* ns) {
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  if (whole.empty() || whole.size() > 9 || frac.size() > 9 ||
      (dot != std::string_view::npos && frac.empty())) {
    return false;
  }
  int64_t v = 0;
  for (char c : whole) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  int64_t f = 0;
  for (size_t i = 0; i < 9; ++i) {
    const char c = i < frac.size() ? frac[i] : '0';
    if (c < '0' || c > '9') return false;
    f = f * 10 + (c - '0');
  }
  *ns = v * kNsPerSecond + f;
  return true;
}

}  // namespace

PerfSamples ReadPerfSamples(std::string_view perf_script, bool include_idle) {
  PerfSamples out;
  CollapseOptions options;
  options.count_samples = true;
  StackCollapser collapser(options);
  collapser.SetRecordSink([&out, include_idle](const CollapsedRecord& r) {
    if (!r.has_time) {
      ++out.untimed;
      return;
    }
    out.first_time_ns = std::min(out.first_time_ns, r.time_ns);
    out.last_time_ns = std::max(out.last_time_ns, r.time_ns);
    if (!include_idle && IsIdle(r)) {
      ++out.idle;
      return;
    }
    TimedSample s;
    s.time_ns = r.time_ns;
    s.stack.assign(r.comm);
    std::replace(s.stack.begin(), s.stack.end(), ' ', '_');
    for (std::string_view f : *r.frames) {
      s.stack += ';';
      s.stack += f;
    }
    out.samples.push_back(std::move(s));
  });
  collapser.Add(perf_script);
  collapser.Add("\n");  // a last record without its blank line counts here, as in import
  collapser.Finish();
  out.stats = collapser.stats();
  return out;
}

Result<SubsecondView> BuildSubsecondView(const PerfSamples& samples, int rows) {
  if (rows < 1 || rows > 1000) return Status::InvalidArgument("--rows must be from 1 to 1000");
  SubsecondView view;
  view.rows = rows;
  view.idle = samples.idle;
  view.untimed = samples.untimed;
  int64_t first = samples.first_time_ns, end = samples.last_time_ns, last_drawn = INT64_MIN;
  for (const TimedSample& s : samples.samples) {
    first = std::min(first, s.time_ns);
    end = std::max(end, s.time_ns);
    last_drawn = std::max(last_drawn, s.time_ns);
  }
  if (first > end) return view;  // no timed sample
  view.start_second = FloorDiv(first, kNsPerSecond);
  // FlameScope's ceil(end) - floor(start), but never short of the last drawn sample's column.
  int64_t columns = -FloorDiv(-end, kNsPerSecond) - view.start_second;
  if (last_drawn != INT64_MIN) {
    columns = std::max(columns, FloorDiv(last_drawn, kNsPerSecond) - view.start_second + 1);
  }
  if (columns > kMaxSubsecondColumns) {
    return Status::InvalidArgument("the samples span " + std::to_string(columns) +
                                   " seconds; the sub-second view draws at most " +
                                   std::to_string(kMaxSubsecondColumns) +
                                   " (cut the perf script to the minutes of interest)");
  }
  view.counts.assign(static_cast<size_t>(columns), std::vector<uint64_t>(rows, 0));
  for (const TimedSample& s : samples.samples) {
    const int64_t second = FloorDiv(s.time_ns, kNsPerSecond);
    const int64_t offset = s.time_ns - second * kNsPerSecond;
    const auto row = static_cast<size_t>(offset * rows / kNsPerSecond);
    uint64_t& cell = view.counts[static_cast<size_t>(second - view.start_second)][row];
    ++cell;
    view.max_count = std::max(view.max_count, cell);
    ++view.samples;
  }
  return view;
}

Result<SubsecondView> SubsecondFromGrid(const MergedGrid& grid, int rows) {
  if (rows < 1 || rows > 1000) return Status::InvalidArgument("--rows must be from 1 to 1000");
  if (grid.step != 1) {
    return Status::InvalidArgument(
        "the sub-second map needs one column per second, got a step of " +
        std::to_string(grid.step) + " s");
  }
  SubsecondView view;
  view.rows = rows;
  view.start_second = grid.from;
  if (grid.columns > static_cast<uint32_t>(kMaxSubsecondColumns)) {
    return Status::InvalidArgument("the range spans " + std::to_string(grid.columns) +
                                   " seconds; the sub-second view draws at most " +
                                   std::to_string(kMaxSubsecondColumns));
  }
  view.counts.assign(grid.columns, std::vector<uint64_t>(static_cast<size_t>(rows), 0));
  if (grid.columns == 0) return view;
  HeatmapOptions options;
  options.rows = static_cast<uint32_t>(rows);
  options.ymin = 0;
  options.ymax = static_cast<uint64_t>(kNsPerSecond);
  options.scale = ValueScale::kLinear;
  Result<HeatmapView> heat = AssembleHeatmap(grid, options);
  if (!heat.ok()) return heat.status();
  for (uint32_t c = 0; c < heat->columns && c < grid.columns; ++c) {
    for (uint32_t r = 0; r < heat->rows; ++r) {
      const uint64_t n = heat->counts[static_cast<size_t>(r) * heat->columns + c];
      view.counts[c][r] = n;
      view.samples += n;
      view.max_count = std::max(view.max_count, n);
    }
  }
  view.untimed = heat->above;
  return view;
}

Result<SubsecondRange> ParseSubsecondRange(std::string_view text) {
  const size_t dots = text.find("..");
  int64_t from = 0, to = 0;
  if (dots == std::string_view::npos || !ParseSecondsNs(text.substr(0, dots), &from) ||
      !ParseSecondsNs(text.substr(dots + 2), &to) || to <= from) {
    return Status::InvalidArgument(
        "--range: expected FROM..TO in seconds from the first column, FROM < TO, e.g. "
        "12.340..13.020");
  }
  return SubsecondRange{static_cast<double>(from) / kNsPerSecond,
                        static_cast<double>(to) / kNsPerSecond};
}

FoldedStacks FoldSubsecondRange(const PerfSamples& samples, int64_t start_second,
                                const SubsecondRange& range) {
  // Back to whole nanoseconds (the range was parsed from at most 9 decimals).
  const int64_t from = start_second * kNsPerSecond + std::llround(range.from * 1e9);
  const int64_t to = start_second * kNsPerSecond + std::llround(range.to * 1e9);
  std::map<std::string_view, uint64_t> counts;
  for (const TimedSample& s : samples.samples) {
    if (s.time_ns >= from && s.time_ns < to) ++counts[s.stack];
  }
  FoldedStacks out;
  out.reserve(counts.size());
  for (const auto& [stack, count] : counts) out.push_back({std::string(stack), count});
  return out;
}

}  // namespace trailmap
