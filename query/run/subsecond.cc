#include "query/run/subsecond.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/predicate.h"
#include "core/timespec.h"
#include "query/render/flame.h"
#include "query/render/subsecond.h"
#include "query/run/flame.h"
#include "query/views/flame.h"
#include "query/views/subsecond.h"

namespace trailmap {
namespace {

// The map in `format`: text, svg, png or json (checked by the caller).
Result<std::string> RenderSubsecondMap(const SubsecondView& view, const std::string& format,
                                       const SubsecondDrawOptions& options) {
  if (format == "svg") return RenderSubsecondSvg(view, options);
  if (format == "png") return RenderSubsecondPng(view, options);
  if (format == "json") return RenderSubsecondJson(view);
  return RenderSubsecondText(view);
}

// A range's flame graph: folded or svg (checked by the caller; the JSON is each front end's).
std::string RenderRangeFlame(const FoldedStacks& stacks, const std::string& format,
                             const FlameSvgOptions& options) {
  if (format == "folded") return FormatFolded(stacks);
  return RenderFlameSvg(BuildFlameTree(stacks), options);
}

}  // namespace

Result<ViewDocument> RunSubsecondFleetView(const SubsecondFleetRequest& request,
                                           const QueryContext& context) {
  if (Status s = SubsecondParameters().Check(request); !s.ok()) return s;
  if (!request.query.by.empty()) {
    return Status::InvalidArgument(
        "--by: the sub-second map adds up the samples of every host it covers; choose them with "
        "--hosts or --where");
  }
  if (!request.query.where.empty()) {
    // A value test picks offsets, not requests: refused, so that the page's heat-map predicate
    // ("latency > 100ms") is not silently read as "samples later than 100 ms into a second".
    Result<Predicate> where = Predicate::Parse(request.query.where);
    if (where.ok() && !where->ValueLiterals().empty()) {
      return Status::InvalidArgument(
          "--where " + request.query.where +
          ": the sub-second map's values are the samples' "
          "offsets in their seconds, so a test of the value (" +
          where->ValueLiterals()[0] +
          ") has no meaning here; keep the tests of host and labels, e.g. host =~ \"web.*\"");
    }
  }
  Result<TimeRange> range = ParseTimeRange(request.query, context.now);
  if (!range.ok()) return range.status();
  if (range->to - range->from > kMaxSubsecondColumns) {
    return Status::InvalidArgument("--from/--to span " + std::to_string(range->to - range->from) +
                                   " seconds; the sub-second map draws at most " +
                                   std::to_string(kMaxSubsecondColumns) +
                                   " (one column per second): narrow the range");
  }
  ViewDocument doc;
  const std::string where_text =
      request.query.metric + (request.query.hosts.empty() ? "" : ", hosts " + request.query.hosts) +
      (request.query.where.empty() ? "" : ", where " + request.query.where);
  if (!request.range.empty()) {
    const std::string format = request.format.empty() ? "svg" : request.format;
    if (format != "svg" && format != "folded" && format != "json") {
      return Status::InvalidArgument("--range draws svg, folded or json, not " + format);
    }
    Result<SubsecondRange> selected = ParseSubsecondRange(request.range);
    if (!selected.ok()) return selected.status();
    const int64_t first = range->from + static_cast<int64_t>(std::floor(selected->from));
    const int64_t end =
        std::min(range->to, range->from + static_cast<int64_t>(std::ceil(selected->to)));
    if (first >= range->to) {
      return Status::InvalidArgument("--range " + request.range + " starts after the map's " +
                                     std::to_string(range->to - range->from) + " seconds");
    }
    FlameFleetRequest fleet;
    fleet.view = request.query;
    fleet.view.metric = request.stacks;
    fleet.view.from = std::to_string(first);
    fleet.view.to = std::to_string(end);
    Result<FleetStacks> stacks = FetchFleetStacks(fleet, context);
    if (!stacks.ok()) return stacks.status();
    if (format == "json") {
      // The seconds drawn join the root object ("...]}\n" ends it), for the page's caption.
      doc.bytes = RenderFlameJson(BuildFlameTree(stacks->target));
      doc.bytes.resize(doc.bytes.size() - 2);
      doc.bytes += ",\"range\":{\"range\":" + nlohmann::json(request.range).dump() +
                   ",\"from\":" + std::to_string(first) + ",\"to\":" + std::to_string(end) + "}}\n";
    } else {
      FlameSvgOptions options;
      options.title = "Flame Graph, " + request.range + " s";
      options.subtitle = request.stacks + " of the whole seconds " + FormatRfc3339(first) + " .. " +
                         FormatRfc3339(end) + " (" + std::to_string(end - first) +
                         " s: stacks are counted per second)";
      doc.bytes = RenderRangeFlame(stacks->target, format, options);
    }
    doc.format = format;
    doc.missing = std::move(stacks->missing);
    return doc;
  }
  const std::string format = request.format.empty() ? "text" : request.format;
  if (format != "text" && format != "svg" && format != "png" && format != "json") {
    return Status::InvalidArgument("the map is drawn as text, svg, png or json, not " + format);
  }
  HistogramQuery query;
  query.metric = request.query.metric;
  query.from = range->from;
  query.to = range->to;
  query.step = 1;
  query.hosts = SplitList(request.query.hosts);
  Result<Fetched> fetched = FetchGrid(context, request.query, query);
  if (!fetched.ok()) return fetched.status();
  Result<SubsecondView> view = SubsecondFromGrid(fetched->grid, request.rows);
  if (!view.ok()) return view.status();
  SubsecondDrawOptions options;
  options.subtitle = where_text + ", " + FormatRfc3339(range->from) + " + " +
                     std::to_string(range->to - range->from) + " s";
  Result<std::string> bytes = RenderSubsecondMap(*view, format, options);
  if (!bytes.ok()) return bytes.status();
  doc.bytes = std::move(bytes).value();
  doc.format = format;
  doc.missing = std::move(fetched->missing);
  NoteSkipped(fetched->skipped, &doc);
  return doc;
}

Result<ViewDocument> RunSubsecondFileView(const SubsecondFileRequest& request,
                                          std::string_view perf_script) {
  const PerfSamples samples = ReadPerfSamples(perf_script, request.include_idle);
  if (samples.samples.empty() && samples.idle > 0) {
    return Status::InvalidArgument(request.name + " holds only idle samples (" +
                                   std::to_string(samples.idle) + "); --include-idle draws them");
  }
  if (samples.samples.empty()) {
    return Status::InvalidArgument(request.name +
                                   " holds no timed samples (perf script prints the time column by "
                                   "default; with -F give `time`)");
  }
  ViewDocument doc;
  if (samples.untimed > 0) {
    doc.notes.push_back("trailmap subsecond: " + std::to_string(samples.untimed) +
                        " samples without a time left out");
  }
  Result<SubsecondView> view = BuildSubsecondView(samples, request.rows);
  if (!view.ok()) return Status::InvalidArgument(view.status().message());
  if (!request.range.empty()) {
    Result<SubsecondRange> range = ParseSubsecondRange(request.range);
    if (!range.ok()) return Status::InvalidArgument(range.status().message());
    const std::string format = request.format.empty() ? "svg" : request.format;
    if (format != "svg" && format != "folded" && format != "json") {
      return Status::InvalidArgument("--range draws svg, folded or json, not " + format);
    }
    const FoldedStacks stacks = FoldSubsecondRange(samples, view->start_second, *range);
    if (format == "json") {
      doc.bytes = RenderFlameJson(BuildFlameTree(stacks));
    } else {
      FlameSvgOptions options;
      options.title = "Flame Graph, " + request.range + " s";
      options.subtitle = request.name + ": seconds from " + std::to_string(view->start_second);
      doc.bytes = RenderRangeFlame(stacks, format, options);
    }
    doc.format = format;
    return doc;
  }
  const std::string format = request.format.empty() ? "text" : request.format;
  if (format != "text" && format != "svg" && format != "png" && format != "json") {
    return Status::InvalidArgument("the map is drawn as text, svg, png or json, not " + format);
  }
  SubsecondDrawOptions options;
  options.subtitle = request.name;
  Result<std::string> bytes = RenderSubsecondMap(*view, format, options);
  // Not a usage error whatever its code: the input was fine, the drawing failed.
  if (!bytes.ok()) return Status::IOError(bytes.status().message());
  doc.bytes = std::move(bytes).value();
  doc.format = format;
  return doc;
}

}  // namespace trailmap
