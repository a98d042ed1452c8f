#include "aggregator/scan/histogram_query.h"

#include <rocksdb/db.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "aggregator/scan/host_mask.h"
#include "aggregator/store/keys.h"
#include "aggregator/scan/scan_parts.h"
#include "aggregator/scan/query_budget.h"
#include "aggregator/store/rollup.h"
#include "aggregator/scan/series_filter.h"
#include "core/predicate.h"
#include "core/series.h"

namespace trailmap::aggregator {
namespace {

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

// The host ids [lo, hi) a slice reads: all of them, or its share of a one-column plan's hosts.
struct HostRange {
  uint32_t lo = 0;
  uint32_t hi = UINT32_MAX;
  bool Holds(uint32_t host) const { return host >= lo && host < hi; }
};

// Builds one slice's partial from segments read in time order (or, for one column, host after
// host); columns count from query.from.
class SliceScan {
 public:
  SliceScan(const Catalog& catalog, const HistogramQuery& query, const HostRange& hosts,
            const HostMask& allowed, const Predicate& where, const AggregatePlan* aggregate,
            QueryBudget* budget, bool pass_through, Partial* out)
      : query_(query), hosts_(hosts), allowed_(allowed), grouping_(catalog, query.group_by),
        filter_(catalog, where), aggregate_(aggregate), budget_(budget), meter_(budget),
        out_(out) {
    const auto [low, high] = where.ValueRange();
    all_values_ = low == 0 && high == UINT64_MAX;
    band_ = BucketBand::Of(low, high);
    send_only_ = pass_through;
    pass_through_ = pass_through && all_values_;
  }

  // Merges the keys of `it`'s family with second in [lo, hi) (the iterator's upper bound is at or
  // past hi). False once out->status is an error.
  bool Scan(rocksdb::Iterator* it, std::string_view family, uint32_t metric, int64_t lo,
            int64_t hi) {
    DataKey key;
    for (it->Seek(DataKeyPrefix(metric, lo)); it->Valid(); it->Next()) {
      if (!Decode(*it, family, &key)) return false;
      if (key.second >= hi || key.metric != metric) break;
      if (!hosts_.Holds(key.host)) continue;  // another slice's
      if (!Visit(family, key, it->value())) return false;
    }
    return Ended(*it, family);
  }

  // Reads the key `it` is at into *key; false (out->status set) when it is not a data key.
  bool Decode(const rocksdb::Iterator& it, std::string_view family, DataKey* key) {
    const rocksdb::Slice k = it.key();
    if (DecodeDataKey(std::string_view(k.data(), k.size()), key)) return true;
    out_->status = Status::Corruption(std::string(family) + ": key of " +
                                      std::to_string(k.size()) + " bytes");
    return false;
  }

  // After an iterator stopped: false (out->status set) when it stopped on an error.
  bool Ended(const rocksdb::Iterator& it, std::string_view family) {
    if (it.status().ok()) return true;
    out_->status = Status::IOError(std::string(family) + " scan: " + it.status().ToString());
    return false;
  }

  // One stored value of the metric read, within the slice: counted against the budget, kept or
  // not by the query's hosts and predicate, merged into its cell. False once out->status is an
  // error.
  bool Visit(std::string_view family, const DataKey& key, const rocksdb::Slice& value) {
    if (Status s = meter_.Add(); !s.ok()) {  // every key visited counts, kept or not
      out_->status = s;
      return false;
    }
    if (aggregate_ != nullptr) {
      // An aggregate key: host is the owner group, series the value (aggregates.h).
      if (key.host >= aggregate_->groups.size() || !aggregate_->groups[key.host]) return true;
      if (key.series >= aggregate_->values.size() || !aggregate_->values[key.series]) return true;
    } else {
      if (!allowed_.Keeps(key.host, key.second)) return true;
      if (!filter_.Passes(key.host, key.series)) return true;
    }
    if (Status s = Add(key, value); !s.ok()) {
      out_->status = s.code() == Status::Code::kResourceExhausted
                         ? s
                         : Status::Corruption(std::string(family) + ": " + Describe(key) + ": " +
                                              s.message());
      return false;
    }
    return true;
  }

  Status FlushKeys() { return meter_.Flush(); }

