#include "query/views/heatmap.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/bucket_spans.h"
#include "core/parallel.h"

namespace trailmap {
namespace {

// The top (inclusive) of the bucket holding the highest event left after dropping the top
// `clip_percent` % of events (floor of the count, so clipping 0.1% of 999 events drops none).
uint64_t KeptTop(const Histogram& total, double clip_percent) {
  const auto drop =
      static_cast<uint64_t>(static_cast<double>(total.count()) * clip_percent / 100.0 + 1e-9);
  const uint64_t keep = std::max<uint64_t>(1, total.count() - std::min(drop, total.count()));
  uint64_t seen = 0;
  uint64_t top = 0;
  bool found = false;
  total.ForEachBucket([&](uint32_t index, uint64_t count) {
    if (found) return;
    seen += count;
    if (seen >= keep) {
      top = BucketUpper(index);
      found = true;
    }
  });
  return top;
}

// The largest power of ten at or below v (1 for v <= 1).
uint64_t PowerOfTenBelow(uint64_t v) {
  uint64_t p = 1;
  while (p <= v / 10) p *= 10;
  return p;
}

// The rows + 1 row bounds of [ymin, ymax) under `scale`.
std::vector<double> RowBounds(uint64_t ymin, uint64_t ymax, uint32_t rows, ValueScale scale) {
  std::vector<double> bounds(rows + 1);
  const double lo = static_cast<double>(ymin), hi = static_cast<double>(ymax);
  for (uint32_t r = 0; r <= rows; ++r) {
    const double t = static_cast<double>(r) / rows;
    bounds[r] = scale == ValueScale::kLog ? lo * std::pow(hi / lo, t) : lo + (hi - lo) * t;
  }
  bounds[0] = lo;
  bounds[rows] = hi;
  return bounds;
}

// Spreads one (group, column) histogram over the rows (see the header): returns the integer
// count of each row, and adds what falls outside to *below / *above. `share` is scratch space of
// rows + 2 entries: [0] below, [1..rows] the rows, [rows + 1] above.
void SpreadColumn(const Histogram& h, const std::vector<double>& bounds, std::vector<double>* share,
                  std::vector<uint64_t>* out, uint64_t* below, uint64_t* above) {
  const size_t rows = bounds.size() - 1;
  share->assign(rows + 2, 0);
  const double ymin = bounds.front(), ymax = bounds.back();
  size_t row = 0;
  const BucketSpan* spans = BucketSpans();
  h.ForEachBucket([&](uint32_t index, uint64_t count) {
    const double lo = spans[index].lower;
    const double hi = spans[index].end;  // exclusive
    const double n = static_cast<double>(count);
    const double width = hi - lo;
    if (hi <= ymin) {
      (*share)[0] += n;
      return;
    }
    if (lo >= ymax) {
      (*share)[rows + 1] += n;
      return;
    }
    if (lo < ymin) (*share)[0] += n * (ymin - lo) / width;
    if (hi > ymax) (*share)[rows + 1] += n * (hi - ymax) / width;
    // The first row whose top is above lo: the buckets come in ascending order, so the row
    // only moves up (a walk, not a search per bucket).
    const double start = std::max(lo, ymin);
    while (row + 1 < rows && bounds[row + 1] <= start) ++row;
    size_t r = row;
    // Most buckets lie inside one row. Then the share is n * width / width, which is exactly n
    // while n * width is below 2^53 (both are whole numbers): the same sum without a division.
    if (lo >= bounds[r] && hi <= bounds[r + 1] && n * width < 0x1p53) {
      (*share)[r + 1] += n;
      return;
    }
    for (; r < rows && bounds[r] < hi; ++r) {
      const double overlap = std::min(hi, bounds[r + 1]) - std::max(lo, bounds[r]);
      if (overlap > 0) (*share)[r + 1] += n * overlap / width;
    }
  });
  // Largest remainder: floor everything, then hand the events left over to the largest
  // fractional parts, so the integers add up to the histogram's count exactly.
  const uint64_t total = h.count();
  uint64_t floored = 0;
  std::vector<std::pair<double, size_t>> remainders;
  out->assign(rows + 2, 0);
  for (size_t i = 0; i < share->size(); ++i) {
    const double v = std::max(0.0, (*share)[i]);
    const auto whole = static_cast<uint64_t>(v);
    (*out)[i] = whole;
    floored += whole;
    if (v - static_cast<double>(whole) > 0) remainders.emplace_back(v - whole, i);
  }
  // Rounding in the sums can leave floored a hair above the count: take back from the top.
  for (size_t i = out->size(); floored > total && i-- > 0;) {
    const uint64_t take = std::min((*out)[i], floored - total);
    (*out)[i] -= take;
    floored -= take;
  }
  uint64_t left = total - floored;
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; left > 0 && !remainders.empty(); k = (k + 1) % remainders.size()) {
    ++(*out)[remainders[k].second];
    --left;
  }
  if (left > 0) (*out)[1] += left;  // nothing had a fraction: cannot happen, but stay exact
  *below += (*out)[0];
  *above += (*out)[rows + 1];
}

// The grid regrouped by a selection (Selection in heatmap.h); *excluded gets the events of the
// groups left out.
Result<MergedGrid> SelectGroups(const MergedGrid& grid, const std::vector<std::string>& select,
                                Selection selection, uint64_t* excluded) {
  if (grid.group_by.empty()) {
    return Status::InvalidArgument("--select, --isolate and --exclude need --by host or --by FIELD");
  }
  std::vector<int> chosen(grid.groups.size(), -1);  // index in `select`, or -1
  for (size_t k = 0; k < select.size(); ++k) {
    const auto it = std::find(grid.groups.begin(), grid.groups.end(), select[k]);
    if (it == grid.groups.end()) {
      std::string known;
      for (size_t g = 0; g < grid.groups.size() && g < 12; ++g) {
        known += (g ? ", " : "") + (grid.groups[g].empty() ? std::string("\"\"") : grid.groups[g]);
      }
      if (grid.groups.size() > 12) known += ", ...";
      if (known.empty()) known = "none";
      return Status::InvalidArgument("--select: no " + grid.group_by + " \"" + select[k] +
                                     "\" has events in the range (there are: " + known + ")");
    }
    chosen[it - grid.groups.begin()] = static_cast<int>(k);
  }
  MergedGrid out = grid;
  out.groups.clear();
  out.cells.clear();
  std::vector<int> target(grid.groups.size(), -1);
  if (selection == Selection::kExclude) {
    for (size_t g = 0; g < grid.groups.size(); ++g) {
      if (chosen[g] >= 0) continue;
      target[g] = static_cast<int>(out.groups.size());
      out.groups.push_back(grid.groups[g]);
    }
  } else {
    for (size_t g = 0; g < grid.groups.size(); ++g) {
      if (chosen[g] >= 0) target[g] = chosen[g];
    }
    out.groups = select;
    if (selection == Selection::kHue) {
      for (int& t : target) {
        if (t < 0) t = static_cast<int>(select.size());
      }
      out.groups.push_back("other");
    }
  }
  out.cells.assign(out.groups.size(), std::vector<Histogram>(grid.columns));
  for (size_t g = 0; g < grid.groups.size(); ++g) {
    for (uint32_t c = 0; c < grid.columns; ++c) {
      if (target[g] < 0) {
        *excluded += grid.cells[g][c].count();
        continue;
      }
      out.cells[target[g]][c].Merge(grid.cells[g][c]);
    }
  }
  return out;
}

}  // namespace

