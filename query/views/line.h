// LineView: one line per group over time — the line and area charts of scalars (cpu.usage by
// host or by mode, mem.rss, net.rx.bytes), and of any histogram metric's per-column statistic.
//
// Built from a SummaryGrid: each (group, column) cell's count, sum, min and max — what the
// aggregators answer to a summaries query, merged across shards — turned into the chosen
// statistic: avg = sum / count, max, min, or sum. For a scalar metric each host-second is one
// sample (aggregator/scan/scalar_query.h), so `--by host --stat avg` at a 1 s step is each host's own
// value, and `--stat sum` over hosts is the fleet's total. Values are in the metric's display
// unit: a fixed-point histogram unit ("0.01%") is scaled back ("%"). A merged histogram grid
// (query/fetch/partials.h) can be summarized into one as well (SummarizeGrid).
//
// More groups than `top`: the `top` groups with the largest mean keep their own lines and the
// rest are merged, cell by cell, into one line "other" (summaries add exactly, so avg, min, max
// and sum of "other" are exact over what it holds). Columns without data are gaps (NaN).
//
// Value types; pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/query_wire.h"
#include "query/fetch/partials.h"

namespace trailmap {

enum class LineStat { kAvg, kMax, kMin, kSum };
const char* LineStatName(LineStat stat);
Result<LineStat> ParseLineStat(std::string_view text);

struct LineOptions {
  LineStat stat = LineStat::kAvg;
  size_t top = 10;       // lines of their own; the rest become "other"; 0 = every group
  bool area = false;     // fill under each line
  bool stacked = false;  // stack the lines (implies area); "other" on top
};

struct LineSeries {
  std::string name;
  std::vector<double> values;  // one per column, in `unit`; NaN = no data
  double mean = 0;             // over the columns with data (the top-N key)
  bool other = false;          // the merged rest
};

struct LineView {
  std::string metric;
  std::string unit;  // display unit ("%", "B", "B/s", "ns")
  std::string by;    // "" = one line
  LineStat stat = LineStat::kAvg;
  bool area = false;
  bool stacked = false;
  int64_t from = 0;
  uint32_t step = 1;
  uint32_t columns = 0;
  std::vector<LineSeries> series;  // by mean, largest first; "other" last
  size_t merged = 0;               // groups folded into "other"
  std::vector<std::string> missing_shards;

  int64_t ColumnStart(uint32_t c) const { return from + static_cast<int64_t>(c) * step; }
  // The top of the value axis: the largest value drawn (stacked: the largest column total).
  double Top() const;
  // The lowest value drawn, or 0 when none is below 0 (gauges and counter rates may be negative:
  // a temperature, a queue's net change). Stacked: the lowest column total.
  double Bottom() const;
};

// Per group and column a summary (count 0: no data), values in `unit` (the display unit).
struct SummaryGrid {
  std::string metric;
  std::string unit;
  std::string group_by;
  int64_t from = 0;
  uint32_t step = 1;
  uint32_t columns = 0;
  std::vector<std::string> groups;              // sorted
  std::vector<std::vector<CellSummary>> cells;  // cells[group][column]
};

// The answers of every shard to `query` (asked with summaries = true), merged: group names
// unified and sorted, equal cells added. Corruption for a cell outside the query's columns and
// for shards that disagree on the unit, naming the shard.
Result<SummaryGrid> MergeSummaries(const HistogramQuery& query, const std::vector<Answer>& answers);
// A histogram grid's cells summarized, a fixed-point unit scaled back to the display unit.
SummaryGrid SummarizeGrid(const MergedGrid& grid);

LineView AssembleLineView(const SummaryGrid& grid, const LineOptions& options);
LineView AssembleLineView(const MergedGrid& grid, const LineOptions& options);

}  // namespace trailmap
