#include "query/view_text.h"

#include <algorithm>
#include <vector>

#include "core/timespec.h"
#include "core/units.h"

namespace trailmap {

std::string FormatCount(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string FormatSpan(int64_t seconds) {
  if (seconds < 60) return std::to_string(seconds) + "s";
  struct Part {
    int64_t size;
    const char* name;
  };
  static constexpr Part kParts[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
  std::string out;
  int parts = 0;
  for (const Part& p : kParts) {
    if (seconds >= p.size && parts < 2) {
      out += std::to_string(seconds / p.size) + p.name;
      seconds %= p.size;
      ++parts;
    } else if (parts > 0) {
      ++parts;  // only adjacent units: "1d1h", never "1d5s"
    }
  }
  return out;
}

std::string HeatmapTitle(const HeatmapView& view) {
  std::string title = view.metric + " heat map";
  if (!view.group_by.empty()) title += " by " + view.group_by;
  return title;
}

std::string HeatmapSubtitle(const HeatmapView& view) {
  std::string s = FormatRfc3339(view.from) + " + " + FormatSpan(view.to - view.from) + " · " +
                  FormatSpan(view.step) + " per column · " + ColoringName(view.coloring) +
                  " coloring · " + FormatCount(view.total) + " events";
  return s;
}

std::string HeatmapNotDrawn(const HeatmapView& view) {
  std::string s;
  if (view.above > 0) {
    s = FormatCount(view.above) + (view.above == 1 ? " event" : " events") + " at or above " +
        FormatQuantity(static_cast<double>(view.ymax), view.unit) + " not drawn";
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