  void Finish() {
    // A value comparison may leave a cell with nothing in it: answers hold non-empty cells only.
    if (!all_values_) {
      std::erase_if(out_->cells, [](const QueryCell& c) { return c.histogram.empty(); });
    }
    if (send_only_) {
      // An answer only sent on is encoded cell by cell on the slices' threads, not one after
      // another on the query's (a columns query of 1,000 hosts spent ~7% of its CPU there). A
      // cell split between slices is decoded again by Combine; a saturated one stays decoded,
      // for the store to count.
      for (QueryCell& cell : out_->cells) {
        if (!cell.encoded.empty() || cell.histogram.saturated()) continue;
        cell.histogram.EncodeTo(&cell.encoded);
        cell.histogram = Histogram();
      }
    }
    out_->groups = std::move(aggregate_ != nullptr ? aggregate_names_ : grouping_.names());
  }

 private:
  // The group of an aggregate key: its value's name, interned as the scan meets it.
  uint32_t AggregateGroup(uint32_t value) {
    if (value >= aggregate_group_.size()) aggregate_group_.resize(value + 1, -1);
    if (aggregate_group_[value] < 0) {
      const std::string& name = aggregate_->value_group[value];
      auto it = std::find(aggregate_names_.begin(), aggregate_names_.end(), name);
      aggregate_group_[value] = static_cast<int32_t>(it - aggregate_names_.begin());
      if (it == aggregate_names_.end()) aggregate_names_.push_back(name);
    }
    return static_cast<uint32_t>(aggregate_group_[value]);
  }

  Status Add(const DataKey& key, const rocksdb::Slice& v) {
    const uint32_t group =
        aggregate_ != nullptr ? AggregateGroup(key.series) : grouping_.GroupOf(key.host, key.series);
    const uint64_t column =
        (static_cast<uint64_t>(key.second) - static_cast<uint64_t>(query_.from)) / query_.step;
    if (column != current_column_) {
      current_column_ = column;
      std::fill(cell_of_group_.begin(), cell_of_group_.end(), -1);
    }
    if (group >= cell_of_group_.size()) cell_of_group_.resize(group + 1, -1);
    std::vector<QueryCell>& cells = out_->cells;
    const std::string_view value(v.data(), v.size());
    if (!all_values_) {
      // Most stored histograms of a narrow band (the slow requests of a region) hold none of
      // it: their headers say so, and they make no cell.
      Result<bool> touches = Histogram::EncodedTouches(value, band_);
      if (!touches.ok()) return touches.status();
      if (!*touches) return Status::Ok();
    }
    if (cell_of_group_[group] < 0) {
      if (budget_ != nullptr) {
        if (Status s = budget_->ChargeCells(1); !s.ok()) return s;
        if (Status s = budget_->CheckGroups(group + 1); !s.ok()) return s;
      }
      cell_of_group_[group] = static_cast<int32_t>(cells.size());
      cells.push_back(QueryCell{static_cast<uint32_t>(column), group, Histogram(), {}});
      if (pass_through_) {
        // Passed through undecoded unless a second value joins it (QueryCell::encoded); checked
        // as a decode would, so a bad value is reported here, naming its key, as before.
        if (Status s = Histogram::Validate(value); !s.ok()) return s;
        cells.back().encoded.assign(value);
        return Status::Ok();
      }
    }
    QueryCell& cell = cells[cell_of_group_[group]];
    // A comparison on the metric's value keeps the buckets whose reported value (the midpoint)
    // lies in [low, high]; count, min, max and sum of what is kept come from the midpoints.
    if (!all_values_) return cell.histogram.MergeEncodedBand(value, band_);
    if (Status s = cell.Materialize(); !s.ok()) return s;
    return cell.histogram.MergeEncoded(value);
  }

