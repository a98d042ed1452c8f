#include "aggregator/histogram_query.h"

#include <rocksdb/db.h>

#include <algorithm>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "aggregator/keys.h"
#include "aggregator/series_filter.h"
#include "core/predicate.h"
#include "core/series.h"

namespace trailmap::aggregator {
namespace {

// Adds the buckets of `encoded` whose reported value (the bucket midpoint) lies in [low, high]:
// a comparison on the metric's value selects buckets. Count, min, max and sum of what is kept
// come from the midpoints, within the histogram's 0.8%.
Status MergeBucketsInRange(std::string_view encoded, uint64_t low, uint64_t high, Histogram* into) {
  Result<Histogram> h = Histogram::Decode(encoded);
  if (!h.ok()) return h.status();
  h->ForEachBucket([low, high, into](uint32_t index, uint64_t count) {
    const uint64_t mid = BucketMidpoint(index);
    if (mid >= low && mid <= high) into->Record(mid, count);
  });
  return Status::Ok();
}

// What one scan of a time slice found: its own group names, and cells in column order.
struct Partial {
  Status status;
  std::vector<std::string> groups;
  std::vector<QueryCell> cells;
};

std::string Describe(const DataKey& k) {
  return "second " + std::to_string(k.second) + ", host " + std::to_string(k.host) + ", series " +
         std::to_string(k.series);
}

// Scans [lo, hi) of the metric; columns count from query.from.
void ScanSlice(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* hist,
               const rocksdb::Snapshot* snapshot, const Catalog& catalog,
               const HistogramQuery& query, uint32_t metric, int64_t lo, int64_t hi,
               const std::vector<uint8_t>& allowed, const Predicate& where, Partial* out) {
  const std::string lower = DataKeyPrefix(metric, lo);
  const std::string upper = DataKeyPrefix(metric, hi);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read_options;
  read_options.iterate_upper_bound = &upper_slice;
  read_options.snapshot = snapshot;
  read_options.adaptive_readahead = true;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(read_options, hist));

  Grouping grouping(catalog, query.group_by);
  SeriesFilter filter(catalog, where);
  const auto [low, high] = where.ValueRange();
  const bool all_values = low == 0 && high == UINT64_MAX;
  std::vector<QueryCell>& cells = out->cells;
  std::vector<int32_t> cell_of_group;  // for the current column: group -> index in cells, or -1
  uint64_t current_column = UINT64_MAX;
  DataKey key;
  for (it->Seek(lower); it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key();
    if (!DecodeDataKey(std::string_view(k.data(), k.size()), &key)) {
      out->status = Status::Corruption("hist: key of " + std::to_string(k.size()) + " bytes");
      return;
    }
    if (!allowed.empty() && (key.host >= allowed.size() || !allowed[key.host])) continue;
    if (!filter.Passes(key.host, key.series)) continue;
    const uint32_t group = grouping.GroupOf(key.host, key.series);
    const uint64_t column =
        (static_cast<uint64_t>(key.second) - static_cast<uint64_t>(query.from)) / query.step;
    if (column != current_column) {
      current_column = column;
      std::fill(cell_of_group.begin(), cell_of_group.end(), -1);
    }
    if (group >= cell_of_group.size()) cell_of_group.resize(group + 1, -1);
    if (cell_of_group[group] < 0) {
      cell_of_group[group] = static_cast<int32_t>(cells.size());
      cells.push_back(QueryCell{static_cast<uint32_t>(column), group, Histogram()});
    }
    const rocksdb::Slice v = it->value();
    Histogram& into = cells[cell_of_group[group]].histogram;
    Status s = all_values ? into.MergeEncoded({v.data(), v.size()})
                          : MergeBucketsInRange({v.data(), v.size()}, low, high, &into);
    if (!s.ok()) {
      out->status = s.code() == Status::Code::kResourceExhausted
                        ? s
                        : Status::Corruption("hist: " + Describe(key) + ": " + s.message());
      return;
    }
  }
  if (!it->status().ok()) out->status = Status::IOError("hist scan: " + it->status().ToString());
  // A value comparison may leave a cell with nothing in it: answers hold non-empty cells only.
  if (!all_values) std::erase_if(cells, [](const QueryCell& c) { return c.histogram.empty(); });
  out->groups = std::move(grouping.names());
}

// Slice boundaries: `parts` slices on column boundaries when there are enough columns, else equal
// spans of time (then one column may be split between slices, and Combine merges it).
std::vector<int64_t> SliceBounds(const HistogramQuery& query, int parts) {
  const uint64_t span = static_cast<uint64_t>(query.to) - static_cast<uint64_t>(query.from);
  const uint64_t columns = (span + query.step - 1) / query.step;
  std::vector<int64_t> bounds{query.from};
  for (int i = 1; i < parts; ++i) {
    const uint64_t offset = columns >= static_cast<uint64_t>(parts)
                                ? columns * i / parts * query.step
                                : span * i / parts;
    bounds.push_back(static_cast<int64_t>(static_cast<uint64_t>(query.from) + offset));
  }
  bounds.push_back(query.to);
  return bounds;
}

// Joins the slices' partials: groups sorted by name, cells by (column, group), a cell split
// between slices merged into one.
Status Combine(std::vector<Partial>* partials, HistogramAnswer* answer) {
  std::vector<std::string> names;
  for (Partial& p : *partials) {
    if (!p.status.ok()) return p.status;
    names.insert(names.end(), p.groups.begin(), p.groups.end());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<QueryCell> cells;
  for (Partial& p : *partials) {
    std::vector<uint32_t> rank(p.groups.size());
    for (size_t g = 0; g < p.groups.size(); ++g) {
      rank[g] = static_cast<uint32_t>(std::lower_bound(names.begin(), names.end(), p.groups[g]) -
                                      names.begin());
    }
    for (QueryCell& cell : p.cells) {
      cell.group = rank[cell.group];
      cells.push_back(std::move(cell));
    }
  }
  // Slices are in time order and cells in column order within each: only the groups within a
  // column need sorting.
  std::stable_sort(cells.begin(), cells.end(), [](const QueryCell& a, const QueryCell& b) {
    return a.column != b.column ? a.column < b.column : a.group < b.group;
  });
  size_t kept = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (kept > 0 && cells[kept - 1].column == cells[i].column &&
        cells[kept - 1].group == cells[i].group) {
      if (Status s = cells[kept - 1].histogram.Merge(cells[i].histogram); !s.ok()) return s;
    } else {
      if (kept != i) cells[kept] = std::move(cells[i]);
      ++kept;
    }
  }
  cells.resize(kept);
  answer->groups = std::move(names);
  answer->cells = std::move(cells);
  return Status::Ok();
}

}  // namespace

