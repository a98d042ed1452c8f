#include "query/render/heatmap_text.h"

#include <algorithm>
#include <cmath>

#include "core/timespec.h"
#include "core/units.h"
#include "query/draw/axis.h"
#include "query/draw/view_text.h"
#include "query/render/shades.h"

namespace trailmap {

std::vector<ValueTick> ValueAxisTicks(const HeatmapView& view, int target) {
  std::vector<ValueTick> ticks;
  const double lo = static_cast<double>(view.ymin), hi = static_cast<double>(view.ymax);
  if (view.scale == ValueScale::kLog) {
    const double decades = std::log10(hi / lo);
    for (double p = std::pow(10.0, std::floor(std::log10(lo))); p <= hi * (1 + 1e-9); p *= 10) {
      for (double m : {1.0, 2.0, 5.0}) {
        if (m > 1 && decades > 3) continue;
        const double v = p * m;
        if (v < lo * (1 - 1e-9) || v > hi * (1 + 1e-9)) continue;
        ticks.push_back({ValueFraction(view, v), FormatQuantity(v, view.unit)});
      }
    }
    return ticks;
  }
  const double step = NiceStep((hi - lo) / std::max(target, 1), view.unit);
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi * (1 + 1e-9); v += step) {
    ticks.push_back({ValueFraction(view, v), FormatQuantity(v, view.unit)});
  }
  return ticks;
}

std::vector<LegendEntry> GroupLegend(const HeatmapView& view, size_t max) {
  std::vector<LegendEntry> entries;
  const size_t shown = std::min(view.groups.size(), max);
  for (size_t g = 0; g < shown; ++g) {
    entries.push_back(
        {view.groups[g].empty() ? "(none)" : view.groups[g], ViewGroupColor(view, g)});
  }
  if (view.groups.size() > shown) {
    entries.push_back(
        {"+" + std::to_string(view.groups.size() - shown) + " more (colors repeat)", Rgb{}});
  }
  return entries;
}

std::string HeatmapTitle(const HeatmapView& view) {
  std::string title = view.metric + " heat map";
  if (!view.group_by.empty()) title += " by " + view.group_by;
  if (!view.select.empty()) {
    std::string names;
    for (const std::string& n : view.select) names += (names.empty() ? "" : ", ") + n;
    title += view.selection == Selection::kIsolate   ? " (only " + names + ")"
             : view.selection == Selection::kExclude ? " (all but " + names + ")"
                                                     : " (" + names + " and other)";
  }
  if (!view.where.empty()) {
    title += " where " + (view.where.size() <= 60 ? view.where : view.where.substr(0, 57) + "...");
  }
  return title;
}

std::string HeatmapSubtitle(const HeatmapView& view) {
  std::string s = FormatRfc3339(view.from) + " + " + FormatSpan(view.to - view.from) + " · " +
                  FormatSpan(view.step) + " per column · " +
                  (view.per_column ? "per-column " : "") + ColoringName(view.coloring) +
                  " coloring" + (view.palette == Palette::kFalse ? ", false colors" : "") +
                  (view.scale == ValueScale::kLog ? " · log scale" : "") + " · " +
                  FormatCount(view.total) + " " + CountNoun(view.kind, view.total);
  return s;
}

std::string HeatmapNotDrawn(const HeatmapView& view) {
  std::string s;
  if (view.above > 0) {
    s = FormatCount(view.above) + (view.above == 1 ? " event" : " events") + " at or above " +
        FormatQuantity(static_cast<double>(view.ymax), view.unit) + " not drawn";
  }
  if (view.below > 0) {
    s += (s.empty() ? "" : "; ") + FormatCount(view.below) +
         (view.below == 1 ? " event" : " events") + " below " +
         FormatQuantity(static_cast<double>(view.ymin), view.unit) + " not drawn";
  }
  if (view.excluded > 0) {
    s += (s.empty() ? "" : "; ") + FormatCount(view.excluded) + " events of other " +
         view.group_by + (view.group_by == "host" ? "s" : " values") + " left out";
  }
  if (view.clip_percent > 0) {
    s += (s.empty() ? "" : " ") + std::string("(--clip ") + FormatSignificant(view.clip_percent) +
         "%: the top events are left out of the y range)";
  }
  return s;
}

std::string CellDescription(const HeatmapView& view, uint32_t row, uint32_t column) {
  const size_t i = view.Index(row, column);
  std::string s = FormatClock(view.ColumnStart(column)) + "–" +
                  FormatClock(view.ColumnEnd(column)) + " UTC\n" +
                  FormatQuantity(view.RowLow(row), view.unit) + " to " +
                  FormatQuantity(view.RowHigh(row), view.unit) + "\n" +
                  FormatCount(view.counts[i]) + (view.counts[i] == 1 ? " event" : " events");
  if (!view.breakdown.empty() && !view.breakdown[i].empty()) {
    std::vector<std::pair<uint32_t, uint64_t>> parts = view.breakdown[i];
    std::stable_sort(parts.begin(), parts.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    const size_t shown = std::min<size_t>(parts.size(), 8);
    for (size_t k = 0; k < shown; ++k) {
      const std::string& name = view.groups[parts[k].first];
      s += "\n" + (name.empty() ? std::string("(none)") : name) + ": " +
           FormatCount(parts[k].second);
    }
    if (parts.size() > shown) s += "\n+" + std::to_string(parts.size() - shown) + " more";
  }
  return s;
}

std::string ColoringLegend(const HeatmapView& view) {
  if (view.per_column) {
    return view.coloring == Coloring::kLinear
               ? "per column, linear: shade = count / the column's fullest cell"
               : "per column, rank: shade = rank of the count among the column's non-empty cells";
  }
  if (view.coloring == Coloring::kLinear) {
    return "linear: shade = count / " + FormatCount(view.max_count) + ", the fullest cell";
  }
  return "rank: shade = rank of the count among " + FormatCount(view.nonzero_cells) +
         " non-empty cells";
}

std::string MissingShardsText(const HeatmapView& view) {
  if (view.missing_shards.empty()) return "";
  std::string s = "shards missing: ";
  for (size_t i = 0; i < view.missing_shards.size(); ++i) {
    if (i) s += "; ";
    s += view.missing_shards[i];
  }
  return s;
}

}  // namespace trailmap
