// Partials: the answers of every shard merged into one grid of histograms.
//
// Each shard answers a HistogramQuery with its own group names (the hosts it owns, or the field
// values it saw) and the non-empty (column, group) cells. MergePartials unifies the group names
// across shards (sorted, so output does not depend on which shard answered first) and adds up
// the histograms of equal (column, group), which is exact: histograms share one bucket layout.
//
// Value types; no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/histogram.h"
#include "core/query_wire.h"
#include "core/status.h"

namespace trailmap {

struct MergedGrid {
  std::string metric;
  MetricKind kind = MetricKind::kLatency;
  std::string unit = "ns";  // the metric's base unit; "ns" when no shard had data
  int64_t from = 0;         // unix seconds; column c covers [from + c*step, from + (c+1)*step)
  int64_t to = 0;
  uint32_t step = 1;
  uint32_t columns = 0;
  std::string group_by;                       // "" (one group), "host" or a field key
  std::vector<std::string> groups;            // sorted; {""} when not grouped
  std::vector<std::vector<Histogram>> cells;  // cells[group][column]

  // Everything in one column, over all groups.
  Histogram Column(uint32_t column) const;
  // Everything in one group, over all columns.
  Histogram Group(size_t group) const;
  // Everything.
  Histogram Total() const;
};

// Merges the answers to `query`, taking their histograms: a cell only one shard answered is moved
// into the grid, not copied (a 3,600-column heat map holds ~30 MB of histograms, and a copy of
// them cost the CLI a quarter of its time). Refuses cells outside the query's columns or groups,
// and shards that disagree on the metric's unit or kind, naming the shard.
Result<MergedGrid> MergePartials(const HistogramQuery& query, std::vector<Answer>&& answers);

}  // namespace trailmap
