#include "query/views/line.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/units.h"

namespace trailmap {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double StatOf(const CellSummary& c, LineStat stat) {
  if (c.count == 0) return kNaN;
  switch (stat) {
    case LineStat::kAvg:
      return c.sum / static_cast<double>(c.count);
    case LineStat::kMax:
      return c.max;
    case LineStat::kMin:
      return c.min;
    case LineStat::kSum:
      return c.sum;
  }
  return kNaN;
}

LineSeries SeriesOf(std::string name, const std::vector<CellSummary>& cells, LineStat stat) {
  LineSeries s;
  s.name = std::move(name);
  s.values.reserve(cells.size());
  double total = 0;
  size_t n = 0;
  for (const CellSummary& c : cells) {
    s.values.push_back(StatOf(c, stat));
    if (!std::isnan(s.values.back())) {
      total += s.values.back();
      ++n;
    }
  }
  s.mean = n ? total / static_cast<double>(n) : 0;
  return s;
}

}  // namespace

const char* LineStatName(LineStat stat) {
  switch (stat) {
    case LineStat::kAvg:
      return "avg";
    case LineStat::kMax:
      return "max";
    case LineStat::kMin:
      return "min";
    case LineStat::kSum:
      return "sum";
  }
  return "?";
}

Result<LineStat> ParseLineStat(std::string_view text) {
  for (LineStat s : {LineStat::kAvg, LineStat::kMax, LineStat::kMin, LineStat::kSum}) {
    if (text == LineStatName(s)) return s;
  }
  return Status::InvalidArgument("unknown statistic \"" + std::string(text) +
                                 "\"; use avg, max, min or sum");
}

namespace {
// `pick` (max or min) over the values drawn, starting from 0; stacked, over the column totals.
template <typename Pick>
double Extreme(const LineView& view, Pick pick) {
  double extreme = 0;
  if (view.stacked) {
    for (uint32_t c = 0; c < view.columns; ++c) {
      double total = 0;
      for (const LineSeries& s : view.series) total += std::isnan(s.values[c]) ? 0 : s.values[c];
      extreme = pick(extreme, total);
    }
  } else {
    for (const LineSeries& s : view.series) {
      for (double v : s.values) {
        if (!std::isnan(v)) extreme = pick(extreme, v);
      }
    }
  }
  return extreme;
}
}  // namespace

double LineView::Top() const {
  return Extreme(*this, [](double a, double b) { return std::max(a, b); });
}

double LineView::Bottom() const {
  return Extreme(*this, [](double a, double b) { return std::min(a, b); });
}

Result<SummaryGrid> MergeSummaries(const HistogramQuery& query,
                                   const std::vector<Answer>& answers) {
  SummaryGrid grid;
  grid.metric = query.metric;
  grid.from = query.from;
  grid.step = query.step;
  grid.columns = query.columns();
  grid.group_by = query.group_by;
  // A shard that predates summaries answers with histogram cells: summarize them here.
  std::vector<HistogramAnswer> summarized(answers.size());
  std::vector<const HistogramAnswer*> of(answers.size());
  for (size_t i = 0; i < answers.size(); ++i) {
    of[i] = &answers[i].histograms;
    if (of[i]->summaries.empty() && !of[i]->cells.empty()) {
      summarized[i] = *of[i];
      SummarizeCells(&summarized[i]);
      of[i] = &summarized[i];
    }
  }
  std::string unit_from;
  for (size_t i = 0; i < answers.size(); ++i) {
    const HistogramAnswer& h = *of[i];
    if (h.summaries.empty()) continue;
    const std::string base(SplitFixedPointUnit(h.unit).second);
    if (unit_from.empty()) {
      grid.unit = base;
      unit_from = answers[i].shard;
    } else if (base != grid.unit) {
      return Status::Corruption("shards disagree on " + query.metric + ": " + unit_from + " says " +
                                grid.unit + ", " + answers[i].shard + " says " + base);
    }
    grid.groups.insert(grid.groups.end(), h.groups.begin(), h.groups.end());
  }
  std::sort(grid.groups.begin(), grid.groups.end());
  grid.groups.erase(std::unique(grid.groups.begin(), grid.groups.end()), grid.groups.end());
  grid.cells.assign(grid.groups.size(), std::vector<CellSummary>(grid.columns));
  for (size_t i = 0; i < answers.size(); ++i) {
    const Answer& a = answers[i];
    const HistogramAnswer& h = *of[i];
    const double scale = SplitFixedPointUnit(h.unit).first;  // 0.01 for "0.01%", else 1
    std::vector<size_t> index(h.groups.size());
    for (size_t g = 0; g < h.groups.size(); ++g) {
      index[g] = static_cast<size_t>(
          std::lower_bound(grid.groups.begin(), grid.groups.end(), h.groups[g]) -
          grid.groups.begin());
    }
    for (const CellSummary& c : h.summaries) {
      if (c.column >= grid.columns || c.group >= index.size()) {
        return Status::Corruption(a.shard + ": summary of column " + std::to_string(c.column) +
                                  " outside the " + std::to_string(grid.columns) + " asked for");
      }
      grid.cells[index[c.group]][c.column].Add(
          CellSummary{c.column, c.group, c.count, c.sum * scale, c.min * scale, c.max * scale});
    }
  }
  return grid;
}

