#include "query/render/shades.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace trailmap {
namespace {

// Stops from the lightest non-zero shade to the darkest; levels interpolate between them.
constexpr Rgb kStops[] = {
    {255, 243, 176},  // pale yellow: clearly off-white, the rarest cells
    {255, 214, 74},   // yellow
    {250, 150, 30},   // orange
    {220, 70, 20},    // red-orange
    {128, 0, 0},      // dark red: the fullest cells
};

// The false-color stops, faintest first.
constexpr Rgb kFalseStops[] = {
    {40, 60, 200},  // blue: the rarest cells, far from white
    {0, 150, 240},  // azure
    {0, 190, 170},  // teal
    {60, 170, 40},  // green
    {225, 205, 0},  // yellow
    {250, 130, 0},  // orange
    {215, 25, 25},  // red
    {100, 0, 50},   // maroon: the fullest cells
};

uint8_t Mix(uint8_t a, uint8_t b, double t) {
  return static_cast<uint8_t>(std::lround(a + (b - a) * t));
}

template <size_t N>
Rgb Ramp(const Rgb (&stops)[N], int level) {
  if (level <= 0) return Rgb{};
  const int top = kShadeLevels - 1;
  const double t = static_cast<double>(std::min(level, top) - 1) / (top - 1);
  const double pos = t * (N - 1);
  const size_t i = std::min(static_cast<size_t>(pos), N - 2);
  const double f = pos - static_cast<double>(i);
  const Rgb& a = stops[i];
  const Rgb& b = stops[i + 1];
  return Rgb{Mix(a.r, b.r, f), Mix(a.g, b.g, f), Mix(a.b, b.b, f)};
}

}  // namespace

Rgb ShadeColor(int level) { return Ramp(kStops, level); }

Rgb PaletteColor(Palette palette, int level) {
  return palette == Palette::kFalse ? Ramp(kFalseStops, level) : Ramp(kStops, level);
}

Rgb FadeToWhite(Rgb color, int level) {
  if (level <= 0) return Rgb{};
  // Level 1 keeps 15% of the color so the rarest cell still shows its hue.
  const double keep = 0.15 + 0.85 * static_cast<double>(level - 1) / (kShadeLevels - 2);
  return Rgb{Mix(255, color.r, keep), Mix(255, color.g, keep), Mix(255, color.b, keep)};
}

Rgb ViewGroupColor(const HeatmapView& view, size_t g) {
  if (!view.select.empty() && view.selection == Selection::kHue && g == view.select.size()) {
    return Rgb{150, 150, 150};
  }
  return GroupColor(g);
}

Rgb CellColor(const HeatmapView& view, size_t i) {
  const int level = view.levels[i];
  if (view.groups.empty() || view.breakdown.empty()) return PaletteColor(view.palette, level);
  double r = 0, g = 0, b = 0;
  const double total = static_cast<double>(view.counts[i]);
  for (const auto& [group, count] : view.breakdown[i]) {
    const Rgb hue = ViewGroupColor(view, group);
    const double w = static_cast<double>(count) / total;
    r += hue.r * w;
    g += hue.g * w;
    b += hue.b * w;
  }
  const Rgb blend{static_cast<uint8_t>(r + 0.5), static_cast<uint8_t>(g + 0.5),
                  static_cast<uint8_t>(b + 0.5)};
  return FadeToWhite(blend, level);
}

}  // namespace trailmap
