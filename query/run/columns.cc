#include "query/run/columns.h"

#include <ostream>
#include <utility>

#include "core/units.h"
#include "query/fetch/request_checks.h"
#include "query/render/columns.h"
#include "query/run/words.h"
#include "query/views/columns.h"

namespace trailmap {
Result<ViewDocument> RunColumnsView(const ColumnsRequest& flags, const QueryContext& context) {
  // Everything a user typed is checked before any shard is asked: the table's ranges and choices,
  // then the words.
  if (Status s = ColumnsParameters().Check(flags); !s.ok()) return s;
  Result<TimeRange> range = ParseTimeRange(flags.query, context.now);
  if (!range.ok()) return range.status();
  if (!flags.query.by.empty() && flags.query.by != "host") {
    return Status::InvalidArgument("--by: the columns are always one per host");
  }
  ColumnsOptions options;
  options.rows = flags.rows;
  options.reverse = flags.reverse;
  options.limit = flags.limit;
  Result<ColumnsSort> sort = ParseColumnsSort(flags.sort);
  if (!sort.ok()) return Status::InvalidArgument("--sort: " + sort.status().message());
  options.sort = *sort;
  Result<ColumnShading> shading = ParseColumnShading(flags.shading);
  if (!shading.ok()) {
    return Status::InvalidArgument("--shading: " + shading.status().message());
  }
  options.shading = *shading;
  Result<Coloring> coloring = ParseColoring(flags.coloring);
  if (!coloring.ok()) return coloring.status();
  options.coloring = *coloring;
  if (!flags.clip.empty()) {
    Result<double> clip = ParsePercent(flags.clip);
    if (!clip.ok()) {
      return Status::InvalidArgument("--clip: " + clip.status().message());
    }
    options.clip_percent = *clip;
  }
  if (Status s = CheckAxisWords("--ymax", flags.ymax); !s.ok()) return s;
  const std::string format = flags.format.empty() ? "ansi" : flags.format;
  if (format == "ansi") {
    // One character per host: a terminal shows the first hosts that fit, and says so.
    const size_t fit =
        context.terminal_columns > 30 ? static_cast<size_t>(context.terminal_columns) - 10 : 110;
    if (options.limit == 0 || options.limit > fit) options.limit = fit;
  }

  const HistogramQuery query = WholeRangeQuery(flags.query, *range, "host");

  Result<Fetched> fetched = FetchGrid(context, flags.query, query);
  if (!fetched.ok()) return fetched.status();
  if (!flags.ymax.empty()) {
    Result<uint64_t> ymax = ParseAxisFlag("--ymax", flags.ymax, query.metric, fetched->grid.unit);
    if (!ymax.ok()) return ymax.status();
    if (*ymax == 0) return Status::InvalidArgument("--ymax must be above 0");
    options.ymax = *ymax;
  }
  Result<ColumnsView> view = AssembleColumns(std::move(fetched->grid), options);
  if (!view.ok()) return view.status();
  view->missing_shards = fetched->missing;
  if (format == "svg" || format == "png") {
    // Its size follows the hosts that answered, so it is known only now.
    const ColumnsLayout layout = LayoutColumns(*view);
    const std::string size = "the columns picture (" + std::to_string(view->hosts.size()) +
                             " hosts × --rows " + std::to_string(flags.rows) +
                             "; fewer with --limit) " + std::to_string(layout.width) + " × " +
                             std::to_string(layout.height);
    if (Status s = CheckImagePixels(size, layout.width, layout.height); !s.ok()) return s;
  }

  std::string bytes;
  if (format == "svg") {
    bytes = RenderColumnsSvg(*view);
  } else if (format == "json") {
    bytes = RenderColumnsJson(*view);
  } else if (format == "png") {
    Result<std::string> png = RenderColumnsPng(*view);
    if (!png.ok()) return png.status();
    bytes = std::move(png).value();
  } else {
    bytes = RenderColumnsAnsi(*view);
  }
  ViewDocument doc;
  doc.bytes = std::move(bytes);
  doc.format = format;
  doc.missing = fetched->missing;
  NoteSkipped(fetched->skipped, &doc);
  return doc;
}

}  // namespace trailmap