const char* ValueScaleName(ValueScale scale) {
  return scale == ValueScale::kLog ? "log" : "linear";
}

Result<ValueScale> ParseValueScale(std::string_view text) {
  if (text == "linear") return ValueScale::kLinear;
  if (text == "log") return ValueScale::kLog;
  return Status::InvalidArgument("unknown scale \"" + std::string(text) +
                                 "\": use linear or log");
}

const char* ColoringName(Coloring coloring) {
  return coloring == Coloring::kLinear ? "linear" : "rank";
}

Result<Coloring> ParseColoring(std::string_view text) {
  if (text == "rank") return Coloring::kRank;
  if (text == "linear") return Coloring::kLinear;
  return Status::InvalidArgument("unknown coloring \"" + std::string(text) +
                                 "\": use rank (outliers visible) or linear (shade ~ count)");
}

uint32_t RollupStep(uint64_t at_least) {
  for (uint32_t s : {1u, 2u, 5u, 10u, 20u, 30u, 60u, 120u, 300u, 600u, 1200u, 1800u, 3600u, 7200u,
                     10800u, 21600u, 43200u, 86400u}) {
    if (s >= at_least) return s;
  }
  const uint64_t days = (at_least + 86399) / 86400;  // beyond a day: whole days
  return static_cast<uint32_t>(std::min<uint64_t>(days * 86400, UINT32_MAX / 86400 * 86400));
}

