// Heat map assembly: merged histograms (time columns × groups) into a grid of cells, time on x,
// value on y, each cell holding how many events fell in it and how dark to draw it.
//
// Rows: the y range [ymin, ymax) is cut into `rows` rows, equal in value (--scale linear) or in
// log(value) (--scale log); row 0 holds the smallest values. Resampling from the stored buckets
// (seed 003: the summaries are "resampled to the resolution desired"):
//   - a histogram bucket covers the values [lower, upper + 1) (core/histogram.h); its count is
//     spread over the rows that range overlaps, in proportion to the overlap, as if its events
//     were uniform within it. The parts below ymin count in `below`, those at or above ymax in
//     `above`; neither is drawn, every renderer reports them.
//   - cells hold integers: in each (group, column) the shares are floored and the events left
//     over go one each to the largest remainders (ties to the lower row), so every column's total
//     is exact and `sum(counts) + above + below == total`.
//   Giving each bucket whole to the row of its midpoint would be exact too, but when rows are
//   narrower than buckets (a zoom with --ymax 50us over 1-µs rows, say, where above 128 ns each
//   bucket is 2^(e-6) wide) rows alternately receive one or two bucket midpoints, or none, and
//   the plot shows light and dark stripes that are not in the data. Spreading removes them.
//
// The y range:
//   - by hand (HeatmapOptions::ymin / ymax): [ymin, ymax), redrawn from stored precision;
//   - automatic: ymax = RoundTop(the top of the bucket holding the largest value), so even a lone
//     outlier is drawn whole (seed 003: "outliers are easily identified as occasional pixels at
//     the top of the heat map");
//   - with clip_percent p: ymax = RoundTop(the top of the bucket holding the value at percentile
//     100 - p over all events), so the top p% of events (the outliers that would squash the
//     rest) fall "above".
//   - ymin is 0 unless given, except under --scale log, where it is the power of ten at or below
//     the smallest value (log(0) has no row).
// RoundTop picks the next 1, 2 or 5 × 10^k in the metric's base unit strictly above the value, so
// the axis labels are round.
//
// Coloring (seed 000, Cloud Analytics):
//   - rank (default): the non-zero cells sorted ascending by count; a cell's saturation is its
//     position (1-based) divided by the number of non-zero cells, so the fullest cell is 1.0
//     and a lone outlier is at least 1/n: outliers stay visible. Cells of equal count share the
//     mean of their positions (fractional ranking). Seed 000 does not say how ties rank; giving
//     them the LAST position, as this did first, painted sparse data — where most cells hold one
//     event — almost entirely in the darkest shades (90% ones put every one at level 28 of 31),
//     so the dense band no longer stood out; the mean keeps such cells mid-scale;
//   - linear: saturation = count / the largest count, every non-zero cell at least one shade
//     above the background (query/views/shade_levels.h: ShadeLevel).
//   - per_column: the same, but over each column alone (rank among the column's non-empty
//     cells, or count / the column's largest count), so every non-empty column has a cell of
//     saturation 1 and a quiet second is as readable as a busy one.
// The palette (heat, or false colors to bring out faint detail) only maps levels to colors.
//
// Pure functions of their inputs; HeatmapView is a value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "query/fetch/partials.h"
#include "query/views/shade_levels.h"

