// The colors of a grid view's cells (heat map, columns), drawn alike in SVG, PNG, ANSI and the
// JSON's "palette". Two palettes for the shade levels (views/shade_levels.h):
//   - heat (default): from the white background through pale yellow, yellow and orange to dark
//     red (the look of Gregg's trace2heatmap and Cloud Analytics); lightness tracks the count,
//     so shades can be compared;
//   - false: false colors (seed 003) running through strongly different hues — blue, cyan,
//     green, yellow, orange, red, maroon — so even the faintest level is a saturated color far
//     from the background and neighbouring levels differ in hue: faint detail (the rare slow
//     events) stands out, at the cost that shades no longer read as "more" or "less".
//
// A grouped heat map (--by) colors each cell by hue instead: every group has a hue from
// GroupColor (draw/palette.h), a cell's hue is the blend of its groups' hues weighted by their
// share of its count, and its level sets how far the color is from white.
//
// Pure functions; no state.
#pragma once

#include <cstddef>

#include "query/draw/palette.h"
#include "query/views/heatmap.h"
#include "query/views/shade_levels.h"

namespace trailmap {

// The color of a level in the heat palette: white for 0, dark red for 31.
Rgb ShadeColor(int level);
// The color of a level in `palette`: white for 0, the palette's darkest for 31.
Rgb PaletteColor(Palette palette, int level);
// `color` faded towards white: level 31 is `color` itself, level 1 is nearly white.
Rgb FadeToWhite(Rgb color, int level);

// The hue of group g: GroupColor(g), except the merged "other" group of a --select view, grey.
Rgb ViewGroupColor(const HeatmapView& view, size_t g);
// The fill of non-empty cell i: its level in the view's palette, or in a grouped view the blend
// of its groups' hues (weighted by their share of the cell) faded by its level.
Rgb CellColor(const HeatmapView& view, size_t i);

}  // namespace trailmap
