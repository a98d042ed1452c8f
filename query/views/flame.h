// FlameTree: folded stacks merged into the call tree a flame graph draws (seed 004).
//
// Input is FlameGraph's folded format, one stack per line:
//
//   line  := STACK WS COUNT          frames root first, joined by ';'; COUNT after the LAST
//                                    space or tab: digits, optionally '.' and more digits
//   blank lines are skipped; any other line is counted as invalid and skipped (flamegraph.pl
//   says "Ignored N lines with invalid format" and does the same).
//
// Frames merge along identical call paths: "main;foo1;bar" and "main;foo2;bar" share `main` but
// give two `bar` nodes. A node's total is the samples of every stack through it (its frame's
// width); its self is the samples of stacks ending at it (the gap left under it, since
// total = self + the children's totals). The root is "all", whose total is every sample.
// Children are ordered by name (bytewise), as flamegraph.pl orders them, so the output does not
// depend on the input's order. Counts are doubles: the folded format allows "2.5".
//
// Differential trees (two folded inputs) are described at BuildDiffFlameTree.
//
// Value type; building is single-threaded.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/folded.h"

namespace trailmap {

struct FlameNode {
  std::string name;
  double total = 0;
  double self = 0;
  uint32_t depth = 0;              // root 0
  std::vector<uint32_t> children;  // indexes into FlameTree::nodes, ordered by name
  double baseline = 0;             // differential trees: the baseline's total here, scaled
};

struct FlameTree {
  std::vector<FlameNode> nodes;  // nodes[0] is the root "all"
  uint32_t max_depth = 0;        // of any node; 0 when there are no samples
  uint64_t invalid_lines = 0;    // folded lines that did not parse
  // Differential trees (BuildDiffFlameTree): totals are the target's, FlameNode::baseline the
  // baseline's multiplied by baseline_scale.
  bool differential = false;
  double baseline_total = 0;  // the baseline's samples, unscaled
  double baseline_scale = 1;  // target total / baseline total when normalized, else 1

  const FlameNode& root() const { return nodes[0]; }
  double total() const { return nodes[0].total; }
};

// Merges folded text (see the grammar above).
FlameTree BuildFlameTree(std::string_view folded);

// Folded stacks as a map, stack → count (duplicate lines add up); what `--folded` reads, and
// what a fleet query can hand to BuildDiffFlameTree. Same grammar; `invalid` counts bad lines.
using FoldedMap = std::map<std::string, double, std::less<>>;
FoldedMap ParseFoldedMap(std::string_view folded, uint64_t* invalid = nullptr);

// A differential flame tree, as FlameGraph's difffolded.pl (-n with `normalize`) then
// flamegraph.pl draw it: the tree of `target` (widths are the target's samples), each node also
// carrying the baseline's samples along the same path. With `normalize` the baseline is scaled
// so both totals are equal (a host that sampled twice as long does not look twice as hot), and
// a node's change is total - baseline. Paths only in the baseline are nodes with total 0 (not
// drawn: swap the two to see what disappeared).
FlameTree BuildDiffFlameTree(const FoldedMap& baseline, const FoldedMap& target,
                             bool normalize = true);

// difffolded.pl's output: "stack BASELINE TARGET" for every stack in either, sorted bytewise;
// BASELINE scaled when `normalize` (up to 3 decimals, trailing zeros cut).
std::string FormatDiffFolded(const FoldedMap& baseline, const FoldedMap& target,
                             bool normalize = true);
// Merges already-collapsed stacks.
FlameTree BuildFlameTree(const FoldedStacks& stacks);

}  // namespace trailmap
