#include "query/stats_command.h"

#include <CLI/CLI.hpp>
#include <ostream>

#include "query/catalog_command.h"
#include "query/render_stats.h"
#include "query/stats.h"

namespace trailmap {
namespace {

int Fail(const CliContext& context, const Status& status) {
  *context.err << "trailmap stats: " << status.message() << "\n";
  return ExitCodeFor(status);
}

}  // namespace

CLI::App* AddStatsCommand(CLI::App* app, StatsFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "stats", "Percentiles (count, mean, min, p50, p90, p99, p99.9, max) per host or field value");
  AddQueryFlags(cmd, &flags->query);
  cmd->add_option("--format,-f", flags->format,
                  "table (values with units), json or csv (base units)")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option(
         "--sort", flags->sort,
         "Order rows by name, or largest first by count, mean, min, p50, p90, p99, p99.9, max")
      ->capture_default_str();
  cmd->add_option("--top", flags->top, "Keep the first N rows after sorting");
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->footer(
      "Examples:\n"
      "  trailmap stats --metric http.server.latency --by host --sort p99 --top 20\n"
      "  trailmap stats --metric disk.latency --by op --from -1h --format csv\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer (the table is "
      "computed from the others).");
  return cmd;
}

int RunStats(const StatsFlags& flags, const CliContext& context) {
  Result<TimeRange> range = ParseTimeRange(flags.query, context.now);
  if (!range.ok()) return Fail(context, range.status());
  Result<StatsSort> sort = ParseStatsSort(flags.sort);
  if (!sort.ok())
    return Fail(context, Status::InvalidArgument("--sort: " + sort.status().message()));

  // One column covering the whole range: the aggregators merge the seconds themselves.
  HistogramQuery query;
  query.metric = flags.query.metric;
  query.from = range->from;
  query.to = range->to;
  query.step = static_cast<uint32_t>(std::min<int64_t>(range->to - range->from, UINT32_MAX));
  query.group_by = flags.query.by;
  query.hosts = SplitList(flags.query.hosts);

  Result<Fetched> fetched = FetchGrid(context, flags.query, query);
  if (!fetched.ok()) return Fail(context, fetched.status());
  StatsTable table = ComputeStats(fetched->grid);
  table.missing_shards = fetched->missing;
  SortStats(&table, *sort, flags.top);

  std::string bytes;
  if (flags.format == "json") {
    bytes = RenderStatsJson(table);
  } else if (flags.format == "csv") {
    bytes = RenderStatsCsv(table);
  } else {
    bytes = RenderStatsTable(table);
  }
  if (Status s = WriteOutput(context, flags.output, bytes); !s.ok()) return Fail(context, s);
  // Not when a shard is silent: its catalog query would wait out the timeout a second time.
  if (fetched->missing.empty()) NoteOverflow(context, flags.query, query.from, query.to);
  return ReportMissing(context, fetched->missing);
}

}  // namespace trailmap
