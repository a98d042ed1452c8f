// Sorted server columns (seed 002): host on x, value on y, one column per host holding
// the histogram of that host's events over the whole time range, the columns sorted by a
// statistic of each host's distribution so that similar hosts sit side by side and the odd ones
// gather at one end.
//
// Statistics of a host (HostColumn), all from its merged histogram: count, min, max and mean
// exact; p50, p90, p99 nearest-rank percentiles within 0.8% (core/histogram.h); stddev, cov,
// skewness, kurtosis and the bimodality coefficient (skewness² + 1) / kurtosis as defined once in
// query/views/distribution_stats.h (population moments of the bucket midpoints; bimodality is 1/3 for a
// normal distribution, 5/9 for a uniform one, 1 for two equal spikes; 0 for a one-bucket spike).
//
// Sorting: statistics largest first, `name` ascending; ties are broken by host name ascending;
// `reverse` flips the direction of the key (not of the tie-break). `limit` keeps the first N.
//
// Cells: the columns are assembled exactly as heat-map columns are (query/views/heatmap.h,
// AssembleHeatmap on a grid whose columns are the hosts in sorted order), so rows, the automatic
// round ymax, --ymax, --clip and "above" mean the same in both views. The y range is chosen from
// the hosts shown (after --limit).
//
// Shading:
//   - per column (default, seed 002): each column is shaded by its own counts alone (rank or
//     linear: the heat map's per_column coloring), so a quiet host's shape is as visible as a busy
//     one's and every non-empty column has a cell at the palette's darkest level;
//   - global: all cells shaded together, as one heat map.
//
// Pure functions of their inputs; ColumnsView is a value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "query/views/heatmap.h"
#include "query/fetch/partials.h"

namespace trailmap {

enum class ColumnsSort { kCov, kP50, kP90, kP99, kMean, kMax, kCount, kName, kBimodality };
// "cov", "p50", "p90", "p99", "mean", "max", "count", "name", "bimodality".
Result<ColumnsSort> ParseColumnsSort(std::string_view text);
const char* ColumnsSortName(ColumnsSort sort);

enum class ColumnShading { kPerColumn, kGlobal };
// "column" (also "per-column") or "global".
Result<ColumnShading> ParseColumnShading(std::string_view text);
const char* ColumnShadingName(ColumnShading shading);

struct ColumnsOptions {
  uint32_t rows = 50;       // rows of the value axis, at least 1
  uint64_t ymax = 0;        // top of the value axis in the base unit (exclusive); 0 = automatic
  double clip_percent = 0;  // with automatic ymax: keep the top clip_percent % of events above
  Coloring coloring = Coloring::kRank;
  ColumnShading shading = ColumnShading::kPerColumn;
  ColumnsSort sort = ColumnsSort::kCov;
  bool reverse = false;
  size_t limit = 0;  // keep the first N hosts after sorting; 0 = all
};

// One host's statistics (see the top of this file for each definition).
struct HostColumn {
  std::string host;
  uint64_t count = 0;
  uint64_t min = 0, max = 0;
  double mean = 0;
  uint64_t p50 = 0, p90 = 0, p99 = 0;
  double stddev = 0;
  double cov = 0;
  double skewness = 0;
  double kurtosis = 0;
  double bimodality = 0;
};

// The statistics of one histogram, named `host`.
HostColumn DescribeHost(std::string host, const Histogram& histogram);

struct ColumnsView {
  std::string metric;
  MetricKind kind = MetricKind::kLatency;
  std::string unit = "ns";
  int64_t from = 0;  // the time range every column covers, [from, to)
  int64_t to = 0;
  ColumnsSort sort = ColumnsSort::kCov;
  bool reverse = false;
  ColumnShading shading = ColumnShading::kPerColumn;
  Coloring coloring = Coloring::kRank;
  size_t hosts_total = 0;  // hosts with events before --limit

  std::vector<HostColumn> hosts;  // the columns, left to right, in sort order
  // The cells: rows, ymin, ymax, ymax_auto, clip_percent, counts, total, above as in a heat map
  // whose column c is hosts[c] (its time fields are unused); saturation and levels by `shading`.
  HeatmapView grid;
  std::vector<uint64_t> column_max;  // the fullest cell of each column

  std::vector<std::string> missing_shards;  // "endpoint: reason", set by the caller

  uint32_t rows() const { return grid.rows; }
  uint32_t columns() const { return grid.columns; }
};

// Sorts the hosts of `grid` (a query grouped by host, one or more columns: all are merged) and
// assembles the columns. Refuses a grid not grouped by host. Takes the grid by value: a caller
// done with it moves it in, and its one-column cells are then taken, not copied.
Result<ColumnsView> AssembleColumns(MergedGrid grid, const ColumnsOptions& options);

}  // namespace trailmap
