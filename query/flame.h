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
// Value type; building is single-threaded.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/stack_collapse.h"

namespace trailmap {

struct FlameNode {
  std::string name;
  double total = 0;
  double self = 0;
  uint32_t depth = 0;              // root 0
  std::vector<uint32_t> children;  // indexes into FlameTree::nodes, ordered by name
};

struct FlameTree {
  std::vector<FlameNode> nodes;  // nodes[0] is the root "all"
  uint32_t max_depth = 0;        // of any node; 0 when there are no samples
  uint64_t invalid_lines = 0;    // folded lines that did not parse

  const FlameNode& root() const { return nodes[0]; }
  double total() const { return nodes[0].total; }
};

// Merges folded text (see the grammar above).
FlameTree BuildFlameTree(std::string_view folded);
// Merges already-collapsed stacks.
FlameTree BuildFlameTree(const FoldedStacks& stacks);

}  // namespace trailmap
