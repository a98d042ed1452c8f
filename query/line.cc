#include "query/line.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/units.h"

namespace trailmap {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double StatOf(const Histogram& h, LineStat stat, double scale) {
  if (h.empty()) return kNaN;
  switch (stat) {
    case LineStat::kAvg:
      return static_cast<double>(h.sum()) / static_cast<double>(h.count()) * scale;
    case LineStat::kMax:
      return static_cast<double>(h.max()) * scale;
    case LineStat::kMin:
      return static_cast<double>(h.min()) * scale;
    case LineStat::kSum:
      return static_cast<double>(h.sum()) * scale;
  }
  return kNaN;
}

LineSeries SeriesOf(std::string name, const std::vector<Histogram>& cells, LineStat stat,
                    double scale) {
  LineSeries s;
  s.name = std::move(name);
  s.values.reserve(cells.size());
  double total = 0;
  size_t n = 0;
  for (const Histogram& h : cells) {
    s.values.push_back(StatOf(h, stat, scale));
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

double LineView::Top() const {
  double top = 0;
  if (stacked) {
    for (uint32_t c = 0; c < columns; ++c) {
      double total = 0;
      for (const LineSeries& s : series) total += std::isnan(s.values[c]) ? 0 : s.values[c];
      top = std::max(top, total);
    }
  } else {
    for (const LineSeries& s : series) {
      for (double v : s.values) {
        if (!std::isnan(v)) top = std::max(top, v);
      }
    }
  }
  return top;
}

LineView AssembleLineView(const MergedGrid& grid, const LineOptions& options) {
  LineView view;
  view.metric = grid.metric;
  const auto [scale, base] = SplitFixedPointUnit(grid.unit);
  view.unit = std::string(base);
  view.by = grid.group_by;
  view.stat = options.stat;
  view.stacked = options.stacked;
  view.area = options.area || options.stacked;
  view.from = grid.from;
  view.step = grid.step;
  view.columns = grid.columns;

  std::vector<LineSeries> all;
  all.reserve(grid.groups.size());
  for (size_t g = 0; g < grid.groups.size(); ++g) {
    LineSeries s = SeriesOf(grid.groups[g], grid.cells[g], options.stat, scale);
    if (std::any_of(s.values.begin(), s.values.end(), [](double v) { return !std::isnan(v); })) {
      s.name = s.name.empty() ? grid.metric : s.name;
      all.push_back(std::move(s));
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
    std::vector<Histogram> rest(grid.columns);
    for (size_t i = keep; i < order.size(); ++i) {
      const size_t g = static_cast<size_t>(
          std::find(grid.groups.begin(), grid.groups.end(), all[order[i]].name) -
          grid.groups.begin());
      if (g >= grid.groups.size()) continue;
      for (uint32_t c = 0; c < grid.columns; ++c) (void)rest[c].Merge(grid.cells[g][c]);
    }
    LineSeries other = SeriesOf("other", rest, options.stat, scale);
    other.other = true;
    view.series.push_back(std::move(other));
    view.merged = all.size() - keep;
  }
  return view;
}

}  // namespace trailmap
