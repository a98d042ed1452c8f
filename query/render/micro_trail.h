// A micro frequency trail (views/micro_trail.h) drawn: as a text sparkline for a table row or a
// JSON value, or as a tiny standalone SVG to inline in a page or a table cell. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "query/views/micro_trail.h"

namespace trailmap {

// A text sparkline, a character a cell: "▁▂▃▄▅▆▇█" by height (▁ is the lowest line level:
// √density up to 1/8), "╷" for a cell of rug ticks only, " " for an empty cell. The rows of
// `trailmap stats` show it.
std::string Sparkline(const std::vector<MicroTrailCell>& cells);
// `trail` squeezed into `width` cells, as a sparkline.
std::string Sparkline(const FrequencyTrail& trail, size_t width);

// `trail` as an SVG of width × height px, no text: the line as one path, the rug ticks as short
// marks at the bottom, in `color` ("#rrggbb") on a transparent background.
std::string MicroTrailSvg(const FrequencyTrail& trail, int width, int height,
                          const std::string& color = "#202020");

}  // namespace trailmap
