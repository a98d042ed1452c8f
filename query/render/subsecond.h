// Sub-second offset heat map renderers (query/views/subsecond.h): pure functions from a
// SubsecondView to bytes, drawn as FlameScope draws it: column c is second c from the start,
// offsets grow upwards within it (row 0, [0, 20) ms with 50 rows, at the bottom), each cell shaded
// linearly from white (0) through #FF5032 (half the largest count) to #E50914 (the largest).
//
// SVG: one <rect> per non-empty cell with a <title> "second 12, 340-360 ms: 7 samples", axes of
// seconds (bottom) and milliseconds (left). PNG: the same picture, pixels (query/draw/raster).
// JSON: {"view":"subsecond","start_second","rows","row_ms","columns","max_count","samples",
// "idle","untimed","counts":[[column 0's rows from row 0 up], ...]}.
// Text: one line per row, the highest offsets first (as drawn), a character per second from
// " .:-=+*#%@" by count / max, with the row's first millisecond on the left.
#pragma once

#include <string>

#include "core/status.h"
#include "query/draw/palette.h"
#include "query/views/subsecond.h"

namespace trailmap {

struct SubsecondDrawOptions {
  std::string title = "Sub-second offset heat map";
  std::string subtitle;  // e.g. the file name; "" = the sample counts
};

// FlameScope's color of `count` in a view whose largest count is `max`.
Rgb SubsecondColor(uint64_t count, uint64_t max);

std::string RenderSubsecondSvg(const SubsecondView& view, const SubsecondDrawOptions& options = {});
Result<std::string> RenderSubsecondPng(const SubsecondView& view,
                                       const SubsecondDrawOptions& options = {});
std::string RenderSubsecondJson(const SubsecondView& view);
std::string RenderSubsecondText(const SubsecondView& view);

}  // namespace trailmap
