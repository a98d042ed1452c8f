#include "query/run/trails.h"

#include <functional>
#include <memory>
#include <ostream>
#include <string_view>

#include "core/units.h"
#include "query/fetch/request_checks.h"
#include "query/render/trails.h"
#include "query/views/trails.h"

namespace trailmap {
namespace {

// "0..20ms", "100us..5ms", "..20ms" (from 0).
Status ParseRange(const std::string& text, const std::string& unit, TrailOptions* options) {
  const size_t dots = text.find("..");
  if (dots == std::string::npos) {
    return Status::InvalidArgument("--range " + text + ": write LOW..HIGH, e.g. 0..20ms");
  }
  const std::string low = text.substr(0, dots), high = text.substr(dots + 2);
  uint64_t lo = 0;
  if (!low.empty() && low != "0") {
    Result<uint64_t> v = ParseQuantity(low, unit);
    if (!v.ok()) return Status::InvalidArgument("--range: " + v.status().message());
    lo = *v;
  }
  Result<uint64_t> hi = ParseQuantity(high, unit);
  if (!hi.ok()) return Status::InvalidArgument("--range: " + hi.status().message());
  if (*hi <= lo) return Status::InvalidArgument("--range " + text + ": HIGH must be above LOW");
  options->lo = lo;
  options->hi = *hi;
  return Status::Ok();
}

}  // namespace

Result<ViewDocument> RunTrailsView(const TrailsRequest& flags, const QueryContext& context) {
  Result<TimeRange> range = ParseTimeRange(flags.query, context.now);
  if (!range.ok()) return range.status();
  TrailOptions options;
  Result<TrailSort> sort = ParseTrailSort(flags.sort);
  if (!sort.ok()) return Status::InvalidArgument("--sort: " + sort.status().message());
  options.sort = *sort;
  options.limit = flags.limit;
  options.points = flags.points;
  Result<double> threshold = ParsePercent(flags.threshold);
  if (!threshold.ok()) {
    return Status::InvalidArgument("--threshold: " + threshold.status().message());
  }
  options.threshold = *threshold / 100;

  const std::string format = flags.format.empty() ? "svg" : flags.format;
  if (format != "svg" && format != "png" && format != "json") {
    return Status::InvalidArgument("--format " + format + ": give svg, png or json");
  }
  if (Status s = CheckRange("--points", static_cast<int64_t>(flags.points), 16, 65536); !s.ok()) {
    return s;
  }
  if (Status s = CheckRange("--height", flags.height, 100, 100'000); !s.ok()) return s;
  if (format != "json") {
    const int width = TrailsStyle{}.plot_width;
    const std::string size = "--height " + std::to_string(flags.height) + " × the trails' width " +
                             std::to_string(width);
    if (Status s = CheckImagePixels(size, width, flags.height); !s.ok()) return s;
  }
  if (flags.overlap > 0.95) {
    return Status::InvalidArgument("--overlap: give a fraction from 0 to 0.95");
  }

  // One column covering the whole range, one group per host (or field value).
  HistogramQuery query;
  query.metric = flags.query.metric;
  query.from = range->from;
  query.to = range->to;
  query.step = static_cast<uint32_t>(std::min<int64_t>(range->to - range->from, UINT32_MAX));
  query.group_by = flags.query.by.empty() ? "host" : flags.query.by;
  query.hosts = SplitList(flags.query.hosts);

  Result<Fetched> fetched = FetchGrid(context, flags.query, query);
  if (!fetched.ok()) return fetched.status();
  const std::string& unit = fetched->grid.unit;
  if (!flags.range.empty()) {
    if (Status s = ParseRange(flags.range, unit, &options); !s.ok()) return s;
  }
  if (flags.bandwidth != "auto") {
    if (flags.bandwidth == "0") {
      options.bandwidth = 0;
    } else {
      Result<uint64_t> bw = ParseQuantity(flags.bandwidth, unit);
      if (!bw.ok()) return Status::InvalidArgument("--bandwidth: " + bw.status().message());
      options.bandwidth = static_cast<double>(*bw);
    }
  }

  TrailsStyle style;
  style.fill = flags.fill;
  style.invert = flags.invert;
  style.border = flags.border;
  style.overlap = flags.overlap;
  style.root = !flags.linear;
  style.plot_height = flags.height;
  // A picture draws what fits its height unless --limit says how many (render/trails.h).
  const bool fit = format != "json" && options.limit == 0;
  if (fit) options.limit = TrailsThatFit(style);
  ViewDocument doc;
  doc.format = format;
  doc.missing = fetched->missing;
  NoteSkipped(fetched->skipped, &doc);
  if (format == "json" && context.stream_documents) {
    // Streamed: each trail's shape is made as it is written (TrailOptions::shapes), from the
    // grid, which the stream keeps.
    struct Streamed {
      MergedGrid grid;
      TrailsView view;
    };
    auto streamed = std::make_shared<Streamed>();
    streamed->grid = std::move(fetched->grid);
    options.shapes = false;
    streamed->view = AssembleTrails(streamed->grid, options);
    streamed->view.missing_shards = fetched->missing;
    doc.stream = [streamed](const std::function<void(std::string_view)>& emit) {
      WriteTrailsJson(streamed->view, emit);
    };
    return doc;
  }
  TrailsView view = AssembleTrails(fetched->grid, options);
  view.fitted = fit;
  view.missing_shards = fetched->missing;

  std::string bytes;
  if (format == "json") {
    bytes = RenderTrailsJson(view);
  } else if (format == "png") {
    Result<std::string> png = RenderTrailsPng(view, style);
    if (!png.ok()) return png.status();
    bytes = std::move(png).value();
  } else {
    bytes = RenderTrailsSvg(view, style);
  }
  doc.bytes = std::move(bytes);
  return doc;
}

}  // namespace trailmap
