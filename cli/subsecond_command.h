// `trailmap subsecond`: FlameScope's sub-second offset heat map of a perf script file
// (query/views/subsecond.h), and with --range the flame graph of the samples in that range
// (query/render/flame.h). Perf script text is read as `trailmap collapse` reads it, each sample
// at its own timestamp with its sub-second offset. Without a FILE (or with --metric) the map is
// the fleet's: the agents' cpu.offsets over --from/--to, --hosts and --where
// (query/run/subsecond.h), and --range gives the flame graph of those whole seconds' cpu.stacks.
// Formats: text (default on a terminal), svg, png, json; with --range: svg (default), folded,
// json. Exit codes: 0 ok, 1 the file cannot be read, 2 a usage error (a bad range, no timed
// samples), 3 a shard did not answer.
#pragma once

#include <istream>
#include <string>

#include "cli/cli_common.h"
#include "query/run/subsecond.h"

namespace trailmap {

// The fleet's request (rows, range, stacks and format also draw a FILE), with what only the CLI
// has: the FILE, --include-idle and -o.
struct SubsecondFlags : SubsecondFleetRequest {
  // "" (not cpu.offsets): a --metric given names the fleet's map, which a FILE excludes.
  SubsecondFlags() { query.metric = ""; }
  std::string input;  // perf script text: FILE or "-"; "" = the fleet
  bool include_idle = false;
  std::string output;  // -o FILE
};

CLI::App* AddSubsecondCommand(CLI::App* app, SubsecondFlags* flags);
int RunSubsecond(const SubsecondFlags& flags, const CliContext& context, std::istream& in);

}  // namespace trailmap
