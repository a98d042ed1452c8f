#include "query/views/stats.h"

#include <algorithm>

#include "core/units.h"
#include "query/views/micro_trail.h"

namespace trailmap {
namespace {

double Key(const StatsRow& row, StatsSort sort) {
  switch (sort) {
    case StatsSort::kName:
      return 0;
    case StatsSort::kCount:
      return static_cast<double>(row.count);
    case StatsSort::kMean:
      return row.mean;
    case StatsSort::kMin:
      return static_cast<double>(row.min);
    case StatsSort::kP50:
      return static_cast<double>(row.p50);
    case StatsSort::kP90:
      return static_cast<double>(row.p90);
    case StatsSort::kP99:
      return static_cast<double>(row.p99);
    case StatsSort::kP999:
      return static_cast<double>(row.p999);
    case StatsSort::kMax:
      return static_cast<double>(row.max);
  }
  return 0;
}

}  // namespace

Result<StatsSort> ParseStatsSort(std::string_view text) {
  static constexpr std::pair<std::string_view, StatsSort> kNames[] = {
      {"name", StatsSort::kName}, {"count", StatsSort::kCount}, {"mean", StatsSort::kMean},
      {"min", StatsSort::kMin},   {"p50", StatsSort::kP50},     {"p90", StatsSort::kP90},
      {"p99", StatsSort::kP99},   {"p99.9", StatsSort::kP999},  {"p999", StatsSort::kP999},
      {"max", StatsSort::kMax},
  };
  for (const auto& [name, sort] : kNames) {
    if (name == text) return sort;
  }
  return Status::InvalidArgument("unknown sort \"" + std::string(text) +
                                 "\": use name, count, mean, min, p50, p90, p99, p99.9 or max");
}

StatsTable ComputeStats(const MergedGrid& grid) {
  StatsTable table;
  table.metric = grid.metric;
  table.unit = grid.unit;
  table.group_by = grid.group_by;
  table.from = grid.from;
  table.to = grid.to;
  const Histogram all = grid.Total();
  table.trail_top =
      static_cast<uint64_t>(NiceTop(static_cast<double>(std::max<uint64_t>(all.Percentile(99), 1)), grid.unit));
  for (size_t g = 0; g < grid.groups.size(); ++g) {
    const Histogram h = grid.Group(g);
    if (h.empty() && !grid.group_by.empty()) continue;
    StatsRow row;
    row.group = grid.groups[g];
    row.count = h.count();
    row.mean = h.mean();
    row.min = h.min();
    row.max = h.max();
    row.p50 = h.Percentile(50);
    row.p90 = h.Percentile(90);
    row.p99 = h.Percentile(99);
    row.p999 = h.Percentile(99.9);
    row.trail = HistogramMicroTrail(h, table.trail_top, kStatsTrailWidth);
    table.rows.push_back(std::move(row));
  }
  return table;
}

void SortStats(StatsTable* table, StatsSort sort, size_t top) {
  std::stable_sort(table->rows.begin(), table->rows.end(),
                   [sort](const StatsRow& a, const StatsRow& b) {
                     const double ka = Key(a, sort), kb = Key(b, sort);
                     if (ka != kb) return ka > kb;
                     return a.group < b.group;
                   });
  if (top > 0 && table->rows.size() > top) table->rows.resize(top);
}

}  // namespace trailmap
