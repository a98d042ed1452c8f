#include "query/draw/palette.h"

#include <iterator>

namespace trailmap {
namespace {

// Categorical hues for groups, chosen to be told apart and to stay visible when faded.
constexpr Rgb kGroupColors[] = {
    {31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
    {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207},
};

}  // namespace

Rgb GroupColor(size_t index) { return kGroupColors[index % std::size(kGroupColors)]; }

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