SummaryGrid SummarizeGrid(const MergedGrid& grid) {
  SummaryGrid out;
  out.metric = grid.metric;
  const auto [scale, base] = SplitFixedPointUnit(grid.unit);
  out.unit = std::string(base);
  out.group_by = grid.group_by;
  out.from = grid.from;
  out.step = grid.step;
  out.columns = grid.columns;
  out.groups = grid.groups;
  out.cells.assign(grid.groups.size(), std::vector<CellSummary>(grid.columns));
  for (size_t g = 0; g < grid.groups.size(); ++g) {
    for (uint32_t c = 0; c < grid.columns && c < grid.cells[g].size(); ++c) {
      const Histogram& h = grid.cells[g][c];
      if (h.empty()) continue;
      out.cells[g][c] = CellSummary{c,
                                    static_cast<uint32_t>(g),
                                    h.count(),
                                    static_cast<double>(h.sum()) * scale,
                                    static_cast<double>(h.min()) * scale,
                                    static_cast<double>(h.max()) * scale};
    }
  }
  return out;
}

LineView AssembleLineView(const MergedGrid& grid, const LineOptions& options) {
  return AssembleLineView(SummarizeGrid(grid), options);
}

LineView AssembleLineView(const SummaryGrid& grid, const LineOptions& options) {
  LineView view;
  view.metric = grid.metric;
  view.unit = grid.unit;
  view.by = grid.group_by;
  view.stat = options.stat;
  view.stacked = options.stacked;
  view.area = options.area || options.stacked;
  view.from = grid.from;
  view.step = grid.step;
  view.columns = grid.columns;

  std::vector<LineSeries> all;
  std::vector<size_t> group_of;  // all[i] is grid group group_of[i]
  for (size_t g = 0; g < grid.groups.size(); ++g) {
    LineSeries s = SeriesOf(grid.groups[g], grid.cells[g], options.stat);
    if (std::any_of(s.values.begin(), s.values.end(), [](double v) { return !std::isnan(v); })) {
      if (s.name.empty()) s.name = grid.metric;
      all.push_back(std::move(s));
      group_of.push_back(g);
    }
  }
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&all](size_t a, size_t b) {
    return all[a].mean != all[b].mean ? all[a].mean > all[b].mean : all[a].name < all[b].name;
  });
  const size_t keep = options.top == 0 || all.size() <= options.top ? all.size() : options.top;
  for (size_t i = 0; i < keep; ++i) view.series.push_back(std::move(all[order[i]]));
  if (keep < all.size()) {
    // The rest, merged cell by cell: the statistic of "other" is exact over what it holds.
    std::vector<CellSummary> rest(grid.columns);
    for (size_t i = keep; i < order.size(); ++i) {
      const std::vector<CellSummary>& cells = grid.cells[group_of[order[i]]];
      for (uint32_t c = 0; c < grid.columns; ++c) rest[c].Add(cells[c]);
    }
    LineSeries other = SeriesOf("other", rest, options.stat);
    other.other = true;
    view.series.push_back(std::move(other));
    view.merged = all.size() - keep;
  }
  return view;
}

}  // namespace trailmap
