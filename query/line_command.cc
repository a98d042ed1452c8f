#include "query/line_command.h"

#include <CLI/CLI.hpp>
#include <ostream>

#include "core/predicate.h"
#include "query/line.h"
#include "query/render_line.h"

namespace trailmap {
namespace {

int Fail(const CliContext& context, const Status& status) {
  *context.err << "trailmap line: " << status.message() << "\n";
  return ExitCodeFor(status);
}

constexpr int64_t kMaxPoints = 300;

}  // namespace

CLI::App* AddLineCommand(CLI::App* app, LineFlags* flags) {
  CLI::App* cmd = app->add_subcommand("line",
                                      "Line or area chart over time, one line per host or field "
                                      "value (scalars: cpu.usage, mem.rss, ...)");
  AddQueryFlags(cmd, &flags->query);
  cmd->add_option("--stat", flags->stat,
                  "What each point shows of its group's samples in its time step: avg, max, min or "
                  "sum (sum over hosts = the fleet's total)")
      ->capture_default_str()
      ->check(CLI::IsMember({"avg", "max", "min", "sum"}));
  cmd->add_option("--top", flags->top,
                  "Lines of their own (largest mean first); the other groups are merged into one "
                  "grey line \"other\"; 0 = every group")
      ->capture_default_str();
  cmd->add_flag("--area", flags->area, "Fill under each line");
  cmd->add_flag("--stacked", flags->stacked,
                "Stack the lines as areas (parts of a total, e.g. --by mode)");
  cmd->add_option("--step", flags->step,
                  "Seconds a point (default: the range over at most 300 points)");
  cmd->add_option("--format,-f", flags->format,
                  "svg, png, json or ansi; default from -o's extension, else ansi sparklines")
      ->check(CLI::IsMember({"svg", "png", "json", "ansi"}));
  cmd->add_option("-o,--output", flags->output, "Write to FILE instead of standard output");
  cmd->footer(
      "Examples:\n"
      "  trailmap line --metric cpu.usage --by host --where 'mode == \"user\"' --from -10m\n"
      "  trailmap line --metric cpu.usage --by mode --stacked --where 'host == \"web-1\"' -o "
      "cpu.png\n"
      "  trailmap line --metric mem.rss --by host --stat max --top 5 -o rss.svg\n"
      "  trailmap line --metric net.rx.bytes --stat sum --format json\n"
      "Values keep the metric's unit (%, B, B/s). A scalar's host-seconds are its samples: "
      "--by host --stat avg at a 1 s step is each host's own value.\n"
      "Exit codes: 0 ok, 1 error, 2 usage error, 3 some shard did not answer (drawn from the "
      "others).");
  return cmd;
}

int RunLine(const LineFlags& flags, const CliContext& context) {
  Result<TimeRange> range = ParseTimeRange(flags.query, context.now);
  if (!range.ok()) return Fail(context, range.status());
  LineOptions options;
  Result<LineStat> stat = ParseLineStat(flags.stat);
  if (!stat.ok())
    return Fail(context, Status::InvalidArgument("--stat: " + stat.status().message()));
  options.stat = *stat;
  options.top = flags.top;
  options.area = flags.area;
  options.stacked = flags.stacked;

  const std::string format =
      OutputFormat(flags.format, flags.output, flags.output.empty() ? "ansi" : "svg");

  HistogramQuery query;
  query.metric = flags.query.metric;
  query.from = range->from;
  query.to = range->to;
  const int64_t span = range->to - range->from;
  query.step =
      flags.step > 0
          ? flags.step
          : static_cast<uint32_t>(std::max<int64_t>(1, (span + kMaxPoints - 1) / kMaxPoints));
  query.group_by = flags.query.by;
  query.hosts = SplitList(flags.query.hosts);
  query.where = flags.query.where;
  // Summaries, not histograms: a line needs count, sum, min and max of each cell, four numbers
  // (and a scalar's are exact, without fixed point).
  query.summaries = true;
  if (Result<Predicate> where = Predicate::Parse(query.where); !where.ok()) {
    return Fail(context, Status::InvalidArgument("--where: " + where.status().message()));
  }
  Query q;
  q.kind = Query::Kind::kHistograms;
  q.histograms = query;
  Result<FanoutResult> fanout = FanOutAll(context, flags.query, std::move(q));
  if (!fanout.ok()) return Fail(context, fanout.status());
  std::vector<std::string> missing;
  for (const ShardFailure& f : fanout->failures) missing.push_back(f.endpoint + ": " + f.reason);
  Result<SummaryGrid> grid = MergeSummaries(query, fanout->answers);
  if (!grid.ok()) return Fail(context, grid.status());
  LineView view = AssembleLineView(*grid, options);
  view.missing_shards = missing;

  std::string bytes;
  if (format == "json") {
    bytes = RenderLineJson(view);
  } else if (format == "png") {
    Result<std::string> png = RenderLinePng(view);
    if (!png.ok()) return Fail(context, png.status());
    bytes = std::move(png).value();
  } else if (format == "svg") {
    bytes = RenderLineSvg(view);
  } else {
    const int width =
        context.terminal_columns > 0 ? std::max(10, context.terminal_columns - 60) : 60;
    bytes = RenderLineAnsi(view, width);
  }
  if (Status s = WriteOutput(context, flags.output, bytes); !s.ok()) return Fail(context, s);
  return ReportMissing(context, missing);
}

}  // namespace trailmap
