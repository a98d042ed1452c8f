#include "query/run/line.h"

#include <ostream>

#include "core/predicate.h"
#include "query/render/line.h"
#include "query/views/heatmap.h"
#include "query/views/line.h"

namespace trailmap {
namespace {

constexpr int64_t kMaxPoints = 300;

}  // namespace

Result<ViewDocument> RunLineView(const LineRequest& flags, const QueryContext& context) {
  if (Status s = LineParameters().Check(flags); !s.ok()) return s;
  Result<TimeRange> range = ParseTimeRange(flags.query, context.now);
  if (!range.ok()) return range.status();
  LineOptions options;
  Result<LineStat> stat = ParseLineStat(flags.stat);
  if (!stat.ok()) return Status::InvalidArgument("--stat: " + stat.status().message());
  options.stat = *stat;
  options.top = flags.top;
  options.area = flags.area;
  options.stacked = flags.stacked;

  const std::string format = flags.format.empty() ? "ansi" : flags.format;

  HistogramQuery query;
  query.metric = flags.query.metric;
  // Without --step: at most kMaxPoints points, a step the rollups serve exactly (PlanColumns).
  Result<ColumnPlan> plan = PlanColumns(range->from, range->to, 0, flags.step, kMaxPoints);
  if (!plan.ok()) return plan.status();
  query.from = plan->from;
  query.to = range->to;
  query.step = plan->step;
  query.group_by = flags.query.by;
  query.hosts = SplitList(flags.query.hosts);
  query.where = flags.query.where;
  // Summaries, not histograms: a line needs count, sum, min and max of each cell, four numbers
  // (and a scalar's are exact, without fixed point).
  query.summaries = true;
  if (Result<Predicate> where = Predicate::Parse(query.where); !where.ok()) {
    return Status::InvalidArgument("--where: " + where.status().message());
  }
  Query q;
  q.kind = Query::Kind::kHistograms;
  q.histograms = query;
  Result<FanoutResult> fanout = FanOutAll(context, flags.query, std::move(q));
  if (!fanout.ok()) return fanout.status();
  std::vector<std::string> missing;
  for (const ShardFailure& f : fanout->failures) missing.push_back(f.endpoint + ": " + f.reason);
  Result<SummaryGrid> grid = MergeSummaries(query, fanout->answers);
  if (!grid.ok()) return grid.status();
  LineView view = AssembleLineView(*grid, options);
  view.missing_shards = missing;

  std::string bytes;
  if (format == "json") {
    bytes = RenderLineJson(view);
  } else if (format == "png") {
    Result<std::string> png = RenderLinePng(view);
    if (!png.ok()) return png.status();
    bytes = std::move(png).value();
  } else if (format == "svg") {
    bytes = RenderLineSvg(view);
  } else {
    const int width =
        context.terminal_columns > 0 ? std::max(10, context.terminal_columns - 60) : 60;
    bytes = RenderLineAnsi(view, width);
  }
  ViewDocument doc;
  doc.bytes = std::move(bytes);
  doc.format = format;
  doc.missing = missing;
  return doc;
}

}  // namespace trailmap
