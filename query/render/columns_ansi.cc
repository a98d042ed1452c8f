// RenderColumnsAnsi (query/render/columns.h): the columns view for a truecolor terminal.
#include <algorithm>

#include "core/units.h"
#include "query/draw/axis.h"
#include "query/draw/palette.h"
#include "query/draw/view_text.h"
#include "query/render/columns.h"
#include "query/render/heatmap_text.h"
#include "query/render/shades.h"

namespace trailmap {
namespace {

constexpr int kLabelWidth = 8;  // "999.9ms" plus a space
constexpr const char* kReset = "\x1b[0m";

std::string Fg(Rgb c) {
  return "\x1b[38;2;" + std::to_string(c.r) + ";" + std::to_string(c.g) + ";" +
         std::to_string(c.b) + "m";
}
std::string Bg(Rgb c) {
  return "\x1b[48;2;" + std::to_string(c.r) + ";" + std::to_string(c.g) + ";" +
         std::to_string(c.b) + "m";
}

std::string PadLeft(const std::string& s, size_t width) {
  size_t columns = 0;  // "µ" is two bytes, one column
  for (unsigned char c : s) columns += (c & 0xC0) != 0x80;
  return columns >= width ? s : std::string(width - columns, ' ') + s;
}

Rgb Color(const HeatmapView& grid, int64_t row, uint32_t column) {
  if (row < 0) return Rgb{};
  return ShadeColor(grid.levels[grid.Index(static_cast<uint32_t>(row), column)]);
}

}  // namespace

std::string RenderColumnsAnsi(const ColumnsView& view) {
  const HeatmapView& grid = view.grid;
  std::string out = ColumnsTitle(view) + "\n" + ColumnsSubtitle(view) + "\n";
  if (const std::string not_drawn = HeatmapNotDrawn(grid); !not_drawn.empty()) {
    out += not_drawn + "\n";
  }
  const int64_t lines = (grid.rows + 1) / 2;
  const std::vector<double> ticks =
      ValueTicks(static_cast<double>(grid.ymax - grid.ymin), std::max<int>(2, lines / 4), view.unit);
  for (int64_t line = 0; line < lines; ++line) {
    // Line 0 is the top: rows (rows-1, rows-2); an odd row count leaves the last lower half empty.
    const int64_t upper = static_cast<int64_t>(grid.rows) - 1 - 2 * line;
    const int64_t lower = upper - 1;
    const double high = grid.RowHigh(static_cast<uint32_t>(upper));
    const double low = grid.RowLow(static_cast<uint32_t>(std::max<int64_t>(lower, 0)));
    std::string label;
    for (double tick : ticks) {
      const double v = static_cast<double>(grid.ymin) + tick;
      if (v > 0 && v >= low && (v < high || (line == 0 && v <= high))) {
        label = FormatQuantity(v, view.unit);
      }
    }
    if (line == 0 && label.empty()) label = FormatQuantity(static_cast<double>(grid.ymax), view.unit);
    out += PadLeft(label, kLabelWidth - 1) + "│";
    for (uint32_t c = 0; c < grid.columns; ++c) {
      out += Fg(Color(grid, upper, c)) + Bg(Color(grid, lower, c)) + "▀";
    }
    out += std::string(kReset) + "\n";
  }

  // Host axis: a rule with a tick under each named host, the names where they fit.
  std::string rule(grid.columns, '-');
  std::string names(grid.columns + 24, ' ');
  size_t free_from = 0;
  for (uint32_t c = 0; c < grid.columns; ++c) {
    const std::string& name = view.hosts[c].host;
    if (c < free_from || c + name.size() > names.size()) continue;
    rule[c] = '+';
    names.replace(c, name.size(), name);
    free_from = c + name.size() + 2;
  }
  while (!names.empty() && names.back() == ' ') names.pop_back();
  out += PadLeft(FormatQuantity(static_cast<double>(grid.ymin), view.unit), kLabelWidth - 1) +
         "└" + rule + "\n";
  out += std::string(kLabelWidth, ' ') + names + "\n";
  out += std::string(kLabelWidth, ' ') + "fewer ";
  for (int level = 1; level < kShadeLevels; ++level) out += Fg(ShadeColor(level)) + "█";
  out += std::string(kReset) + " more  (" + ShadingLegend(view) + ")\n";
  if (!view.missing_shards.empty()) {
    out += "shards missing:";
    for (const std::string& m : view.missing_shards) out += " " + m + ";";
    out.back() = '\n';
  }
  return out;
}

}  // namespace trailmap