Result<HistogramAnswer> RunHistogramQuery(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* hist,
                                          const Catalog& catalog, const HistogramQuery& query,
                                          int threads) {
  if (query.step == 0) return Status::InvalidArgument("step must be at least 1 second");
  if (query.from >= query.to) return Status::InvalidArgument("empty time range: from >= to");
  HistogramAnswer answer;
  MetricRecord metric;
  const std::optional<uint32_t> metric_id = catalog.FindMetric(query.metric, &metric);
  if (!metric_id) return answer;
  answer.kind = metric.kind;
  answer.unit = metric.unit;

  Result<Predicate> where = Predicate::Parse(query.where);
  if (!where.ok()) return Status::InvalidArgument("--where: " + where.status().message());

  std::vector<uint8_t> allowed;  // host id -> kept; empty = every host
  if (!query.hosts.empty()) {
    allowed.assign(catalog.host_count() + 1, 0);
    bool any = false;
    for (const std::string& name : query.hosts) {
      if (std::optional<uint32_t> id = catalog.FindHost(name); id && *id < allowed.size()) {
        allowed[*id] = 1;
        any = true;
      }
    }
    if (!any) return answer;
  }

  // Short ranges are not worth a thread.
  const uint64_t span = static_cast<uint64_t>(query.to) - static_cast<uint64_t>(query.from);
  const int parts = span >= kMinSecondsPerThread * 2 ? std::max(1, threads) : 1;
  const std::vector<int64_t> bounds = SliceBounds(query, parts);
  // Every slice reads the same snapshot, so the answer is one consistent state.
  rocksdb::ManagedSnapshot snapshot(db);
  std::vector<Partial> partials(parts);
  std::vector<std::thread> helpers;
  for (int i = 1; i < parts; ++i) {
    try {
      helpers.emplace_back(
          [db, hist, &snapshot, &catalog, &query, &metric_id, &bounds, &allowed, &where, &partials, i] {
            ScanSlice(db, hist, snapshot.snapshot(), catalog, query, *metric_id, bounds[i],
                      bounds[i + 1], allowed, *where, &partials[i]);
          });
    } catch (const std::system_error&) {  // no thread to be had: scan the slice here
      ScanSlice(db, hist, snapshot.snapshot(), catalog, query, *metric_id, bounds[i], bounds[i + 1],
                allowed, *where, &partials[i]);
    }
  }
  ScanSlice(db, hist, snapshot.snapshot(), catalog, query, *metric_id, bounds[0], bounds[1],
            allowed, *where, &partials[0]);
  for (std::thread& t : helpers) t.join();

  if (Status s = Combine(&partials, &answer); !s.ok()) return s;
  return answer;
}

}  // namespace trailmap::aggregator
