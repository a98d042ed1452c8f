#include "query/run/stats.h"

#include <ostream>

#include "query/render/stats.h"
#include "query/run/catalog.h"
#include "query/views/stats.h"

namespace trailmap {
Result<ViewDocument> RunStatsView(const StatsRequest& flags, const QueryContext& context) {
  if (Status s = StatsParameters().Check(flags); !s.ok()) return s;
  Result<TimeRange> range = ParseTimeRange(flags.query, context.now);
  if (!range.ok()) return range.status();
  Result<StatsSort> sort = ParseStatsSort(flags.sort);
  if (!sort.ok()) return Status::InvalidArgument("--sort: " + sort.status().message());

  const HistogramQuery query = WholeRangeQuery(flags.query, *range, flags.query.by);

  const auto started = std::chrono::steady_clock::now();
  Result<Fetched> fetched = FetchGrid(context, flags.query, query);
  if (!fetched.ok()) return fetched.status();
  // The plan's second stage, within what is left of the first's deadline. Not when a shard is
  // silent: the note would count without it.
  std::optional<std::string> overflow;
  if (fetched->missing.empty()) {
    overflow = OverflowNoteFor(context, flags.query, query.from, query.to, started);
  }
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
  if (overflow) doc.notes.push_back(std::move(*overflow));
  return doc;
}

}  // namespace trailmap