uint32_t StoredResolutionOf(uint32_t step) {
  for (uint32_t r : {600u, 60u, 10u}) {
    if (step % r == 0) return r;
  }
  return 1;
}

Result<ColumnPlan> PlanColumns(int64_t from, int64_t to, uint32_t cols, uint32_t step,
                               uint32_t max_columns) {
  if (to <= from) {
    return Status::InvalidArgument("empty time range: --from must be before --to");
  }
  ColumnPlan plan;
  plan.from = from;
  if (step > 0) {
    plan.step = step;
  } else if (cols > 0) {
    const uint64_t range = static_cast<uint64_t>(to - from);
    plan.step = static_cast<uint32_t>(std::max<uint64_t>(1, (range + cols - 1) / cols));
  } else {
    const uint64_t want = std::max<uint32_t>(max_columns, 1);
    const uint64_t range = static_cast<uint64_t>(to - from);
    plan.step = RollupStep((range + want - 1) / want);
    // The first column from the next multiple of the resolution: less than a column is left out
    // at the start (moving back would take a column more than fits).
    const int64_t r = StoredResolutionOf(plan.step);
    const int64_t past = ((from % r) + r) % r;
    if (past != 0 && from + (r - past) < to) plan.from = from + (r - past);
  }
  const uint64_t range = static_cast<uint64_t>(to - plan.from);
  const uint64_t columns = (range + plan.step - 1) / plan.step;
  if (columns > kMaxQueryColumns) {
    return Status::InvalidArgument(std::to_string(columns) + " columns is too many (at most " +
                                   std::to_string(kMaxQueryColumns) + "): use a larger --step");
  }
  plan.columns = static_cast<uint32_t>(columns);
  return plan;
}

uint64_t RoundTop(uint64_t value) {
  for (uint64_t decade = 1;; decade *= 10) {
    for (uint64_t m : {1, 2, 5}) {
      if (m * decade > value) return m * decade;
    }
    if (decade > UINT64_MAX / 100) return UINT64_MAX;
  }
}

double HeatmapView::RowLow(uint32_t row) const {
  if (row_bounds.size() == size_t{rows} + 1) return row_bounds[row];
  return static_cast<double>(ymin) + static_cast<double>(ymax - ymin) * row / rows;
}

double HeatmapView::RowHigh(uint32_t row) const { return RowLow(row + 1); }

namespace {

// Saturations of the cells at counts[first + k * stride], k < n, by `coloring` over just them.
void ColorCells(const std::vector<uint64_t>& counts, size_t first, size_t stride, size_t n,
                Coloring coloring, std::vector<uint64_t>* sorted, std::vector<double>* saturation) {
  sorted->clear();
  for (size_t k = 0; k < n; ++k) {
    if (const uint64_t c = counts[first + k * stride]) sorted->push_back(c);
  }
  if (sorted->empty()) return;
  std::sort(sorted->begin(), sorted->end());
  for (size_t k = 0; k < n; ++k) {
    const size_t i = first + k * stride;
    const uint64_t c = counts[i];
    if (c == 0) continue;
    if (coloring == Coloring::kRank) {
      // The mean 1-based position of the cells with this count (fractional ranking of ties).
      const auto range = std::equal_range(sorted->begin(), sorted->end(), c);
      const double first = static_cast<double>(range.first - sorted->begin()) + 1;
      const double last = static_cast<double>(range.second - sorted->begin());
      (*saturation)[i] = (first + last) / 2 / static_cast<double>(sorted->size());
    } else {
      (*saturation)[i] = static_cast<double>(c) / static_cast<double>(sorted->back());
    }
  }
}

}  // namespace

