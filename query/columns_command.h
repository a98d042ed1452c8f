// `trailmap columns`: sorted server columns (query/columns.h) of a metric over a time range, as
// ANSI, SVG, JSON or PNG.
#pragma once

#include <string>

#include "query/cli_common.h"

namespace trailmap {

struct ColumnsFlags {
  QueryFlags query;  // --by is refused: the columns are always per host
  uint32_t rows = 50;
  std::string ymax;  // "" = automatic; "20ms", "4KiB", or a number in the base unit
  std::string clip;  // "" = none; "0.1%"
  std::string coloring = "rank";
  std::string shading = "column";  // column | global
  std::string sort = "cov";
  bool reverse = false;
  size_t limit = 0;    // 0 = every host (in a terminal: as many as fit)
  std::string format;  // "" = ansi, or svg/json/png when -o ends in .svg/.json/.png
  std::string output;  // -o; "" = standard output
};

CLI::App* AddColumnsCommand(CLI::App* app, ColumnsFlags* flags);
int RunColumns(const ColumnsFlags& flags, const CliContext& context);

}  // namespace trailmap
