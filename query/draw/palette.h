// Palette: the colors of a heat map's shade levels. Two palettes:
//   - heat (default): from the white background through pale yellow, yellow and orange to dark
//     red (the look of Gregg's trace2heatmap and Cloud Analytics); lightness tracks the count,
//     so shades can be compared;
//   - false: false colors (seed 003) running through strongly different hues — blue, cyan,
//     green, yellow, orange, red, maroon — so even the faintest level is a saturated color far
//     from the background and neighbouring levels differ in hue: faint detail (the rare slow
//     events) stands out, at the cost that shades no longer read as "more" or "less".
//
// Saturations in [0, 1] are quantized into kShadeLevels levels: level 0 is the background and
// only empty cells have it; a non-zero cell gets level max(1, ceil(saturation * 31)), so it is
// always at least one shade above the background and the fullest cell is level 31. 31 shades are
// more than the eye separates in a heat map and few enough that neighbouring cells of nearly
// equal counts look alike.
//
// A grouped heat map (--by) colors each cell by hue instead: every group has a hue from
// GroupColor, a cell's hue is the blend of its groups' hues weighted by their share of its count,
// and its level sets how far the color is from white.
//
// Pure functions; no state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace trailmap {

inline constexpr int kShadeLevels = 32;  // level 0 = background, 1..31 = non-zero cells

struct Rgb {
  uint8_t r = 255, g = 255, b = 255;
  bool operator==(const Rgb&) const = default;
};

enum class Palette { kHeat, kFalse };
const char* PaletteName(Palette palette);
Result<Palette> ParsePalette(std::string_view text);

// The level of a saturation: 0 for an empty cell (nonzero == false), else 1..31.
int ShadeLevel(double saturation, bool nonzero);
// The color of a level in the heat palette: white for 0, dark red for 31.
Rgb ShadeColor(int level);
// The color of a level in `palette`: white for 0, the palette's darkest for 31.
Rgb PaletteColor(Palette palette, int level);
// A distinct, saturated hue for group `index` (cycles after 10).
Rgb GroupColor(size_t index);
// `color` faded towards white: level 31 is `color` itself, level 1 is nearly white.
Rgb FadeToWhite(Rgb color, int level);
// The color of percentile overlay line `index` (p50, p99, ...): dark and unlike the palettes.
Rgb OverlayColor(size_t index);
// "#rrggbb".
std::string HexColor(Rgb color);

}  // namespace trailmap
