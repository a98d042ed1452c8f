// `trailmap columns`: sorted server columns (query/views/columns.h) of a metric over a time range,
// as ANSI, SVG, JSON or PNG.
#pragma once

#include <string>

#include "cli/cli_common.h"
#include "query/run/columns.h"

namespace trailmap {

// The flags are the request's fields (query/run/columns.h) and -o.
struct ColumnsFlags : ColumnsRequest {
  std::string output;  // -o; "" = standard output
};

CLI::App* AddColumnsCommand(CLI::App* app, ColumnsFlags* flags);
int RunColumns(const ColumnsFlags& flags, const CliContext& context);

}  // namespace trailmap
