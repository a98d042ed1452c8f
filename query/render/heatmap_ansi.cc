#include "query/render/heatmap_ansi.h"

#include <algorithm>

#include "core/units.h"
#include "query/draw/axis.h"
#include "query/draw/palette.h"
#include "query/draw/view_text.h"
#include "query/render/heatmap_text.h"
#include "query/render/shades.h"

namespace trailmap {
namespace {

constexpr int kLabelWidth = 8;  // "999.9ms" plus a space

std::string Fg(Rgb c) {
  return "\x1b[38;2;" + std::to_string(c.r) + ";" + std::to_string(c.g) + ";" +
         std::to_string(c.b) + "m";
}
std::string Bg(Rgb c) {
  return "\x1b[48;2;" + std::to_string(c.r) + ";" + std::to_string(c.g) + ";" +
         std::to_string(c.b) + "m";
}
constexpr const char* kReset = "\x1b[0m";

Rgb Color(const HeatmapView& view, int64_t row, uint32_t column) {
  if (row < 0) return Rgb{};
  const size_t i = view.Index(static_cast<uint32_t>(row), column);
  if (view.counts[i] == 0) return Rgb{};
  if (view.groups.empty()) return PaletteColor(view.palette, view.levels[i]);
  // A grouped view: the hue of the group holding most of the cell, faded by its level.
  const auto& parts = view.breakdown[i];
  const auto top = std::max_element(
      parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return FadeToWhite(ViewGroupColor(view, top->first), view.levels[i]);
}

std::string PadLeft(const std::string& s, size_t width) {
  // Labels may hold "µ" (two bytes, one column).
  size_t columns = 0;
  for (unsigned char c : s) columns += (c & 0xC0) != 0x80;
  return columns >= width ? s : std::string(width - columns, ' ') + s;
}

}  // namespace

std::string RenderHeatmapAnsi(const HeatmapView& view, const AnsiOptions& options) {
  std::string out;
  out += HeatmapTitle(view) + "\n" + HeatmapSubtitle(view) + "\n";
  if (const std::string not_drawn = HeatmapNotDrawn(view); !not_drawn.empty()) {
    out += not_drawn + "\n";
  }
  const int64_t lines = (view.rows + 1) / 2;
  std::vector<double> ticks;
  if (view.scale == ValueScale::kLog) {
    // Powers of ten on a log axis.
    for (double p = 1; p <= static_cast<double>(view.ymax); p *= 10) {
      if (p >= static_cast<double>(view.ymin)) ticks.push_back(p);
    }
  } else {
    for (double v : ValueTicks(static_cast<double>(view.ymax - view.ymin),
                               std::max<int>(1, static_cast<int>(lines) / options.label_every),
                               view.unit)) {
      ticks.push_back(static_cast<double>(view.ymin) + v);
    }
  }
  for (int64_t line = 0; line < lines; ++line) {
    // Line 0 is the top: rows (rows-1, rows-2); an odd row count leaves the last lower half empty.
    const int64_t upper = static_cast<int64_t>(view.rows) - 1 - 2 * line;
    const int64_t lower = upper - 1;
    // A round tick value labels the line whose value range holds it (the top line holds ymax).
    std::string label;
    const double high = view.RowHigh(static_cast<uint32_t>(upper));
    const double low = lower >= 0 ? view.RowLow(static_cast<uint32_t>(lower)) : view.RowLow(0);
    for (double v : ticks) {
      if (v > static_cast<double>(view.ymin) && v >= low &&
          (v < high || (line == 0 && v <= high))) {
        label = FormatQuantity(v, view.unit);
      }
    }
    if (line == 0 && label.empty())
      label = FormatQuantity(static_cast<double>(view.ymax), view.unit);
    out += PadLeft(label, kLabelWidth - 1) + "│";
    Rgb fg{0, 0, 0}, bg{0, 0, 0};
    bool first = true;
    for (uint32_t c = 0; c < view.columns; ++c) {
      const Rgb top = Color(view, upper, c);
      const Rgb bottom = Color(view, lower, c);
      if (first || !(top == fg)) out += Fg(top);
      if (first || !(bottom == bg)) out += Bg(bottom);
      fg = top;
      bg = bottom;
      first = false;
      out += "▀";
    }
    out += kReset;
    out += "\n";
  }

  // Time axis: a rule with ticks, then labels placed under them where they fit.
  const int64_t interval = TimeTickInterval(12.0 * view.step);
  std::string rule(view.columns, '-');
  std::string labels(view.columns + 10, ' ');
  size_t free_from = 0;
  for (int64_t t : TimeTicks(view.from, view.to, interval)) {
    const auto col = static_cast<size_t>((t - view.from) / view.step);
    if (col < rule.size()) rule[col] = '+';
    const std::string text = TimeTickLabel(t, interval);
    if (col < free_from || col + text.size() > labels.size()) continue;
    labels.replace(col, text.size(), text);
    free_from = col + text.size() + 2;
  }
  while (!labels.empty() && labels.back() == ' ') labels.pop_back();
  out += PadLeft(FormatQuantity(static_cast<double>(view.ymin), view.unit), kLabelWidth - 1) + "└" +
         rule + "\n";
  out += std::string(kLabelWidth, ' ') + labels + "  UTC\n";

  // Legend.
  if (view.groups.empty()) {
    out += std::string(kLabelWidth, ' ') + "fewer ";
    for (int level = 1; level < kShadeLevels; ++level) out += Fg(PaletteColor(view.palette, level)) + "█";
    out += std::string(kReset) + " more  (" + ColoringLegend(view) + ")\n";
  } else {
    out += std::string(kLabelWidth, ' ');
    const size_t shown = std::min<size_t>(view.groups.size(), 10);
    for (size_t g = 0; g < shown; ++g) {
      out += Fg(ViewGroupColor(view, g)) + "█" + kReset + " " +
             (view.groups[g].empty() ? "(none)" : view.groups[g]) + "  ";
    }
    if (view.groups.size() > shown) {
      out += "+" + std::to_string(view.groups.size() - shown) + " more";
    }
    out += "\n";
  }
  if (!view.missing_shards.empty()) out += MissingShardsText(view) + "\n";
  return out;
}

}  // namespace trailmap