namespace trailmap {

enum class Coloring { kRank, kLinear };
const char* ColoringName(Coloring coloring);
Result<Coloring> ParseColoring(std::string_view text);

// What --select a,b does to a grouped view:
//   kHue (--select alone): the chosen groups keep their own hues, every other group is merged
//     into one group "other" (grey), so a cell's blend shows the chosen values' share of it;
//   kIsolate (--isolate): only the chosen groups are drawn;
//   kExclude (--exclude): only the groups not chosen are drawn, each with its own hue.
// Events of groups left out count in HeatmapView::excluded, not in total.
enum class Selection { kHue, kIsolate, kExclude };

enum class ValueScale { kLinear, kLog };
const char* ValueScaleName(ValueScale scale);
Result<ValueScale> ParseValueScale(std::string_view text);

struct HeatmapOptions {
  uint32_t rows = 50;       // rows of the value axis, at least 1
  uint64_t ymin = 0;        // bottom of the value axis in the base unit; 0 = from 0 (or automatic
                            // under a log scale)
  uint64_t ymax = 0;        // top of the value axis in the base unit (exclusive); 0 = automatic
  double clip_percent = 0;  // with automatic ymax: keep the top clip_percent % of events above
  ValueScale scale = ValueScale::kLinear;
  Coloring coloring = Coloring::kRank;
  bool per_column = false;  // saturation within each column instead of over the whole view
  Palette palette = Palette::kHeat;
  std::vector<double> overlay;  // percentiles (0-100] to compute per column: {50, 99}
  // With a grouped grid (--by): the chosen group names and what to do with them (see Selection).
  std::vector<std::string> select;
  Selection selection = Selection::kHue;
};

// A percentile overlay line: the column's nearest-rank percentile (core/histogram.h) of all
// events in it, drawn or not; 0 for an empty column.
struct PercentileLine {
  std::string name;  // "p50", "p99.9"
  double percentile = 0;
  std::vector<uint64_t> values;  // [column]
};

// How a time range is cut into columns.
struct ColumnPlan {
  uint32_t step = 1;     // seconds per column, at least 1
  uint32_t columns = 0;  // ceil((to - plan.from) / step)
  int64_t from = 0;      // where the first column begins: `from`, or after it when aligned
};

// The smallest step of at least `at_least` seconds that the stored resolutions serve exactly:
// 1, 2, 5, 10, 20 or 30 s, 1, 2, 5, 10, 20 or 30 min, 1, 2, 3, 6 or 12 h, then whole days. Each
// is a multiple of the 1 s, 10 s, 1 min or 10 min rollup (aggregator/store/keys.h) that
// StoredResolutionOf names, so a column starting on a multiple of it reads whole buckets.
uint32_t RollupStep(uint64_t at_least);
// The coarsest stored resolution (1, 10, 60 or 600 s) that divides `step`.
uint32_t StoredResolutionOf(uint32_t step);

// Plans the columns for [from, to): `step` seconds per column when step > 0; else about `cols`
// columns when cols > 0; else as many as fit in `max_columns` (120 for a terminal, 600 for SVG),
// one second per column when the range is short enough, with a RollupStep and the first column
// moved on to a multiple of its stored resolution (less than one column is left out), so every
// column reads whole rollup buckets (a week at 600 columns: 20-minute columns of two `hist_600s`
// keys each, not 1,008 seconds read from four families). Refuses an empty range.
Result<ColumnPlan> PlanColumns(int64_t from, int64_t to, uint32_t cols, uint32_t step,
                               uint32_t max_columns);

// The smallest 1, 2 or 5 × 10^k strictly greater than `value` (RoundTop(0) = 1,
// RoundTop(999) = 1000, RoundTop(1000) = 2000).
uint64_t RoundTop(uint64_t value);

struct HeatmapView {
  std::string metric;
  MetricKind kind = MetricKind::kLatency;
  std::string unit = "ns";
  int64_t from = 0;  // column c covers [from + c*step, from + (c+1)*step)
  int64_t to = 0;
  uint32_t step = 1;
  uint32_t rows = 0;
  uint32_t columns = 0;
  uint64_t ymin = 0;  // row r covers [RowLow(r), RowHigh(r)) within [ymin, ymax)
  uint64_t ymax = 1;
  bool ymax_auto = true;
  double clip_percent = 0;
  ValueScale scale = ValueScale::kLinear;
  Coloring coloring = Coloring::kRank;
  bool per_column = false;
  Palette palette = Palette::kHeat;
  std::vector<double> row_bounds;  // rows + 1 bounds; empty = linear from ymin to ymax
  std::vector<PercentileLine> overlay;

  std::vector<uint64_t> counts;    // [row * columns + column]
  std::vector<double> saturation;  // same layout; 0 for empty cells
  std::vector<uint8_t> levels;  // same layout; query/views/shade_levels.h shade level, 0 for empty
  uint64_t total = 0;              // all events in the range, drawn or not
  uint64_t above = 0;              // events at or above ymax, not drawn
  uint64_t below = 0;              // events below ymin, not drawn
  uint64_t excluded = 0;           // events of groups --isolate / --exclude left out
  std::vector<std::string> select;  // the --select names, in the order given
  Selection selection = Selection::kHue;
  uint64_t max_count = 0;          // the fullest cell
  uint64_t nonzero_cells = 0;

  // Set when the query was grouped (--by): the group names, and for each non-empty cell (same
  // layout as counts) the groups in it and their counts, in group order.
  std::string group_by;
  std::vector<std::string> groups;
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> breakdown;

  // Shards that did not answer, "endpoint: reason", set by the caller so every format says the
  // view is partial.
  std::vector<std::string> missing_shards;
  std::string where;  // the predicate the aggregators applied ("" = none), for the title

  size_t Index(uint32_t row, uint32_t column) const { return size_t{row} * columns + column; }
  uint64_t count(uint32_t row, uint32_t column) const { return counts[Index(row, column)]; }
  // The lowest value of row r and the (exclusive) top of it, in the base unit.
  double RowLow(uint32_t row) const;
  double RowHigh(uint32_t row) const;
  int64_t ColumnStart(uint32_t column) const { return from + int64_t{column} * step; }
  int64_t ColumnEnd(uint32_t column) const { return std::min(to, ColumnStart(column) + step); }
};

// Assembles the view from a merged grid (query/fetch/partials.h).
Result<HeatmapView> AssembleHeatmap(const MergedGrid& grid, const HeatmapOptions& options);

// Fills view->saturation and view->levels from view->counts by view->coloring and
// view->per_column. Exposed for tests and for renderers that recolor a view.
void ColorHeatmap(HeatmapView* view);

// Cell details (--at): the events of one group in row `row` of the view, for each group of
// `column_grid` (a one-column grid of the same metric and column, grouped by host, say), spread
// over the view's rows exactly as AssembleHeatmap spreads them. Groups with no events in the row
// are left out; largest first. The counts add up to the cell's count when the view was grouped
// the same way; otherwise each group's share is rounded on its own and the sum may differ from
// the cell by a few events.
std::vector<std::pair<std::string, uint64_t>> CellGroups(const MergedGrid& column_grid,
                                                         const HeatmapView& view, uint32_t row);
// The row holding value v, or -1 when v is outside [ymin, ymax).
int64_t RowOf(const HeatmapView& view, double v);

// Where value v sits on the y axis: 0 at ymin, 1 at ymax, linear or log as the rows are (outside
// [0, 1] when v is outside the range).
double ValueFraction(const HeatmapView& view, double v);

// The side panel (seed 003, ZFS Analytics): the average events per second of each row over the
// view's time range, and of all drawn rows.
std::vector<double> RowEventsPerSecond(const HeatmapView& view);
double RangeEventsPerSecond(const HeatmapView& view);

}  // namespace trailmap
