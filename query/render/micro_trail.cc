#include "query/render/micro_trail.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "query/draw/svg_text.h"

namespace trailmap {

std::string Sparkline(const std::vector<MicroTrailCell>& cells) {
  static constexpr const char* kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  std::string out;
  for (const MicroTrailCell& c : cells) {
    if (c.line) {
      const int level = std::clamp(static_cast<int>(std::ceil(c.height * 8)) - 1, 0, 7);
      out += kBlocks[level];
    } else if (c.rug) {
      out += "╷";
    } else {
      out += " ";
    }
  }
  return out;
}

std::string Sparkline(const FrequencyTrail& trail, size_t width) {
  return Sparkline(SqueezeTrail(trail, width));
}

std::string MicroTrailSvg(const FrequencyTrail& trail, int width, int height,
                          const std::string& color) {
  const int w = std::max(width, 1), h = std::max(height, 2);
  const std::vector<MicroTrailCell> cells = SqueezeTrail(trail, static_cast<size_t>(w));
  const double tick = std::max(1.0, h * 0.3);
  std::string line, rug;
  bool open = false;
  for (int x = 0; x < w; ++x) {
    const MicroTrailCell& c = cells[static_cast<size_t>(x)];
    if (c.line) {
      const double y = h - 0.5 - c.height * (h - 1);
      line += (open ? " L" : " M") + SvgNumber(x + 0.5) + "," + SvgNumber(y);
      open = true;
      continue;
    }
    open = false;
    if (c.rug) rug += " M" + SvgNumber(x + 0.5) + "," + SvgNumber(h) + " v-" + SvgNumber(tick);
  }
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(w) +
                    "\" height=\"" + std::to_string(h) + "\" viewBox=\"0 0 " + std::to_string(w) +
                    " " + std::to_string(h) + "\">";
  if (!line.empty()) {
    out += "<path d=\"" + line.substr(1) + "\" fill=\"none\" stroke=\"" + color +
           "\" stroke-width=\"1\" stroke-linejoin=\"round\"/>";
  }
  if (!rug.empty()) {
    out += "<path d=\"" + rug.substr(1) + "\" stroke=\"" + color + "\" stroke-width=\"1\"/>";
  }
  return out + "</svg>";
}

}  // namespace trailmap
