// Flame graph renderers: pure functions from a FlameTree to bytes.
//
// SVG, laid out and behaving as flamegraph.pl's so its users feel at home: one <g> per frame
// with a <title> tooltip "name (N samples, P%)", a <rect> whose width is the frame's total
// samples and a <text> label cut to fit ("foo_ba.."); root "all" at the bottom (at the top with
// `inverted`, an icicle graph). Frames narrower than `min_width` pixels are left out with
// everything above them. An embedded script gives click to zoom (the frame fills the width, its
// ancestors stay as a pale base), "Reset Zoom" (or Escape), "Search" (or Ctrl-F: a regular
// expression; matches turn magenta and the bottom right says which share of all samples they
// cover, nested matches counted once) and the hovered frame's details at the bottom left.
// The document depends only on the tree and the options (colors come from a hash of the name,
// not a random number), so it is golden-testable.
//
// Differential trees (query/views/flame.h BuildDiffFlameTree) ignore the palette: a frame is red
// when it grew against the baseline and blue when it shrank, from white (no change) to deep red or
// blue for the largest change of any frame (flamegraph.pl's scale: the other two channels are
// 210 × (1 - |delta| / max |delta|)); the tooltip reads "name (9 samples, 50.00%; baseline 6,
// +3, +16.67%)" (the delta's share is of the target's total). The default title is
// "Differential Flame Graph".
//
// JSON: the d3-flame-graph tree {"name","value","children"} with value = total samples
// (differential trees add "baseline" and "delta" = value - baseline, d3-flame-graph's
// differential mode).
// Folded: the tree back as "stack count" lines (self counts), sorted bytewise.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "query/views/flame.h"

namespace trailmap {

// How frames are colored.
//   hot (default), mem, io: flamegraph.pl's palettes, the shade from a hash of the name;
//   java, js: by the collapser's annotations and name shapes (_[j] JIT green, _[i] inlined aqua,
//     _[k] kernel orange, C++ "::" yellow, JVM packages / JS sources green, the rest red);
//   self: by self time — the share of a frame's samples spent in the frame itself, from pale
//     (all in callees) to deep red (all self), so hot leaves and fat bodies stand out.
enum class FlamePalette { kHot, kMem, kIo, kJava, kJs, kSelf };
const char* FlamePaletteName(FlamePalette palette);
Result<FlamePalette> ParseFlamePalette(std::string_view text);

struct FlameSvgOptions {
  std::string title;       // "" = "Flame Graph", or "Icicle Graph" when inverted
  std::string subtitle;    // drawn under the title when not empty
  int width = 1200;        // pixels, image width
  int frame_height = 16;   // pixels per stack level
  int font_size = 12;      // pixels
  double min_width = 0.1;  // pixels: narrower frames are omitted
  bool inverted = false;   // icicle: root at the top, stacks grow down
  FlamePalette palette = FlamePalette::kHot;
  std::string count_name = "samples";  // in tooltips: "main (9 samples, 100.00%)"
};

std::string RenderFlameSvg(const FlameTree& tree, const FlameSvgOptions& options = {});
std::string RenderFlameJson(const FlameTree& tree);
std::string RenderFlameFolded(const FlameTree& tree);

}  // namespace trailmap
