// `trailmap flame`: a flame graph of folded stacks, from a local file (--folded FILE, "-" for
// standard input, e.g. from `trailmap collapse`) or, without --folded, from the fleet: every
// aggregator merges the stack samples of a `stacks` metric (default cpu.stacks) over --from/--to,
// --hosts and --where and answers with its merged folded stacks, which are merged again here.
// Output: an interactive SVG (default), the d3-flame-graph JSON tree, or the merged folded stacks.
//
// Differential (query/views/flame.h BuildDiffFlameTree): widths from the target, red/blue by the
// change against a BASELINE — a local file (--baseline-folded) or, from the fleet,
// --baseline-from/--baseline-to/--baseline-where (any of them not given is the target's), fetched
// the same way. Both paths come out as the folded text a --folded file holds and feed one
// renderer; `--format folded` then writes difffolded.pl's "stack baseline target".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/folded.h"

#include "cli/cli_common.h"
#include "query/run/flame.h"

namespace trailmap {

// Where fleet stacks come from (when --folded is not given).
using FlameFleetFlags = FlameFleetRequest;
// The flags are the request's fields (query/run/flame.h) and -o.
struct FlameFlags : FlameRequest {
  std::string output;  // -o; "" = standard output
};

CLI::App* AddFlameCommand(CLI::App* app, FlameFlags* flags);
int RunFlame(const FlameFlags& flags, const CliContext& context, std::istream& in);

}  // namespace trailmap
