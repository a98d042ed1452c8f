#include "query/columns_command.h"

#include <CLI/CLI.hpp>
#include <ostream>

#include "core/units.h"
#include "query/columns.h"
#include "query/render_columns.h"

namespace trailmap {
namespace {

int Fail(const CliContext& context, const Status& status) {
  *context.err << "trailmap columns: " << status.message() << "\n";
  return ExitCodeFor(status);
}

}  // namespace

CLI::App* AddColumnsCommand(CLI::App* app, ColumnsFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "columns",
      "One column per host (value on y, shaded by how many events), hosts sorted by a statistic");
  AddQueryFlags(cmd, &flags->query);
  cmd->add_option("--sort", flags->sort,
                  "Order hosts by cov (stddev / mean), p50, p90, p99, mean, max, count, "
                  "bimodality (largest first) or name")
      ->capture_default_str();
  cmd->add_flag("--reverse", flags->reverse, "Smallest first (or Z to A for name)");
  cmd->add_option("--limit", flags->limit, "Keep the first N hosts after sorting");
  cmd->add_option("--shading", flags->shading,
                  "column: each column shaded by its own counts; global: all cells together")
      ->capture_default_str();
  cmd->add_option("--coloring", flags->coloring,
                  "rank: shade by the rank of a cell's count; linear: by count / max")
      ->capture_default_str()
      ->check(CLI::IsMember({"rank", "linear"}));
  cmd->add_option("--rows", flags->rows, "Rows of the value axis")
      ->capture_default_str()
      ->check(CLI::Range(1, 2000));
  cmd->add_option("--ymax", flags->ymax,
                  "Top of the value axis, with a unit (20ms, 4KiB); default: the largest value, "
                  "rounded up to 1, 2 or 5 x 10^k");
  cmd->add_option("--clip", flags->clip, "Leave the top P% of events above the axis: 0.1%");
  cmd->add_option("--format,-f", flags->format,
                  "ansi, svg, json (docs/json.md) or png; default ansi, or from -o's extension")
      ->check(CLI::IsMember({"ansi", "svg", "json", "png"}));
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->footer(
      "Examples:\n"
      "  trailmap columns --metric disk.latency --from -10m --sort p99 --limit 100\n"
      "  trailmap columns --metric disk.latency --from -10m --clip 0.1% -o fleet.svg\n"
      "  trailmap columns --metric disk.latency --hosts db-1,db-2 --format json\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer (the view is "
      "drawn from the others).");
  return cmd;
}

int RunColumns(const ColumnsFlags& flags, const CliContext& context) {
  // Everything a user typed is checked before any shard is asked.
  Result<TimeRange> range = ParseTimeRange(flags.query, context.now);
  if (!range.ok()) return Fail(context, range.status());
  if (!flags.query.by.empty() && flags.query.by != "host") {
    return Fail(context, Status::InvalidArgument("--by: the columns are always one per host"));
  }
  ColumnsOptions options;
  options.rows = flags.rows;
  options.reverse = flags.reverse;
  options.limit = flags.limit;
  Result<ColumnsSort> sort = ParseColumnsSort(flags.sort);
  if (!sort.ok()) return Fail(context, Status::InvalidArgument("--sort: " + sort.status().message()));
  options.sort = *sort;
  Result<ColumnShading> shading = ParseColumnShading(flags.shading);
  if (!shading.ok()) {
    return Fail(context, Status::InvalidArgument("--shading: " + shading.status().message()));
  }
  options.shading = *shading;
  Result<Coloring> coloring = ParseColoring(flags.coloring);
  if (!coloring.ok()) return Fail(context, coloring.status());
  options.coloring = *coloring;
  if (!flags.clip.empty()) {
    Result<double> clip = ParsePercent(flags.clip);
    if (!clip.ok()) {
      return Fail(context, Status::InvalidArgument("--clip: " + clip.status().message()));
    }
    options.clip_percent = *clip;
  }
  if (!flags.ymax.empty() && !ParseQuantity(flags.ymax, "ns").ok() &&
      !ParseQuantity(flags.ymax, "B").ok()) {
    return Fail(context, Status::InvalidArgument(
                             "--ymax: " + ParseQuantity(flags.ymax, "ns").status().message()));
  }
  const std::string format = OutputFormat(flags.format, flags.output, "ansi");
  if (format == "ansi") {
    // One character per host: a terminal shows the first hosts that fit, and says so.
    const size_t fit =
        context.terminal_columns > 30 ? static_cast<size_t>(context.terminal_columns) - 10 : 110;
    if (options.limit == 0 || options.limit > fit) options.limit = fit;
  }

  // One column covering the whole range, per host: the aggregators merge the seconds.
  HistogramQuery query;
  query.metric = flags.query.metric;
  query.from = range->from;
  query.to = range->to;
  query.step = static_cast<uint32_t>(std::min<int64_t>(range->to - range->from, UINT32_MAX));
  query.group_by = "host";
  query.hosts = SplitList(flags.query.hosts);

  Result<Fetched> fetched = FetchGrid(context, flags.query, query);
  if (!fetched.ok()) return Fail(context, fetched.status());
  if (!flags.ymax.empty()) {
    Result<uint64_t> ymax = ParseAxisFlag("--ymax", flags.ymax, query.metric, fetched->grid.unit);
    if (!ymax.ok()) return Fail(context, ymax.status());
    if (*ymax == 0) return Fail(context, Status::InvalidArgument("--ymax must be above 0"));
    options.ymax = *ymax;
  }
  Result<ColumnsView> view = AssembleColumns(fetched->grid, options);
  if (!view.ok()) return Fail(context, view.status());
  view->missing_shards = fetched->missing;

  std::string bytes;
  if (format == "svg") {
    bytes = RenderColumnsSvg(*view);
  } else if (format == "json") {
    bytes = RenderColumnsJson(*view);
  } else if (format == "png") {
    Result<std::string> png = RenderColumnsPng(*view);
    if (!png.ok()) return Fail(context, png.status());
    bytes = std::move(png).value();
  } else {
    bytes = RenderColumnsAnsi(*view);
  }
  if (Status s = WriteOutput(context, flags.output, bytes); !s.ok()) return Fail(context, s);
  return ReportMissing(context, fetched->missing);
}

}  // namespace trailmap
