// Micro frequency trails: a trail small enough to sit in a table row (seed 002: "micro frequency
// trails ... included along with server details, like sparklines").
//
// Both take a FrequencyTrail (query/views/trails.h) and squeeze its points into cells: a cell's height
// is the largest √density among its points (a root, as the waterfall draws by default: a disk
// band beside a cache-hit spike stays visible) (a maximum keeps a narrow mode visible where a mean
// would thin it out). A cell holding line points draws the line at that height; a cell holding
// only rug points draws a tick; an empty cell draws nothing.
//
// Pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "core/histogram.h"
#include "query/views/trails.h"

namespace trailmap {

// A text sparkline of `width` characters: "▁▂▃▄▅▆▇█" by height (▁ is the lowest line level:
// √density up to 1/8), "╷" for a cell of rug ticks only, " " for an
// empty cell. The rows of `trailmap stats` show it.
std::string Sparkline(const FrequencyTrail& trail, size_t width);

// A tiny standalone SVG (width × height px, no text): the line as one path, the rug ticks as
// short marks at the bottom, in `color` ("#rrggbb") on a transparent background. Inline it in a
// page or a table cell.
std::string MicroTrailSvg(const FrequencyTrail& trail, int width, int height,
                          const std::string& color = "#202020");

// The trail `trailmap stats` puts in its rows: `histogram` over [0, hi) at 8 points a
// character, then Sparkline(width).
std::string HistogramSparkline(const Histogram& histogram, uint64_t hi, size_t width);

}  // namespace trailmap
