#include "aggregator/histogram_query.h"

#include <rocksdb/db.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include "aggregator/keys.h"

namespace trailmap::aggregator {
namespace {

// Maps (host id, series id) to a group index, asking the catalog once per id.
class Grouping {
 public:
  Grouping(const Catalog& catalog, std::string_view group_by)
      : catalog_(catalog), group_by_(group_by) {
    mode_ = group_by.empty() ? Mode::kOne : group_by == "host" ? Mode::kHost : Mode::kField;
    if (mode_ == Mode::kOne) names_.push_back("");
    hosts_.assign(catalog.host_count() + 1, kUnknown);
    series_.assign(catalog.series_count() + 1, kUnknown);
  }

  uint32_t GroupOf(uint32_t host, uint32_t series) {
    switch (mode_) {
      case Mode::kOne:
        return 0;
      case Mode::kHost:
        return HostGroup(host);
      case Mode::kField: {
        if (series >= series_.size()) series_.resize(series + 1, kUnknown);
        if (series_[series] == kUnknown) {
          const SeriesRecord record = catalog_.Series(series);
          const std::string_view value = FieldValue(record.fields, group_by_);
          series_[series] = value.empty() ? kFromHost : Intern(std::string(value));
        }
        return series_[series] == kFromHost ? HostGroup(host) : series_[series];
      }
    }
    return 0;
  }

  std::vector<std::string>& names() { return names_; }

 private:
  enum class Mode { kOne, kHost, kField };
  static constexpr int32_t kUnknown = -1;
  static constexpr int32_t kFromHost = -2;  // the series lacks the field: ask the host's labels

  uint32_t HostGroup(uint32_t host) {
    if (host >= hosts_.size()) hosts_.resize(host + 1, kUnknown);
    if (hosts_[host] == kUnknown) {
      const HostRecord record = catalog_.Host(host);
      if (mode_ == Mode::kHost) {
        hosts_[host] = Intern(record.name);
      } else {
        const std::string_view value = FieldValue(record.labels, group_by_);
        hosts_[host] = Intern(value.empty() ? std::string(kNoGroupValue) : std::string(value));
      }
    }
    return static_cast<uint32_t>(hosts_[host]);
  }

  int32_t Intern(std::string name) {
    auto [it, inserted] = index_.emplace(name, static_cast<uint32_t>(names_.size()));
    if (inserted) names_.push_back(std::move(name));
    return static_cast<int32_t>(it->second);
  }

  const Catalog& catalog_;
  const std::string group_by_;
  Mode mode_;
  std::vector<int32_t> hosts_;   // host id -> group
  std::vector<int32_t> series_;  // series id -> group, or kFromHost
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<std::string> names_;
};

// Sorts the groups by name and the cells by (column, group).
void Canonicalize(std::vector<std::string>* groups, std::vector<QueryCell>* cells) {
  std::vector<uint32_t> order(groups->size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [groups](uint32_t a, uint32_t b) { return (*groups)[a] < (*groups)[b]; });
  std::vector<uint32_t> rank(order.size());
  std::vector<std::string> sorted(order.size());
  for (uint32_t i = 0; i < order.size(); ++i) {
    rank[order[i]] = i;
    sorted[i] = std::move((*groups)[order[i]]);
  }
  *groups = std::move(sorted);
  for (QueryCell& cell : *cells) cell.group = rank[cell.group];
  // Cells are already in column order; only the groups within a column need sorting.
  std::stable_sort(cells->begin(), cells->end(), [](const QueryCell& a, const QueryCell& b) {
    return a.column != b.column ? a.column < b.column : a.group < b.group;
  });
}

std::string Describe(const DataKey& k) {
  return "second " + std::to_string(k.second) + ", host " + std::to_string(k.host) +
         ", series " + std::to_string(k.series);
}

}  // namespace

Result<HistogramAnswer> RunHistogramQuery(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* hist,
                                          const Catalog& catalog, const HistogramQuery& query) {
  if (query.step == 0) return Status::InvalidArgument("step must be at least 1 second");
  if (query.from >= query.to) return Status::InvalidArgument("empty time range: from >= to");
  HistogramAnswer answer;
  MetricRecord metric;
  const std::optional<uint32_t> metric_id = catalog.FindMetric(query.metric, &metric);
  if (!metric_id) return answer;
  answer.kind = metric.kind;
  answer.unit = metric.unit;

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

  const std::string lower = DataKeyPrefix(*metric_id, query.from);
  const std::string upper = DataKeyPrefix(*metric_id, query.to);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read_options;
  read_options.iterate_upper_bound = &upper_slice;
  read_options.adaptive_readahead = true;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(read_options, hist));

  Grouping grouping(catalog, query.group_by);
  std::vector<QueryCell>& cells = answer.cells;
  std::vector<int32_t> cell_of_group;  // for the current column: group -> index in cells, or -1
  uint64_t current_column = UINT64_MAX;
  DataKey key;
  for (it->Seek(lower); it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key();
    if (!DecodeDataKey(std::string_view(k.data(), k.size()), &key)) {
      return Status::Corruption("hist: key of " + std::to_string(k.size()) + " bytes");
    }
    if (!allowed.empty() && (key.host >= allowed.size() || !allowed[key.host])) continue;
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
    Status s = cells[cell_of_group[group]].histogram.MergeEncoded(std::string_view(v.data(), v.size()));
    if (s.code() == Status::Code::kResourceExhausted) return s;
    if (!s.ok()) return Status::Corruption("hist: " + Describe(key) + ": " + s.message());
  }
  if (!it->status().ok()) return Status::IOError("hist scan: " + it->status().ToString());

  answer.groups = std::move(grouping.names());
  Canonicalize(&answer.groups, &answer.cells);
  return answer;
}

}  // namespace trailmap::aggregator
