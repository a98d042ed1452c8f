// `trailmap line`: a line or area chart of a metric over time, one line per group (host or field
// value) — made for the scalars (cpu.usage, mem.rss, net.rx.bytes) and fine for any metric's
// per-column avg/max/min/sum. SVG, PNG, JSON or ANSI sparklines (query/views/line.h,
// query/render/line.h).
#pragma once

#include <string>

#include "cli/cli_common.h"
#include "query/run/line.h"

namespace trailmap {

// The flags are the request's fields (query/run/line.h) and -o.
struct LineFlags : LineRequest {
  std::string output;  // -o; "" = standard output
};

CLI::App* AddLineCommand(CLI::App* app, LineFlags* flags);
int RunLine(const LineFlags& flags, const CliContext& context);

}  // namespace trailmap
