#include "query/fetch/partials.h"

#include <algorithm>
#include <map>

namespace trailmap {

Histogram MergedGrid::Column(uint32_t column) const {
  Histogram out;
  for (const auto& row : cells) (void)out.Merge(row[column]);
  return out;
}

Histogram MergedGrid::Group(size_t group) const {
  Histogram out;
  for (const Histogram& h : cells[group]) (void)out.Merge(h);
  return out;
}

Histogram MergedGrid::Total() const {
  Histogram out;
  for (size_t g = 0; g < cells.size(); ++g) (void)out.Merge(Group(g));
  return out;
}

Result<MergedGrid> MergePartials(const HistogramQuery& query, std::vector<Answer>&& answers) {
  MergedGrid grid;
  grid.metric = query.metric;
  grid.from = query.from;
  grid.to = query.to;
  grid.step = query.step;
  grid.columns = query.columns();
  grid.group_by = query.group_by;

  // Kind and unit: from the first shard that has data; the others must agree.
  std::string unit_from;
  for (const Answer& a : answers) {
    const HistogramAnswer& h = a.histograms;
    if (h.cells.empty() || h.unit.empty()) continue;
    if (unit_from.empty()) {
      grid.unit = h.unit;
      grid.kind = h.kind;
      unit_from = a.shard;
    } else if (h.unit != grid.unit || h.kind != grid.kind) {
      return Status::Corruption("shards disagree on " + query.metric + ": " + unit_from + " says " +
                                MetricKindName(grid.kind) + " in " + grid.unit + ", " + a.shard +
                                " says " + MetricKindName(h.kind) + " in " + h.unit);
    }
  }

  std::map<std::string, size_t> group_index;
  for (const Answer& a : answers) {
    for (const std::string& g : a.histograms.groups) group_index.emplace(g, 0);
  }
  if (query.group_by.empty()) group_index.emplace("", 0);
  for (auto& [name, index] : group_index) {
    index = grid.groups.size();
    grid.groups.push_back(name);
  }
  grid.cells.assign(grid.groups.size(), std::vector<Histogram>(grid.columns));

  for (Answer& a : answers) {
    HistogramAnswer& h = a.histograms;
    for (QueryCell& cell : h.cells) {
      if (cell.column >= grid.columns || cell.group >= h.groups.size()) {
        return Status::Corruption(a.shard + ": cell (column " + std::to_string(cell.column) +
                                  ", group " + std::to_string(cell.group) +
                                  ") is outside the query's " + std::to_string(grid.columns) +
                                  " columns and its " + std::to_string(h.groups.size()) +
                                  " groups");
      }
      const size_t g = group_index.at(h.groups[cell.group]);
      Histogram& into = grid.cells[g][cell.column];
      if (into.empty() && !into.saturated()) {
        into = std::move(cell.histogram);
      } else {
        into.Merge(cell.histogram);  // saturates, never fails
      }
    }
  }
  return grid;
}

}  // namespace trailmap
