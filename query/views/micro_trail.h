// Micro frequency trails: a trail small enough to sit in a table row (seed 002: "micro frequency
// trails ... included along with server details, like sparklines").
//
// A FrequencyTrail (query/views/trails.h) is squeezed into cells: a cell's height
// is the largest √density among its points (a root, as the waterfall draws by default: a disk
// band beside a cache-hit spike stays visible) (a maximum keeps a narrow mode visible where a mean
// would thin it out). A cell holding line points draws the line at that height; a cell holding
// only rug points draws a tick; an empty cell draws nothing.
//
// The squeezed cells are the view; render/micro_trail.h draws them as a text sparkline (the rows of
// `trailmap stats`, a trail's JSON) or a tiny SVG. Pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "core/histogram.h"
#include "query/views/trails.h"

namespace trailmap {

// One cell of a squeezed trail.
struct MicroTrailCell {
  bool line = false;
  bool rug = false;
  double height = 0;  // the root of the largest line density in the cell, 0..1
};

// `trail`'s points in `cells` cells.
std::vector<MicroTrailCell> SqueezeTrail(const FrequencyTrail& trail, size_t cells);

// The micro trail `trailmap stats` puts in its rows: `histogram` over [0, hi) at 8 points a cell,
// squeezed into `width` cells.
std::vector<MicroTrailCell> HistogramMicroTrail(const Histogram& histogram, uint64_t hi,
                                                size_t width);

}  // namespace trailmap
