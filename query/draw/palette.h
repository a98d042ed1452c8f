// Colors every renderer shares: the RGB value, the hues of groups (--by) and of percentile
// overlays, and "#rrggbb". The shades of a grid view's levels are render/shades.h.
//
// Pure functions; no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace trailmap {

struct Rgb {
  uint8_t r = 255, g = 255, b = 255;
  bool operator==(const Rgb&) const = default;
};

// A distinct, saturated hue for group `index` (cycles after 10).
Rgb GroupColor(size_t index);
// The color of percentile overlay line `index` (p50, p99, ...): dark and unlike the palettes.
Rgb OverlayColor(size_t index);
// "#rrggbb".
std::string HexColor(Rgb color);

}  // namespace trailmap
