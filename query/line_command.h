// `trailmap line`: a line or area chart of a metric over time, one line per group (host or field
// value) — made for the scalars (cpu.usage, mem.rss, net.rx.bytes) and fine for any metric's
// per-column avg/max/min/sum. SVG, PNG, JSON or ANSI sparklines (query/line.h,
// query/render_line.h).
#pragma once

#include <string>

#include "query/cli_common.h"

namespace trailmap {

struct LineFlags {
  QueryFlags query;
  std::string stat = "avg";  // avg | max | min | sum
  size_t top = 10;           // lines of their own, the rest "other"; 0 = all
  bool area = false;
  bool stacked = false;
  uint32_t step = 0;   // seconds a point; 0 = the range over at most 300 points
  std::string format;  // "" = from -o's extension (.svg .png .json), else ansi
  std::string output;  // -o; "" = standard output
};

CLI::App* AddLineCommand(CLI::App* app, LineFlags* flags);
int RunLine(const LineFlags& flags, const CliContext& context);

}  // namespace trailmap
