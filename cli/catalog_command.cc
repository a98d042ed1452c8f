#include "cli/catalog_command.h"

#include <CLI/CLI.hpp>

#include "cli/cli_options.h"

namespace trailmap {

CLI::App* AddMetricsCommand(CLI::App* app, MetricsFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "metrics", "List every metric: name, kind, unit, the fields it carries and what it measures");
  AddOptions(cmd, MetricsParameters(), static_cast<MetricsRequest*>(flags));
  cmd->footer(
      "Examples:\n  trailmap metrics\n  trailmap metrics --format json --aggregators agg-1,agg-2");
  return cmd;
}

int RunMetrics(const MetricsFlags& flags, const CliContext& context) {
  return FinishView(context, "metrics", RunMetricsView(flags, context), "");
}

CLI::App* AddFieldsCommand(CLI::App* app, FieldsFlags* flags) {
  CLI::App* cmd = app->add_subcommand("fields",
                                      "Each field of a metric (and host) with the values seen in a "
                                      "time range and their event counts");
  AddOptions(cmd, FieldsParameters(), static_cast<FieldsRequest*>(flags));
  cmd->footer(
      "Examples:\n"
      "  trailmap fields --metric disk.latency --from -1h\n"
      "  trailmap fields --metric http.server.latency --where 'host =~ \"web.*\"' --format json\n"
      "Then decompose by a field with --by, or filter with --where.");
  return cmd;
}

int RunFields(const FieldsFlags& flags, const CliContext& context) {
  return FinishView(context, "fields", RunFieldsView(flags, context), "");
}

}  // namespace trailmap
