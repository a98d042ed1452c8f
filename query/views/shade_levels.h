// Shade levels: how a grid view (heat map, columns) quantizes its cells' saturations, and which
// palette it asks the renderers to color the levels with (render/shades.h has the colors).
//
// Saturations in [0, 1] are quantized into kShadeLevels levels: level 0 is the background and
// only empty cells have it; a non-zero cell gets level max(1, ceil(saturation * 31)), so it is
// always at least one shade above the background and the fullest cell is level 31. 31 shades are
// more than the eye separates in a heat map and few enough that neighbouring cells of nearly
// equal counts look alike.
//
// Pure functions; no state.
#pragma once

#include <string_view>

#include "core/status.h"

namespace trailmap {

inline constexpr int kShadeLevels = 32;  // level 0 = background, 1..31 = non-zero cells

// The colors the levels are drawn in (render/shades.h): heat (lightness tracks the count) or
// false colors (faint detail stands out).
enum class Palette { kHeat, kFalse };
const char* PaletteName(Palette palette);
Result<Palette> ParsePalette(std::string_view text);

// The level of a saturation: 0 for an empty cell (nonzero == false), else 1..31.
int ShadeLevel(double saturation, bool nonzero);

}  // namespace trailmap
