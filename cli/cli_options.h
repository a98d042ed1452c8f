// A view's table of options (query/run/options.h) registered with CLI11: one CLI11 option per row,
// named --NAME (and -S, --no-NAME as the row says), whose value goes through ReadOption, the
// reader trailmap-query's parameters go through, so both accept and refuse the same values with
// the same messages. A refusal is an OptionRefused carrying ReadOption's message (exit 2).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "query/run/options.h"

namespace trailmap {

// A value a command's table refused, raised inside CLI11's parse. main() prints it as every
// other refusal of a view's parameters, "trailmap COMMAND: MESSAGE", and exits 2.
class OptionRefused : public CLI::ValidationError {
 public:
  OptionRefused(std::string command, const std::string& message)
      : CLI::ValidationError(message), command_(std::move(command)) {}
  const std::string& command() const { return command_; }

 private:
  std::string command_;
};

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
