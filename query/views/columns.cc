#include "query/views/columns.h"

#include <algorithm>
#include <utility>

#include "core/parallel.h"
#include "query/views/distribution_stats.h"

namespace trailmap {
namespace {

double Key(const HostColumn& h, ColumnsSort sort) {
  switch (sort) {
    case ColumnsSort::kCov:
      return h.cov;
    case ColumnsSort::kP50:
      return static_cast<double>(h.p50);
    case ColumnsSort::kP90:
      return static_cast<double>(h.p90);
    case ColumnsSort::kP99:
      return static_cast<double>(h.p99);
    case ColumnsSort::kMean:
      return h.mean;
    case ColumnsSort::kMax:
      return static_cast<double>(h.max);
    case ColumnsSort::kCount:
      return static_cast<double>(h.count);
    case ColumnsSort::kBimodality:
      return h.bimodality;
    case ColumnsSort::kName:
      return 0;
  }
  return 0;
}

constexpr std::pair<std::string_view, ColumnsSort> kSortNames[] = {
    {"cov", ColumnsSort::kCov},
    {"p50", ColumnsSort::kP50},
    {"p90", ColumnsSort::kP90},
    {"p99", ColumnsSort::kP99},
    {"mean", ColumnsSort::kMean},
    {"max", ColumnsSort::kMax},
    {"count", ColumnsSort::kCount},
    {"name", ColumnsSort::kName},
    {"bimodality", ColumnsSort::kBimodality},
};

}  // namespace

Result<ColumnsSort> ParseColumnsSort(std::string_view text) {
  for (const auto& [name, sort] : kSortNames) {
    if (name == text) return sort;
  }
  return Status::InvalidArgument(
      "unknown sort \"" + std::string(text) +
      "\": use cov, p50, p90, p99, mean, max, count, name or bimodality");
}

const char* ColumnsSortName(ColumnsSort sort) {
  for (const auto& [name, s] : kSortNames) {
    if (s == sort) return name.data();
  }
  return "cov";
}

Result<ColumnShading> ParseColumnShading(std::string_view text) {
  if (text == "column" || text == "per-column") return ColumnShading::kPerColumn;
  if (text == "global") return ColumnShading::kGlobal;
  return Status::InvalidArgument("unknown shading \"" + std::string(text) +
                                 "\": use column (each column by its own max) or global");
}

const char* ColumnShadingName(ColumnShading shading) {
  return shading == ColumnShading::kGlobal ? "global" : "column";
}

HostColumn DescribeHost(std::string host, const Histogram& h) {
  HostColumn out;
  out.host = std::move(host);
  out.count = h.count();
  if (h.empty()) return out;
  out.min = h.min();
  out.max = h.max();
  out.mean = h.mean();
  out.p50 = h.Percentile(50);
  out.p90 = h.Percentile(90);
  out.p99 = h.Percentile(99);
  const DistributionStats shape = ComputeDistributionStats(h);
  out.stddev = shape.stddev;
  out.cov = shape.cov;
  out.skewness = shape.skewness;
  out.kurtosis = shape.kurtosis;
  out.bimodality = shape.bimodality;
  return out;
}

Result<ColumnsView> AssembleColumns(MergedGrid grid, const ColumnsOptions& options) {
  if (grid.group_by != "host") {
    return Status::InvalidArgument("a columns view needs a query grouped by host");
  }
  if (options.rows == 0) return Status::InvalidArgument("--rows must be at least 1");
  ColumnsView view;
  view.metric = grid.metric;
  view.kind = grid.kind;
  view.unit = grid.unit;
  view.from = grid.from;
  view.to = grid.to;
  view.sort = options.sort;
  view.reverse = options.reverse;
  view.shading = options.shading;
  view.coloring = options.coloring;

  // Each host's histogram over the whole range, and its statistics.
  std::vector<Histogram> merged;
  std::vector<size_t> kept;
  for (size_t g = 0; g < grid.groups.size(); ++g) {
    // A one-column grid's cell is the host's histogram: taken, not copied (1,000 hosts' are
    // ~8 MB, which a fresh process pays for in page faults).
    Histogram h = grid.cells[g].size() == 1 ? std::move(grid.cells[g][0]) : grid.Group(g);
    if (h.empty()) continue;
    merged.push_back(std::move(h));
    kept.push_back(g);
  }
  view.hosts.resize(merged.size());
  ParallelFor(merged.size(), 256, [&view, &merged, &kept, &grid](size_t i) {
    view.hosts[i] = DescribeHost(grid.groups[kept[i]], merged[i]);
  });
  view.hosts_total = view.hosts.size();

  std::vector<size_t> order(view.hosts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const ColumnsSort sort = options.sort;
  const bool reverse = options.reverse;
  std::sort(order.begin(), order.end(), [&view, sort, reverse](size_t a, size_t b) {
    const HostColumn& ha = view.hosts[a];
    const HostColumn& hb = view.hosts[b];
    if (sort == ColumnsSort::kName) return reverse ? ha.host > hb.host : ha.host < hb.host;
    const double ka = Key(ha, sort), kb = Key(hb, sort);
    if (ka != kb) return reverse ? ka < kb : ka > kb;
    return ha.host < hb.host;
  });
  if (options.limit > 0 && order.size() > options.limit) order.resize(options.limit);

  // The hosts as the columns of a heat-map grid, in sorted order.
  MergedGrid columns;
  columns.metric = grid.metric;
  columns.kind = grid.kind;
  columns.unit = grid.unit;
  columns.from = 0;
  columns.to = static_cast<int64_t>(order.size());
  columns.step = 1;
  columns.columns = static_cast<uint32_t>(order.size());
  columns.groups = {""};
  columns.cells.assign(1, {});
  std::vector<HostColumn> sorted;
  for (size_t i : order) {
    sorted.push_back(std::move(view.hosts[i]));
    columns.cells[0].push_back(std::move(merged[i]));
  }
  view.hosts = std::move(sorted);

  HeatmapOptions heatmap;
  heatmap.rows = options.rows;
  heatmap.ymax = options.ymax;
  heatmap.clip_percent = options.clip_percent;
  heatmap.coloring = options.coloring;
  heatmap.per_column = options.shading == ColumnShading::kPerColumn;
  Result<HeatmapView> cells = AssembleHeatmap(columns, heatmap);
  if (!cells.ok()) return cells.status();
  view.grid = std::move(cells).value();
  view.column_max.assign(view.grid.columns, 0);
  for (uint32_t r = 0; r < view.grid.rows; ++r) {
    for (uint32_t c = 0; c < view.grid.columns; ++c) {
      view.column_max[c] = std::max(view.column_max[c], view.grid.count(r, c));
    }
  }
  return view;
}

}  // namespace trailmap
