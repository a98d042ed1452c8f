// Seed 004's example stacks, for the flame graph tests: main (self 2) calls foo1 (self 1.5) and
// foo2 (self 0.5); both call bar (2.5 each). Totals: main 9, foo1 4, foo2 3, bar 2.5 + 2.5.
// query/testing/testdata/seed004.folded holds the same lines.
#pragma once

namespace trailmap::testing {

constexpr const char* kSeedFolded =
    "main;foo2;bar 2.5\n"
    "main 2\n"
    "main;foo1;bar 2.5\n"
    "main;foo1 1.5\n"
    "main;foo2 0.5\n";

}  // namespace trailmap::testing
