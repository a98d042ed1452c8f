// `trailmap flame`: a flame graph of folded stacks. For now the stacks come from a local file
// (--folded FILE, "-" for standard input), e.g. from `trailmap collapse`; fleet queries of the
// agents' stack samples come with their storage. Output: an interactive SVG (default), the
// d3-flame-graph JSON tree, or the merged folded stacks. With --baseline-folded the graph is
// differential (query/flame.h BuildDiffFlameTree): widths from --folded, red/blue by the change
// against the baseline; `--format folded` then writes difffolded.pl's "stack baseline target".
#pragma once

#include <string>

#include "query/cli_common.h"

namespace trailmap {

struct FlameFlags {
  std::string folded;            // --folded FILE|-
  std::string format = "svg";    // svg | json | folded
  std::string palette = "hot";   // hot | mem | io | java | js | self
  std::string title;             // "" = "Flame Graph" / "Icicle Graph"
  bool inverted = false;         // icicle graph
  double min_width = 0.1;        // pixels
  int width = 1200;              // pixels
  std::string count_name = "samples";
  std::string output;            // -o; "" = standard output
  std::string baseline_folded;   // --baseline-folded FILE: a differential graph against it
  bool no_normalize = false;     // --no-normalize: compare raw counts, not shares
};

CLI::App* AddFlameCommand(CLI::App* app, FlameFlags* flags);
int RunFlame(const FlameFlags& flags, const CliContext& context, std::istream& in);

}  // namespace trailmap
