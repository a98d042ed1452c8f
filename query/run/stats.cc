#include "query/run/stats.h"

#include <ostream>

#include "query/run/catalog.h"
#include "query/render/stats.h"
#include "query/views/stats.h"

namespace trailmap {
Result<ViewDocument> RunStatsView(const StatsRequest& flags, const QueryContext& context) {
  if (flags.format != "table" && flags.format != "json" && flags.format != "csv") {
    return Status::InvalidArgument("--format " + flags.format + ": give table, json or csv");
  }
  Result<TimeRange> range = ParseTimeRange(flags.query, context.now);
  if (!range.ok()) return range.status();
  Result<StatsSort> sort = ParseStatsSort(flags.sort);
  if (!sort.ok())
    return Status::InvalidArgument("--sort: " + sort.status().message());

  const HistogramQuery query = WholeRangeQuery(flags.query, *range, flags.query.by);

  std::future<std::optional<std::string>> overflow =
      StartOverflowNote(context, flags.query, query.from, query.to);
  Result<Fetched> fetched = FetchGrid(context, flags.query, query);
  if (!fetched.ok()) return fetched.status();
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
  ViewDocument doc;
  doc.bytes = std::move(bytes);
  doc.format = flags.format;
  doc.missing = fetched->missing;
  NoteSkipped(fetched->skipped, &doc);
  // Not when a shard is silent: the note would count without it.
  if (fetched->missing.empty()) {
    if (std::optional<std::string> note = overflow.get()) doc.notes.push_back(std::move(*note));
  }
  return doc;
}

}  // namespace trailmap
