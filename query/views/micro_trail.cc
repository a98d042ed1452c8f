#include "query/views/micro_trail.h"

#include <algorithm>
#include <cmath>

namespace trailmap {

std::vector<MicroTrailCell> SqueezeTrail(const FrequencyTrail& trail, size_t cells) {
  std::vector<MicroTrailCell> out(cells);
  const size_t n = trail.density.size();
  if (n == 0 || cells == 0) return out;
  auto cell_of = [n, cells](uint32_t point) { return static_cast<size_t>(point) * cells / n; };
  // Each run a cell at a time (its points up to the next cell's first, ceil((c + 1) n / cells)),
  // and the square root once per cell: it keeps the order, so the root of the largest density
  // is the largest root. (A division and a root per point were 10% of writing 1,000 trails.)
  for (const auto& [begin, end] : trail.split.lines) {
    for (uint32_t p = begin; p < end;) {
      const size_t c = cell_of(p);
      const auto next =
          static_cast<uint32_t>(std::min<size_t>(end, ((c + 1) * n + cells - 1) / cells));
      double top = out[c].height;
      for (; p < next; ++p) top = std::max(top, trail.density[p]);
      out[c].line = true;
      out[c].height = top;
    }
  }
  for (MicroTrailCell& c : out) c.height = std::sqrt(c.height);
  for (uint32_t p : trail.split.rug) out[cell_of(p)].rug = true;
  return out;
}

std::vector<MicroTrailCell> HistogramMicroTrail(const Histogram& histogram, uint64_t hi,
                                                size_t width) {
  const FrequencyTrail trail =
      ComputeTrail(histogram, 0, std::max<uint64_t>(hi, 1), width * 8, 0.002, -1);
  return SqueezeTrail(trail, width);
}

}  // namespace trailmap
