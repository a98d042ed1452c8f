// `trailmap subsecond`: FlameScope's sub-second offset heat map of a perf script file
// (query/views/subsecond.h), and with --range the flame graph of the samples in that range
// (query/render/flame.h). Perf script text is read as `trailmap collapse` reads it, each sample
// at its own timestamp with its sub-second offset. Formats: text (default on a terminal), svg,
// png, json; with --range: svg (default), folded, json. Exit codes: 0 ok, 1 the file cannot be
// read, 2 a usage error (a bad range, no timed samples).
#pragma once

#include <istream>
#include <string>

#include "cli/cli_common.h"

namespace trailmap {

struct SubsecondFlags {
  std::string input = "-";  // perf script text: FILE or "-"
  int rows = 50;            // rows per second (50: 20 ms each)
  std::string range;        // "A..B" seconds from the first column: draw that range's flame graph
  bool include_idle = false;
  std::string format;  // text | svg | png | json; with --range svg | folded | json
  std::string output;  // -o FILE
};

CLI::App* AddSubsecondCommand(CLI::App* app, SubsecondFlags* flags);
int RunSubsecond(const SubsecondFlags& flags, const CliContext& context, std::istream& in);

}  // namespace trailmap
