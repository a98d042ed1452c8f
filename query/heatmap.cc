#include "query/heatmap.h"

#include <algorithm>

#include "query/palette.h"

namespace trailmap {
namespace {

// The midpoint of the bucket holding the highest event left after dropping the top
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
      top = BucketMidpoint(index);
      found = true;
    }
  });
  return top;
}

}  // namespace

const char* ColoringName(Coloring coloring) {
  return coloring == Coloring::kLinear ? "linear" : "rank";
}

Result<Coloring> ParseColoring(std::string_view text) {
  if (text == "rank") return Coloring::kRank;
  if (text == "linear") return Coloring::kLinear;
  return Status::InvalidArgument("unknown coloring \"" + std::string(text) +
                                 "\": use rank (outliers visible) or linear (shade ~ count)");
}

Result<ColumnPlan> PlanColumns(int64_t from, int64_t to, uint32_t cols, uint32_t step,
                               uint32_t max_columns) {
  if (to <= from) {
    return Status::InvalidArgument("empty time range: --from must be before --to");
  }
  const uint64_t range = static_cast<uint64_t>(to - from);
  ColumnPlan plan;
  if (step > 0) {
    plan.step = step;
  } else {
    const uint64_t want = cols > 0 ? cols : std::max<uint32_t>(max_columns, 1);
    plan.step = static_cast<uint32_t>(std::max<uint64_t>(1, (range + want - 1) / want));
  }
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
  return static_cast<double>(ymin) + static_cast<double>(ymax - ymin) * row / rows;
}

double HeatmapView::RowHigh(uint32_t row) const { return RowLow(row + 1); }

void ColorHeatmap(HeatmapView* view) {
  const size_t n = view->counts.size();
  view->saturation.assign(n, 0);
  view->levels.assign(n, 0);
  std::vector<uint64_t> sorted;
  for (uint64_t c : view->counts) {
    if (c) sorted.push_back(c);
  }
  std::sort(sorted.begin(), sorted.end());
  view->nonzero_cells = sorted.size();
  view->max_count = sorted.empty() ? 0 : sorted.back();
  for (size_t i = 0; i < n; ++i) {
    const uint64_t c = view->counts[i];
    if (c == 0) continue;
    double s = 0;
    if (view->coloring == Coloring::kRank) {
      // Position of the last cell with this count, 1-based.
      const auto last = std::upper_bound(sorted.begin(), sorted.end(), c) - sorted.begin();
      s = static_cast<double>(last) / static_cast<double>(sorted.size());
    } else {
      s = static_cast<double>(c) / static_cast<double>(view->max_count);
    }
    view->saturation[i] = s;
    view->levels[i] = static_cast<uint8_t>(ShadeLevel(s, true));
  }
}

Result<HeatmapView> AssembleHeatmap(const MergedGrid& grid, const HeatmapOptions& options) {
  if (options.rows == 0) return Status::InvalidArgument("--rows must be at least 1");
  HeatmapView view;
  view.metric = grid.metric;
  view.kind = grid.kind;
  view.unit = grid.unit;
  view.from = grid.from;
  view.to = grid.to;
  view.step = grid.step;
  view.rows = options.rows;
  view.columns = grid.columns;
  view.coloring = options.coloring;
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
    view.ymax = RoundTop(BucketMidpoint(BucketIndex(total.max())));
  }

  const bool grouped = !grid.group_by.empty();
  if (grouped) {
    view.group_by = grid.group_by;
    view.groups = grid.groups;
  }
  const size_t cells = size_t{view.rows} * view.columns;
  view.counts.assign(cells, 0);
  if (grouped) view.breakdown.assign(cells, {});
  const auto span = static_cast<uint128_t>(view.ymax - view.ymin);
  for (size_t g = 0; g < grid.groups.size(); ++g) {
    for (uint32_t c = 0; c < grid.columns; ++c) {
      grid.cells[g][c].ForEachBucket([&](uint32_t index, uint64_t count) {
        const uint64_t v = BucketMidpoint(index);
        if (v >= view.ymax) {
          view.above += count;
          return;
        }
        if (v < view.ymin) return;  // ymin is 0 today: never taken
        const auto row =
            static_cast<uint32_t>(static_cast<uint128_t>(v - view.ymin) * view.rows / span);
        const size_t i = view.Index(row, c);
        view.counts[i] += count;
        if (grouped) {
          auto& parts = view.breakdown[i];
          if (!parts.empty() && parts.back().first == g) {
            parts.back().second += count;
          } else {
            parts.emplace_back(static_cast<uint32_t>(g), count);
          }
        }
      });
    }
  }
  ColorHeatmap(&view);
  return view;
}

}  // namespace trailmap
