// The words every heat map renderer shows, written once so SVG, ANSI and JSON agree: the title,
// the subtitle (range, coloring, events, what is not drawn), a cell's hover text and the legend.
// Pure functions of the view; no state.
#pragma once

#include <cstdint>
#include <string>

#include "query/heatmap.h"

namespace trailmap {

// 1234567 → "1,234,567".
std::string FormatCount(uint64_t n);
// A duration in whole seconds for people: 45 → "45s", 300 → "5m", 5400 → "1h30m", 90000 → "1d1h".
std::string FormatSpan(int64_t seconds);

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
