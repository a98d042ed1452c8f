// The words every heat map renderer shows, written once so SVG, PNG, ANSI and JSON agree: the
// title, the subtitle (range, coloring, events, what is not drawn), a cell's hover text, the value
// axis' labels and the legend. Pure functions of the view; no state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "query/draw/palette.h"
#include "query/views/heatmap.h"

namespace trailmap {

// A labelled tick of the value axis: where it is (0 at ymin, 1 at ymax) and its label ("20ms").
struct ValueTick {
  double fraction = 0;
  std::string label;
};
// About `target` round ticks over the view's value axis: multiples of a 1, 2 or 5 × 10^k step on
// a linear axis, powers of ten (with 2 and 5 × when there are few decades) on a log axis.
std::vector<ValueTick> ValueAxisTicks(const HeatmapView& view, int target);

// One entry of a grouped view's legend.
struct LegendEntry {
  std::string name;  // "(none)" for events without the field
  Rgb color;
};
// The first `max` groups and their hues, then "+N more (colors repeat)" with no color if cut.
std::vector<LegendEntry> GroupLegend(const HeatmapView& view, size_t max);

// "disk.latency heat map" or "disk.latency heat map by host".
std::string HeatmapTitle(const HeatmapView& view);
// "2026-11-22T16:00:00Z + 5m · 1s per column · rank coloring · 1,234 events".
std::string HeatmapSubtitle(const HeatmapView& view);
// "3 events at or above 20ms not drawn (--clip 0.1%: ...)"; "" when everything is drawn.
std::string HeatmapNotDrawn(const HeatmapView& view);
// A cell's hover text, one fact a line: time range, value range, count, per-group counts.
std::string CellDescription(const HeatmapView& view, uint32_t row, uint32_t column);
// "rank: shade = rank of the cell's count among the 812 non-empty cells" and the linear twin.
std::string ColoringLegend(const HeatmapView& view);
// "shards missing: tcp://a:7401 (no answer within 5000 ms)"; "" when none.
std::string MissingShardsText(const HeatmapView& view);

}  // namespace trailmap
