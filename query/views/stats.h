// Stats: a percentile table per group (host, field value, or one row for everything), from the
// merged histograms of the whole time range.
//
// Percentiles are the histogram's nearest-rank percentiles: within 0.8% of the exact value
// (core/histogram.h). Rows are sorted by group name, or by a statistic (largest first), ties
// broken by name; --top N keeps the first N after sorting.
// Pure functions; value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "query/fetch/partials.h"
#include "query/views/micro_trail.h"

namespace trailmap {

struct StatsRow {
  std::string group;  // "" for the single row of an ungrouped table
  uint64_t count = 0;
  double mean = 0;
  uint64_t min = 0, max = 0;
  uint64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0;
  // A micro frequency trail (query/views/micro_trail.h) over [0, StatsTable::trail_top): every row
  // on the same axis, so the rows compare. The renderers write it as a sparkline.
  std::vector<MicroTrailCell> trail;
};

enum class StatsSort { kName, kCount, kMean, kMin, kP50, kP90, kP99, kP999, kMax };
// "name", "count", "mean", "min", "p50", "p90", "p99", "p99.9", "max".
Result<StatsSort> ParseStatsSort(std::string_view text);

struct StatsTable {
  std::string metric;
  std::string unit = "ns";
  std::string group_by;  // "" = one row for everything
  int64_t from = 0, to = 0;
  std::vector<StatsRow> rows;
  std::vector<std::string> missing_shards;  // "endpoint: reason"
  // The micro trails' value axis [0, trail_top): the p99 of every row's events together, rounded
  // up to 1, 2 or 5 x 10^k (as `trailmap trails` chooses its range).
  uint64_t trail_top = 0;
};

inline constexpr size_t kStatsTrailWidth = 24;  // cells (characters) of a row's micro trail

// One row per group of `grid` that holds any events (the single row of an ungrouped grid is kept
// even when empty).
StatsTable ComputeStats(const MergedGrid& grid);
// Sorts (name ascending, statistics descending) and keeps the first `top` rows (0 = all).
void SortStats(StatsTable* table, StatsSort sort, size_t top);

}  // namespace trailmap
