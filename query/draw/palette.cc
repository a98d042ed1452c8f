#include "query/draw/palette.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

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
    {40, 60, 200},   // blue: the rarest cells, far from white
    {0, 150, 240},   // azure
    {0, 190, 170},   // teal
    {60, 170, 40},   // green
    {225, 205, 0},   // yellow
    {250, 130, 0},   // orange
    {215, 25, 25},   // red
    {100, 0, 50},    // maroon: the fullest cells
};

// Categorical hues for groups, chosen to be told apart and to stay visible when faded.
constexpr Rgb kGroupColors[] = {
    {31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
    {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207},
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

int ShadeLevel(double saturation, bool nonzero) {
  if (!nonzero) return 0;
  const int top = kShadeLevels - 1;
  const int level = static_cast<int>(std::ceil(std::clamp(saturation, 0.0, 1.0) * top - 1e-9));
  return std::clamp(level, 1, top);
}

const char* PaletteName(Palette palette) { return palette == Palette::kFalse ? "false" : "heat"; }

Result<Palette> ParsePalette(std::string_view text) {
  if (text == "heat") return Palette::kHeat;
  if (text == "false") return Palette::kFalse;
  return Status::InvalidArgument("unknown palette \"" + std::string(text) +
                                 "\": use heat (shade ~ count) or false (faint detail stands out)");
}

Rgb ShadeColor(int level) { return Ramp(kStops, level); }

Rgb PaletteColor(Palette palette, int level) {
  return palette == Palette::kFalse ? Ramp(kFalseStops, level) : Ramp(kStops, level);
}

Rgb GroupColor(size_t index) { return kGroupColors[index % std::size(kGroupColors)]; }

Rgb FadeToWhite(Rgb color, int level) {
  if (level <= 0) return Rgb{};
  // Level 1 keeps 15% of the color so the rarest cell still shows its hue.
  const double keep = 0.15 + 0.85 * static_cast<double>(level - 1) / (kShadeLevels - 2);
  return Rgb{Mix(255, color.r, keep), Mix(255, color.g, keep), Mix(255, color.b, keep)};
}

Rgb OverlayColor(size_t index) {
  static constexpr Rgb kOverlay[] = {{0, 0, 0}, {30, 60, 200}, {0, 120, 60}, {150, 0, 150}};
  return kOverlay[index % std::size(kOverlay)];
}

std::string HexColor(Rgb color) {
  // By hand, not snprintf: an SVG heat map writes one per cell (100,000 and more).
  constexpr char kDigits[] = "0123456789abcdef";
  const uint8_t parts[3] = {color.r, color.g, color.b};
  std::string out(7, '#');
  for (int i = 0; i < 3; ++i) {
    out[1 + 2 * i] = kDigits[parts[i] >> 4];
    out[2 + 2 * i] = kDigits[parts[i] & 15];
  }
  return out;
}

}  // namespace trailmap
