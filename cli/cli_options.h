// A view's table of options (query/run/options.h) registered with CLI11: one CLI11 option per row,
// named --NAME (and -S, --no-NAME as the row says), whose value goes through ReadOption, the
// reader trailmap-query's parameters go through, so both accept and refuse the same values with
// the same messages. A refusal is a CLI::ValidationError carrying ReadOption's message (exit 2).
#pragma once

#include "query/run/options.h"

namespace CLI {
class App;
}

namespace trailmap {

// One row: `target` must outlive `command` (it is the flags struct main() owns).
void AddOption(CLI::App* command, const OptionSpec& spec, OptionTarget target);

// Every row of `table` that the CLI has (OptionFront::kBoth and kCli), in the table's order.
template <typename Request>
void AddOptions(CLI::App* command, const OptionTable<Request>& table, Request* request) {
  for (const OptionRow<Request>& row : table.rows()) {
    AddOption(command, row.spec, row.member(*request));
  }
}

}  // namespace trailmap