void ColorHeatmap(HeatmapView* view) {
  const size_t n = view->counts.size();
  view->saturation.assign(n, 0);
  view->levels.assign(n, 0);
  view->nonzero_cells = 0;
  view->max_count = 0;
  for (uint64_t c : view->counts) {
    view->nonzero_cells += c != 0;
    view->max_count = std::max(view->max_count, c);
  }
  std::vector<uint64_t> sorted;
  if (view->per_column) {
    for (uint32_t c = 0; c < view->columns; ++c) {
      ColorCells(view->counts, c, view->columns, view->rows, view->coloring, &sorted,
                 &view->saturation);
    }
  } else {
    ColorCells(view->counts, 0, 1, n, view->coloring, &sorted, &view->saturation);
  }
  for (size_t i = 0; i < n; ++i) {
    if (view->counts[i]) view->levels[i] = static_cast<uint8_t>(ShadeLevel(view->saturation[i], true));
  }
}

std::vector<std::pair<std::string, uint64_t>> CellGroups(const MergedGrid& column_grid,
                                                         const HeatmapView& view, uint32_t row) {
  std::vector<std::pair<std::string, uint64_t>> parts;
  const std::vector<double> bounds =
      view.row_bounds.empty() ? RowBounds(view.ymin, view.ymax, view.rows, view.scale)
                              : view.row_bounds;
  std::vector<double> share;
  std::vector<uint64_t> spread;
  uint64_t below = 0, above = 0;
  for (size_t g = 0; g < column_grid.groups.size(); ++g) {
    Histogram h;
    for (const Histogram& cell : column_grid.cells[g]) (void)h.Merge(cell);
    if (h.empty()) continue;
    SpreadColumn(h, bounds, &share, &spread, &below, &above);
    if (spread[row + 1] > 0) parts.emplace_back(column_grid.groups[g], spread[row + 1]);
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return parts;
}

int64_t RowOf(const HeatmapView& view, double v) {
  if (v < static_cast<double>(view.ymin) || v >= static_cast<double>(view.ymax)) return -1;
  for (uint32_t r = 0; r < view.rows; ++r) {
    if (v < view.RowHigh(r)) return r;
  }
  return view.rows - 1;
}

double ValueFraction(const HeatmapView& view, double v) {
  const double lo = static_cast<double>(view.ymin), hi = static_cast<double>(view.ymax);
  if (view.scale == ValueScale::kLog) {
    if (v <= 0) return -1;
    return std::log(v / lo) / std::log(hi / lo);
  }
  return (v - lo) / (hi - lo);
}

std::vector<double> RowEventsPerSecond(const HeatmapView& view) {
  std::vector<double> rates(view.rows, 0);
  const double seconds = static_cast<double>(std::max<int64_t>(1, view.to - view.from));
  for (uint32_t r = 0; r < view.rows; ++r) {
    uint64_t sum = 0;
    for (uint32_t c = 0; c < view.columns; ++c) sum += view.count(r, c);
    rates[r] = static_cast<double>(sum) / seconds;
  }
  return rates;
}

double RangeEventsPerSecond(const HeatmapView& view) {
  uint64_t sum = 0;
  for (uint64_t c : view.counts) sum += c;
  return static_cast<double>(sum) / static_cast<double>(std::max<int64_t>(1, view.to - view.from));
}

Result<HeatmapView> AssembleHeatmap(const MergedGrid& fetched, const HeatmapOptions& options) {
  if (options.rows == 0) return Status::InvalidArgument("--rows must be at least 1");
  HeatmapView view;
  MergedGrid selected;
  if (!options.select.empty()) {
    Result<MergedGrid> regrouped =
        SelectGroups(fetched, options.select, options.selection, &view.excluded);
    if (!regrouped.ok()) return regrouped.status();
    selected = std::move(*regrouped);
    view.select = options.select;
    view.selection = options.selection;
  } else if (options.selection != Selection::kHue) {
    return Status::InvalidArgument("--isolate and --exclude need --select a,b");
  }
  const MergedGrid& grid = options.select.empty() ? fetched : selected;
  view.metric = grid.metric;
  view.kind = grid.kind;
  view.unit = grid.unit;
  view.from = grid.from;
  view.to = grid.to;
  view.step = grid.step;
  view.rows = options.rows;
  view.columns = grid.columns;
  view.coloring = options.coloring;
  view.per_column = options.per_column;
  view.palette = options.palette;
  view.scale = options.scale;
  view.clip_percent = options.ymax ? 0 : options.clip_percent;
  view.ymax_auto = options.ymax == 0;

  const Histogram total = grid.Total();
  view.total = total.count();
  if (options.ymax) {
    view.ymax = options.ymax;
  } else if (total.empty()) {
    view.ymax = 1;
  } else if (options.clip_percent > 0) {
    view.ymax = RoundTop(KeptTop(total, options.clip_percent));
  } else {
    view.ymax = RoundTop(BucketUpper(BucketIndex(total.max())));
  }
  view.ymin = options.ymin;
  if (options.scale == ValueScale::kLog && view.ymin == 0) {
    view.ymin = PowerOfTenBelow(total.empty() ? 1 : BucketLower(BucketIndex(total.min())));
  }
  if (view.ymin >= view.ymax) {
    return Status::InvalidArgument("the value axis is empty: --ymin " + std::to_string(view.ymin) +
                                   " is not below --ymax " + std::to_string(view.ymax) +
                                   " (in the metric's base unit)");
  }
  view.row_bounds = RowBounds(view.ymin, view.ymax, view.rows, view.scale);

  const bool grouped = !grid.group_by.empty();
  if (grouped) {
    view.group_by = grid.group_by;
    view.groups = grid.groups;
  }
  const size_t cells = size_t{view.rows} * view.columns;
  view.counts.assign(cells, 0);
  if (grouped) view.breakdown.assign(cells, {});
  // Columns are independent: each is spread by one thread, which alone writes its cells, with
  // what falls outside the rows summed per column.
  std::vector<uint64_t> below(grid.columns, 0), above(grid.columns, 0);
  ParallelFor(grid.columns, 128, [&grid, &view, &below, &above, grouped](size_t c) {
    std::vector<double> share;
    std::vector<uint64_t> spread;
    for (size_t g = 0; g < grid.groups.size(); ++g) {
      const Histogram& h = grid.cells[g][c];
      if (h.empty()) continue;
      SpreadColumn(h, view.row_bounds, &share, &spread, &below[c], &above[c]);
      for (uint32_t r = 0; r < view.rows; ++r) {
        const uint64_t count = spread[r + 1];
        if (count == 0) continue;
        const size_t i = view.Index(r, static_cast<uint32_t>(c));
        view.counts[i] += count;
        if (grouped) view.breakdown[i].emplace_back(static_cast<uint32_t>(g), count);
      }
    }
  });
  for (uint32_t c = 0; c < grid.columns; ++c) {
    view.below += below[c];
    view.above += above[c];
  }
  for (double p : options.overlay) {
    PercentileLine line;
    line.percentile = p;
    char name[32];
    std::snprintf(name, sizeof name, "p%g", p);
    line.name = name;
    line.values.assign(view.columns, 0);
    for (uint32_t c = 0; c < view.columns; ++c) line.values[c] = grid.Column(c).Percentile(p);
    view.overlay.push_back(std::move(line));
  }
  ColorHeatmap(&view);
  return view;
}

}  // namespace trailmap
