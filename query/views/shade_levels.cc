#include "query/views/shade_levels.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace trailmap {

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

}  // namespace trailmap