  const HistogramQuery& query_;
  const HostRange hosts_;
  const HostMask& allowed_;
  Grouping grouping_;
  SeriesFilter filter_;
  const AggregatePlan* aggregate_;
  QueryBudget* budget_;  // null: no limits
  KeyMeter meter_;
  std::vector<int32_t> aggregate_group_;  // value id -> index in aggregate_names_, or -1
  std::vector<std::string> aggregate_names_;
  Partial* out_;
  BucketBand band_;  // the buckets a value comparison of the predicate keeps
  bool all_values_ = true;
  bool send_only_ = false;     // HistogramScan::pass_through: cells leave encoded (Finish)
  bool pass_through_ = false;  // HistogramScan::pass_through, and the predicate keeps all values
  std::vector<int32_t> cell_of_group_;  // for the current column: group -> index in cells, or -1
  uint64_t current_column_ = UINT64_MAX;
};

// At most this many stored seconds are read host after host: beyond (a long column read from
// the 1 s family alone), an iterator per second costs more than the cache misses it saves.
constexpr uint64_t kMaxHostAfterHostSeconds = 4096;

// True when every segment of `plan` lies in one column of `query` and it reads from 2 to
// kMaxHostAfterHostSeconds keys per series: a per-host view (columns, trails), whose one column
// is read host after host.
bool OneColumn(const HistogramQuery& query, const std::vector<ScanSegment>& plan) {
  if (plan.empty()) return false;
  const auto column = [&query](int64_t t) {
    return (static_cast<uint64_t>(t) - static_cast<uint64_t>(query.from)) / query.step;
  };
  if (column(plan.front().lo) != column(plan.back().hi - 1)) return false;
  uint64_t seconds = 0;
  for (const ScanSegment& segment : plan) {
    seconds += (static_cast<uint64_t>(segment.hi) - static_cast<uint64_t>(segment.lo)) /
               kHistogramResolutions[segment.resolution].seconds;
  }
  return seconds >= 2 && seconds <= kMaxHostAfterHostSeconds;
}

// One stored second of a one-column plan: an iterator over the keys of [second, second +
// resolution) of its family, and the key it is at.
struct KeySecond {
  std::string_view family;
  std::string upper;  // the iterator's upper bound: must outlive it
  rocksdb::Slice upper_slice;
  std::unique_ptr<rocksdb::Iterator> it;
  DataKey key;
};

// Scans a plan whose segments all lie in one column (OneColumn) host after host instead of second
// after second: every stored second of it (at its resolution) gets its own iterator, up to
// kMaxKeySeconds at a time, and their keys are merged in (host, series) order, so each cell
// takes all its values while its buckets are in the CPU's cache. In key order each cell's
// buckets (a window of ~1,000 counters: 8 KB) left the cache between two of its merges, 1,000
// cells apart: the columns of 1,000 hosts x 10 minutes spent most of their time on those misses
// (docs/benchmarks-log.md, "The views at fleet scale"). The cells, and what the budget is charged, are the same as in
// key order: a cell's merges add up in any order. False once out->status is an error.
//
// With a host range short of all hosts, each iterator reads that range of its second alone (the
// keys of a family lie at its resolution's bucket starts: aggregator/store/rollup.h).
bool ScanHostAfterHost(rocksdb::DB* db, const rocksdb::ReadOptions& base,
                       std::span<rocksdb::ColumnFamilyHandle* const> families,
                       const std::vector<ScanSegment>& plan, uint32_t metric,
                       const HostRange& hosts, SliceScan* scan) {
  constexpr size_t kMaxKeySeconds = 64;
  struct Second {
    size_t resolution;
    int64_t second;
  };
  std::vector<Second> seconds;
  for (const ScanSegment& segment : plan) {
    const int64_t step = kHistogramResolutions[segment.resolution].seconds;
    for (int64_t t = segment.lo; t < segment.hi; t += step) {
      seconds.push_back({segment.resolution, t});
    }
  }
  for (size_t first = 0; first < seconds.size(); first += kMaxKeySeconds) {
    const size_t n = std::min(kMaxKeySeconds, seconds.size() - first);
    std::vector<KeySecond> open(n);
    std::vector<size_t> heap;  // indexes into `open`, smallest (host, series) on top
    const auto later = [&open](size_t a, size_t b) {
      return std::tie(open[a].key.host, open[a].key.series, a) >
             std::tie(open[b].key.host, open[b].key.series, b);
    };
    // The next key of open[i], onto the heap; false once out->status is an error.
    const auto push = [&](size_t i) {
      KeySecond& ks = open[i];
      if (!ks.it->Valid()) return scan->Ended(*ks.it, ks.family);
      if (!scan->Decode(*ks.it, ks.family, &ks.key)) return false;
      heap.push_back(i);
      std::push_heap(heap.begin(), heap.end(), later);
      return true;
    };
    for (size_t i = 0; i < n; ++i) {
      const auto [resolution, second] = seconds[first + i];
      KeySecond& ks = open[i];
      ks.family = kHistogramResolutions[resolution].family;
      ks.upper = hosts.hi == UINT32_MAX
                     ? DataKeyPrefix(metric, second + kHistogramResolutions[resolution].seconds)
                     : EncodeDataKey(DataKey{metric, second, hosts.hi, 0});
      ks.upper_slice = rocksdb::Slice(ks.upper);
      rocksdb::ReadOptions options = base;
      options.iterate_upper_bound = &ks.upper_slice;
      ks.it.reset(db->NewIterator(options, families[resolution]));
      ks.it->Seek(EncodeDataKey(DataKey{metric, second, hosts.lo, 0}));
      if (!push(i)) return false;
    }
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      const size_t i = heap.back();
      heap.pop_back();
      KeySecond& ks = open[i];
      if (!scan->Visit(ks.family, ks.key, ks.it->value())) return false;
      ks.it->Next();
      if (!push(i)) return false;
    }
  }
  return true;
}

// Scans [lo, hi) of the metric as PlanScan says, one iterator per family used.
void ScanSlice(rocksdb::DB* db, std::span<rocksdb::ColumnFamilyHandle* const> families,
               const std::vector<int64_t>& pending, const std::vector<int64_t>& pending_blocks,
               const rocksdb::Snapshot* snapshot,
               const Catalog& catalog, const HistogramQuery& query, uint32_t metric, int64_t lo,
               int64_t hi, const HostRange& hosts, const HostMask& allowed,
               const Predicate& where, const AggregatePlan* aggregate, QueryBudget* budget,
               bool pass_through, Partial* out) {
  const std::string upper = DataKeyPrefix(metric, hi);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read_options;
  read_options.iterate_upper_bound = &upper_slice;
  read_options.snapshot = snapshot;
  read_options.adaptive_readahead = true;
  std::vector<std::unique_ptr<rocksdb::Iterator>> iterators(families.size());

  SliceScan scan(catalog, query, hosts, allowed, where, aggregate, budget, pass_through, out);
  // A replicated query's plan is cut at every epoch's start: no bucket read holds seconds of
  // two epochs, whose owners differ (core/cluster.h).
  std::vector<ScanSegment> plan;
  int64_t at = lo;
  std::vector<int64_t> cuts;
  if (query.replicas) cuts = EpochCuts(query.replicas->cluster, lo, hi);
  cuts.push_back(hi);
  for (int64_t cut : cuts) {
    for (const ScanSegment& s :
         PlanScan(query, at, cut, families.size(), pending, pending_blocks)) {
      plan.push_back(s);
    }
    at = cut;
  }
  if (OneColumn(query, plan)) {
    if (!ScanHostAfterHost(db, read_options, families, plan, metric, hosts, &scan)) return;
    plan.clear();
  }
  for (const ScanSegment& segment : plan) {
    std::unique_ptr<rocksdb::Iterator>& it = iterators[segment.resolution];
    if (!it) it.reset(db->NewIterator(read_options, families[segment.resolution]));
    if (!scan.Scan(it.get(), kHistogramResolutions[segment.resolution].family, metric, segment.lo,
                   segment.hi)) {
      return;
    }
  }
  // The keys still in the meter: a budget the last batch passed may fail here.
  if (Status s = scan.FlushKeys(); !s.ok()) {
    out->status = s;
    return;
  }
  scan.Finish();
}

int64_t CeilTo(int64_t t, uint32_t r) {
  const int64_t floor = BucketStart(t, r);
  return floor == t ? t : floor + r;
}

void Append(size_t resolution, int64_t lo, int64_t hi, std::vector<ScanSegment>* plan) {
  if (lo >= hi) return;
  if (!plan->empty() && plan->back().resolution == resolution && plan->back().hi == lo) {
    plan->back().hi = hi;
  } else {
    plan->push_back(ScanSegment{resolution, lo, hi});
  }
}

// Plans [lo, hi), which lies within one column, with resolutions up to index `coarsest`: its
// coarsest aligned buckets in the middle, the edges planned finer.
void PlanPiece(int64_t lo, int64_t hi, size_t coarsest, std::vector<ScanSegment>* plan) {
  for (size_t r = coarsest; r > 0; --r) {
    const uint32_t seconds = kHistogramResolutions[r].seconds;
    const int64_t a = CeilTo(lo, seconds);
    const int64_t b = BucketStart(hi, seconds);
    if (a < b) {
      PlanPiece(lo, a, r - 1, plan);
      Append(r, a, b, plan);
      PlanPiece(b, hi, r - 1, plan);
      return;
    }
  }
  Append(0, lo, hi, plan);
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
      // A cell split between slices: both halves decoded (validated when read), then merged.
      (void)cells[kept - 1].Materialize();
      (void)cells[i].Materialize();
      cells[kept - 1].histogram.Merge(cells[i].histogram);
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

namespace {

// Plans [lo, hi) within one column, reading pending minutes from `hist`. `next` walks
// pending_minutes along with the columns.
void PlanColumn(int64_t lo, int64_t hi, size_t coarsest, const std::vector<int64_t>& pending,
                size_t* next, std::vector<ScanSegment>* plan) {
  while (*next < pending.size() && pending[*next] + static_cast<int64_t>(kRollupMinute) <= lo) {
    ++*next;
  }
  int64_t at = lo;
  for (size_t i = *next; i < pending.size() && pending[i] < hi; ++i) {
    const int64_t p_lo = std::max(at, pending[i]);
    const int64_t p_hi = std::min(hi, pending[i] + static_cast<int64_t>(kRollupMinute));
    if (p_lo >= p_hi) continue;
    PlanPiece(at, p_lo, coarsest, plan);
    Append(0, p_lo, p_hi, plan);
    at = p_hi;
  }
  PlanPiece(at, hi, coarsest, plan);
}

// The 10-minute blocks whose `hist_600s` keys may be behind: those pending, and those holding a
// pending minute (whose block is marked only once the minute is rolled up). Sorted, unique.
std::vector<int64_t> BlocksToReadFiner(const std::vector<int64_t>& pending_minutes,
                                       const std::vector<int64_t>& pending_blocks) {
  std::vector<int64_t> blocks = pending_blocks;
  for (int64_t minute : pending_minutes) blocks.push_back(BucketStart(minute, kRollupBlock));
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  return blocks;
}

// PlanColumn, but a block in `blocks` is planned with `hist_60s` at the coarsest. `next_block`
// walks `blocks` along with the columns.
void PlanColumnBlocks(int64_t lo, int64_t hi, size_t coarsest, const std::vector<int64_t>& pending,
                      const std::vector<int64_t>& blocks, size_t* next_pending, size_t* next_block,
                      std::vector<ScanSegment>* plan) {
  constexpr int64_t kBlock = kRollupBlock;
  constexpr size_t kFinerThanBlock = 2;  // hist_60s
  static_assert(kHistogramResolutions[kFinerThanBlock + 1].seconds == kRollupBlock);
  if (coarsest <= kFinerThanBlock) {
    PlanColumn(lo, hi, coarsest, pending, next_pending, plan);
    return;
  }
  while (*next_block < blocks.size() && blocks[*next_block] + kBlock <= lo) ++*next_block;
  int64_t at = lo;
  for (size_t i = *next_block; i < blocks.size() && blocks[i] < hi; ++i) {
    const int64_t b_lo = std::max(at, blocks[i]);
    const int64_t b_hi = std::min(hi, blocks[i] + kBlock);
    if (b_lo >= b_hi) continue;
    PlanColumn(at, b_lo, coarsest, pending, next_pending, plan);
    PlanColumn(b_lo, b_hi, kFinerThanBlock, pending, next_pending, plan);
    at = b_hi;
  }
  PlanColumn(at, hi, coarsest, pending, next_pending, plan);
}

}  // namespace

std::vector<ScanSegment> PlanScan(const HistogramQuery& query, int64_t lo, int64_t hi,
                                  size_t resolutions, const std::vector<int64_t>& pending_minutes,
                                  const std::vector<int64_t>& pending_blocks) {
  std::vector<ScanSegment> plan;
  const size_t coarsest = std::min(resolutions, kHistogramResolutionCount) - 1;
  const uint64_t columns = (static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo)) / query.step + 2;
  // A column narrower than the finest rollup holds no bucket of it; a plan per column is only
  // made for as many columns as a query may ask for.
  if (coarsest == 0 || query.step < kHistogramResolutions[1].seconds ||
      columns > kMaxQueryColumns + 2) {
    Append(0, lo, hi, &plan);
    return plan;
  }
  const uint64_t first =
      (static_cast<uint64_t>(lo) - static_cast<uint64_t>(query.from)) / query.step;
  size_t next_pending = 0;
  size_t next_block = 0;
  const std::vector<int64_t> blocks = BlocksToReadFiner(pending_minutes, pending_blocks);
  for (uint64_t c = first;; ++c) {
    const int64_t column_lo =
        static_cast<int64_t>(static_cast<uint64_t>(query.from) + c * query.step);
    if (column_lo >= hi) break;
    const int64_t column_hi = column_lo + static_cast<int64_t>(query.step);
    PlanColumnBlocks(std::max(lo, column_lo), std::min(hi, column_hi), coarsest, pending_minutes,
                     blocks, &next_pending, &next_block, &plan);
  }
  return plan;
}

Result<HistogramAnswer> RunHistogramQuery(const HistogramScan& scan, const Catalog& catalog,
                                          const HistogramQuery& query) {
  rocksdb::DB* const db = scan.db;
  const std::span<rocksdb::ColumnFamilyHandle* const> families = scan.families;
  const std::vector<int64_t>& pending = scan.pending_minutes;
  if (families.empty()) return Status::InvalidArgument("no histogram family to read");
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

  const AggregatePlan* aggregate = scan.aggregate;
  const uint32_t read_metric = aggregate != nullptr ? aggregate->metric : *metric_id;
  const HostMask allowed =
      aggregate != nullptr
          ? HostMask()
          : HostMask::Make(catalog, query.hosts, query.replicas, query.from, query.to);
  if (allowed.keeps_none()) return answer;

  // Plans that read few keys are not worth a thread.
  const std::vector<ScanSegment> whole =
      PlanScan(query, query.from, query.to, families.size(), pending, scan.pending_blocks);
  uint64_t keys_per_series = 0;
  for (const ScanSegment& segment : whole) {
    keys_per_series += (static_cast<uint64_t>(segment.hi) - static_cast<uint64_t>(segment.lo)) /
                       kHistogramResolutions[segment.resolution].seconds;
  }
  // One column of many hosts (a per-host view): the slices share the hosts out instead of the
  // time, each reading every second of its hosts.
  const uint64_t hosts = aggregate != nullptr ? 0 : catalog.host_count();
  const bool by_hosts = scan.threads > 1 && OneColumn(query, whole) &&
                        hosts >= 2 * kMinHostsPerThread &&
                        keys_per_series * hosts >= 2 * kMinKeysPerThread;
  const int parts =
      by_hosts || keys_per_series >= kMinKeysPerThread * 2 ? std::max(1, scan.threads) : 1;
  const std::vector<int64_t> bounds =
      by_hosts ? std::vector<int64_t>(parts + 1, query.to) : SliceBounds(query, parts);
  std::vector<HostRange> host_ranges(parts);
  for (int i = 0; by_hosts && i < parts; ++i) {
    host_ranges[i].lo = static_cast<uint32_t>(hosts * i / parts);
    if (i + 1 < parts) host_ranges[i].hi = static_cast<uint32_t>(hosts * (i + 1) / parts);
  }
  // Every slice reads the same snapshot, so the answer is one consistent state.
  std::optional<rocksdb::ManagedSnapshot> own_snapshot;
  const rocksdb::Snapshot* snapshot = scan.snapshot;
  if (snapshot == nullptr) snapshot = own_snapshot.emplace(db).snapshot();
  std::vector<Partial> partials(parts);
  RunScanParts(parts, [&](int i) {
    ScanSlice(db, families, pending, scan.pending_blocks, snapshot, catalog, query, read_metric,
              by_hosts ? query.from : bounds[i], bounds[i + 1], host_ranges[i], allowed, *where,
              aggregate, scan.budget, scan.pass_through, &partials[i]);
  });

  if (Status s = Combine(&partials, &answer); !s.ok()) return s;
  return answer;
}

}  // namespace trailmap::aggregator
