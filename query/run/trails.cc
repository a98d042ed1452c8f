#include "query/run/trails.h"

#include <functional>
#include <memory>
#include <ostream>
#include <string_view>
#include <tuple>

#include "core/units.h"
#include "query/fetch/request_checks.h"
#include "query/render/trails.h"
#include "query/run/words.h"
#include "query/views/trails.h"

namespace trailmap {
Result<ViewDocument> RunTrailsView(const TrailsRequest& flags, const QueryContext& context) {
  if (Status s = TrailsParameters().Check(flags); !s.ok()) return s;
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
  if (format != "json") {
    const int width = TrailsStyle{}.plot_width;
    const std::string size = "--height " + std::to_string(flags.height) + " × the trails' width " +
                             std::to_string(width);
    if (Status s = CheckImagePixels(size, width, flags.height); !s.ok()) return s;
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
    Result<std::pair<uint64_t, uint64_t>> band = ParseValueRange(flags.range, unit);
    if (!band.ok()) return band.status();
    std::tie(options.lo, options.hi) = *band;
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
