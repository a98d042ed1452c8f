// `trailmap collapse`: perf script text in, folded stacks out — the same lines
// stackcollapse-perf.pl writes for the same flags, so its output can be diffed with that tool's
// and piped into flamegraph.pl or `trailmap flame --folded -`. See stacks/stack_collapse.h for
// the rules. What was dropped (other event types, lines that fit no pattern, a last record with
// no blank line after it) is summarized on stderr; the exit code is 0 all the same, as for the
// Perl tool, unless the input cannot be read (1).
#pragma once

#include <string>

#include "cli/cli_common.h"

namespace trailmap {

struct CollapseFlags {
  bool pid = false;
  bool tid = false;
  bool kernel = false;
  bool jit = false;
  bool all = false;  // --kernel and --jit
  bool addrs = false;
  std::string input = "-";  // FILE, or "-" for standard input
};

CLI::App* AddCollapseCommand(CLI::App* app, CollapseFlags* flags);
// Reads `in` when flags.input is "-" (main passes std::cin).
int RunCollapse(const CollapseFlags& flags, const CliContext& context, std::istream& in);

}  // namespace trailmap
