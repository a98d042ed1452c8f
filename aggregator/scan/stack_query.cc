#include "aggregator/scan/stack_query.h"

#include <rocksdb/db.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "aggregator/scan/band_count.h"
#include "aggregator/scan/host_mask.h"
#include "aggregator/store/keys.h"
#include "aggregator/scan/scan_parts.h"
#include "aggregator/scan/query_budget.h"
#include "aggregator/scan/series_filter.h"
#include "aggregator/store/stack_merge_operator.h"
#include "core/counts.h"
#include "core/predicate.h"
#include "core/series.h"

namespace trailmap::aggregator {
namespace {

int64_t FloorMinute(int64_t t) { return t - ((t % 60) + 60) % 60; }

// How many keys RunSeeking steps over before it seeks instead.
constexpr int kMaxSteps = 16;

// A host-second the stack pass seeks to, and how many times its samples count.
struct SeekTarget {
  int64_t second = 0;
  uint32_t host = 0;
  uint64_t weight = 1;
  auto operator<=>(const SeekTarget&) const = default;
};

// count × weight, at most kMaxTotalCount.
uint64_t SaturatingCountTimes(uint64_t count, uint64_t weight, bool* saturated) {
  if (weight != 0 && count > kMaxTotalCount / weight) {
    *saturated = true;
    return kMaxTotalCount;
  }
  return count * weight;
}

// An iterator over `cf` as of `snapshot`, ending below `*upper` (which must outlive it).
std::unique_ptr<rocksdb::Iterator> IteratorBelow(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                                                 const rocksdb::Snapshot* snapshot,
                                                 const rocksdb::Slice* upper) {
  rocksdb::ReadOptions options;
  options.iterate_upper_bound = upper;
  options.snapshot = snapshot;
  return std::unique_ptr<rocksdb::Iterator>(db->NewIterator(options, cf));
}

struct Scan {
  const Catalog& catalog;
  const Predicate& where;
  const HostMask& allowed;      // the hosts read, at each second
  const std::string& group_by;  // "" = no groups
  // (host, series) -> -1 filtered out, else its group's index in `groups`.
  std::unordered_map<uint64_t, int64_t> decided;
  std::vector<std::string> groups;
  std::unordered_map<std::string, uint32_t> group_index;
  std::unordered_map<uint64_t, uint64_t> counts;  // group << 32 | global stack id -> samples
  std::unordered_map<uint64_t, uint64_t>* into = nullptr;  // not null: sums go there instead
  // Not null: every value a seek pass keeps is also added here once, whatever its weight (a
  // region's selected host-seconds, subtracted from the whole range for its baseline).
  std::unordered_map<uint64_t, uint64_t>* once = nullptr;
  bool once_saturated = false;
  // Not null: only these hosts (host id -> 1) are read by Run and RunMinutes (a baseline).
  const std::vector<uint8_t>* listed = nullptr;
  // Not null: these host-seconds (sorted) are left out by Run (a baseline read second by second).
  const std::vector<BandSecond>* excluded = nullptr;
  QueryBudget* budget = nullptr;  // charged per key and distinct stack; null: no limits

  // How many times a range scan counts the value of (host, second): 1, or 0 when left out.
  uint64_t WeightOf(uint32_t host, int64_t second) const {
    if (listed != nullptr && (host >= listed->size() || (*listed)[host] == 0)) return 0;
    if (excluded != nullptr &&
        std::binary_search(excluded->begin(), excluded->end(), BandSecond{second, host, 0},
                           [](const BandSecond& a, const BandSecond& b) {
                             return a.second != b.second ? a.second < b.second : a.host < b.host;
                           })) {
      return 0;
    }
    return 1;
  }

  // The group of (host, series), or -1 when the query leaves it out.
  int64_t GroupOf(uint32_t host, uint32_t series) {
    if (where.always_true() && group_by.empty()) return 0;
    const uint64_t key = (uint64_t{host} << 32) | series;
    auto it = decided.find(key);
    if (it != decided.end()) return it->second;
    const SeriesFieldLookup fields(catalog.Host(host), catalog.Series(series));
    int64_t group = -1;
    if (where.Matches(fields)) {
      group = 0;
      if (!group_by.empty()) {
        const std::string* value = fields.Find(group_by);
        std::string name = value ? *value : kNoGroupValue;  // as histogram queries
        std::replace(name.begin(), name.end(), ';', '_');   // one frame, whatever the value
        auto [g, added] = group_index.emplace(name, static_cast<uint32_t>(groups.size()));
        if (added) groups.push_back(name);
        group = g->second;
      }
    }
    decided.emplace(key, group);
    return group;
  }

  Status Run(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, const rocksdb::Snapshot* snapshot,
             uint32_t metric, int64_t from, int64_t to) {
    if (from >= to) return Status::Ok();
    const std::string lower = DataKeyPrefix(metric, from);
    const std::string upper = DataKeyPrefix(metric, to);
    const rocksdb::Slice upper_slice(upper);
    std::unique_ptr<rocksdb::Iterator> it = IteratorBelow(db, cf, snapshot, &upper_slice);
    DataKey key;
    KeyMeter meter(budget);
    for (it->Seek(lower); it->Valid(); it->Next()) {
      if (Status s = Visit(*it, cf, &meter, &key, kRangeWeight); !s.ok()) return s;
    }
    if (!it->status().ok()) return Status::IOError(cf->GetName() + ": " + it->status().ToString());
    return meter.Flush();
  }

  // [from, to) as an unweighted query reads it: its whole minutes from `stacks_60s`, its ragged
  // ends from `stacks`.
  Status RunMinutes(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* stacks,
                    rocksdb::ColumnFamilyHandle* stacks_60s, const rocksdb::Snapshot* snapshot,
                    uint32_t metric, int64_t from, int64_t to) {
    const int64_t first_minute = FloorMinute(from + 59);  // first whole minute's start
    const int64_t end_minutes = FloorMinute(to);          // end of the last whole minute
    if (first_minute >= end_minutes) return Run(db, stacks, snapshot, metric, from, to);
    Status s = Run(db, stacks, snapshot, metric, from, first_minute);
    if (s.ok()) s = Run(db, stacks_60s, snapshot, metric, first_minute, end_minutes);
    if (s.ok()) s = Run(db, stacks, snapshot, metric, end_minutes, to);
    return s;
  }

  // Only the `targets` host-seconds of [from, to) (sorted), each counted its weight times: each
  // is reached by a seek to its first key (or a few steps on to it), instead of reading every
  // key of the range.
  Status RunSeeking(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                    const rocksdb::Snapshot* snapshot, uint32_t metric, int64_t from, int64_t to,
                    const std::vector<SeekTarget>& targets) {
    const std::string upper = DataKeyPrefix(metric, to);
    const rocksdb::Slice upper_slice(upper);
    std::unique_ptr<rocksdb::Iterator> it = IteratorBelow(db, cf, snapshot, &upper_slice);
    KeyMeter meter(budget);
    DataKey key;
    char start[kDataKeySize];
    bool positioned = false;
    auto first = std::lower_bound(targets.begin(), targets.end(), SeekTarget{from, 0, 0});
    for (auto target = first; target != targets.end() && target->second < to; ++target) {
      EncodeDataKey(DataKey{metric, target->second, target->host, 0}, start);
      const rocksdb::Slice want(start, kDataKeySize);
      // A target a few keys on is reached by stepping: a Next() costs a small fraction of a Seek,
      // which searches every level (a dense region's targets are ~5 keys apart: 1.4x faster).
      bool seek = !positioned;
      for (int steps = 0; !seek && it->Valid() && it->key().compare(want) < 0; ++steps) {
        if (steps == kMaxSteps) {
          seek = true;
        } else {
          if (Status s = meter.Add(); !s.ok()) return s;  // a key visited, though not kept
          it->Next();
        }
      }
      if (!it->status().ok()) {
        return Status::IOError(cf->GetName() + ": " + it->status().ToString());
      }
      if (!seek && !it->Valid()) break;  // past the last key: no target is left to find
      if (seek) {
        it->Seek(want);
        positioned = true;
      }
      for (; it->Valid(); it->Next()) {
        const rocksdb::Slice k = it->key();
        // Past this host-second: its key is not visited, the next target seeks on.
        if (k.size() != kDataKeySize || std::memcmp(k.data(), start, kDataKeySize - 4) != 0) break;
        if (Status s = Visit(*it, cf, &meter, &key, target->weight); !s.ok()) return s;
      }
      if (!it->status().ok()) {
        return Status::IOError(cf->GetName() + ": " + it->status().ToString());
      }
    }
    return meter.Flush();
  }

  // Visit's weight for a range scan: WeightOf the key's host-second.
  static constexpr uint64_t kRangeWeight = UINT64_MAX;

  // One stored value: its host and series kept or not, its counts added `weight` times
  // (kRangeWeight: WeightOf its host-second), and once into `once` when set.
  Status Visit(const rocksdb::Iterator& it, rocksdb::ColumnFamilyHandle* cf, KeyMeter* meter,
               DataKey* key, uint64_t weight) {
    const rocksdb::Slice k = it.key();
    if (!DecodeDataKey({k.data(), k.size()}, key)) {
      return Status::Corruption(cf->GetName() + ": key of " + std::to_string(k.size()) + " bytes");
    }
    if (Status s = meter->Add(); !s.ok()) return s;  // every key visited counts, kept or not
    if (!allowed.Keeps(key->host, key->second)) return Status::Ok();
    const int64_t g = GroupOf(key->host, key->series);
    if (g < 0) return Status::Ok();
    if (weight == kRangeWeight) weight = WeightOf(key->host, key->second);
    if (weight == 0) return Status::Ok();
    const auto group = static_cast<uint64_t>(g);
    std::unordered_map<uint64_t, uint64_t>& sums = into != nullptr ? *into : counts;
    const auto add = [this, &sums, group, weight](uint32_t id, uint64_t count) {
      uint64_t& sum = sums[(group << 32) | id];
      sum = SaturatingCountAdd(sum, SaturatingCountTimes(count, weight, &saturated), &saturated);
      if (once != nullptr) {
        uint64_t& one = (*once)[(group << 32) | id];
        one = SaturatingCountAdd(one, count, &once_saturated);
      }
    };
    const rocksdb::Slice v = it.value();
    const size_t distinct = sums.size();
    if (Status s = ForEachStackCount({v.data(), v.size()}, add); !s.ok()) {
      return Status::Corruption(cf->GetName() + ": second " + std::to_string(key->second) +
                                ", host " + std::to_string(key->host) + ", series " +
                                std::to_string(key->series) + ": " + s.message());
    }
    if (budget != nullptr && sums.size() > distinct) {
      if (Status s = budget->ChargeCells(sums.size() - distinct); !s.ok()) return s;
      if (Status s = budget->CheckGroups(groups.size()); !s.ok()) return s;
    }
    return Status::Ok();
  }

  bool saturated = false;  // a fleet's count past kMaxTotalCount stops there
};

// Calls fn(from, to) for each piece of [from, to) between epoch starts, in order, until one
// fails: a replicated query's minutes never span two epochs, whose owners differ
// (core/cluster.h).
template <typename Fn>
Status ForEachEpochPiece(const std::optional<ReplicaScope>& replicas, int64_t from, int64_t to,
                         Fn&& fn) {
  std::vector<int64_t> cuts;
  if (replicas) cuts = EpochCuts(replicas->cluster, from, to);
  cuts.push_back(to);
  for (int64_t cut : cuts) {
    if (Status s = fn(from, cut); !s.ok()) return s;
    from = cut;
  }
  return Status::Ok();
}

// The scan's counts as folded text by stack id, under its group's frame if grouped, sorted by
// text.
Result<FoldedStacks> Folded(const Catalog& catalog, const StackQuery& query, const Scan& scan) {
  FoldedStacks out;
  out.reserve(scan.counts.size());
  for (const auto& [group_and_id, count] : scan.counts) {
    const auto id = static_cast<uint32_t>(group_and_id);
    std::string text = catalog.Stack(id);
    if (text.empty())
      return Status::Corruption("stacks: id " + std::to_string(id) + " has no text in the catalog");
    if (!query.group_by.empty()) text = scan.groups[group_and_id >> 32] + ";" + text;
    out.push_back(FoldedStack{std::move(text), count});
  }
  std::sort(out.begin(), out.end(),
            [](const FoldedStack& a, const FoldedStack& b) { return a.stack < b.stack; });
  return out;
}

// Adds `sums` into *into, saturating at kMaxTotalCount. Keys are group << 32 | stack id, and a
// region query has no groups (CheckStackQuery refuses --by), so every slice's are alike.
void AddSums(const std::unordered_map<uint64_t, uint64_t>& sums,
             std::unordered_map<uint64_t, uint64_t>* into, bool* saturated) {
  for (const auto& [key, count] : sums) {
    uint64_t& sum = (*into)[key];
    sum = SaturatingCountAdd(sum, count, saturated);
  }
}

// A region's baseline: the selected hosts' [from, to), each host-second once, except the
// selected ones. Read as the difference of two exact sums: the hosts' whole range, whole minutes
// from `stacks_60s` as an unweighted query reads it, minus `selected_once` (the selected
// host-seconds' samples, each once, gathered by the target's pass). ~1/60 of the range's keys
// instead of every 1 s key (docs/benchmarks-log.md, "The web page and trailmap-query"). Minutes are merged from the
// same 1 s values in the same write, so under one snapshot the difference is exact. Should a sum
// have saturated, or a minute hold less than its seconds, the range is scanned second by second
// instead. Where the 1 s values have aged out and the minutes not, the baseline holds those
// minutes (a scan would hold nothing there).
Status RunBaseline(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* stacks,
                   rocksdb::ColumnFamilyHandle* stacks_60s, const rocksdb::Snapshot* snapshot,
                   uint32_t metric, const StackQuery& query,
                   const std::vector<BandSecond>& selected,
                   const std::unordered_map<uint64_t, uint64_t>& selected_once, bool once_saturated,
                   int threads, Scan* whole) {
  const int64_t from = query.region->baseline_from, to = query.region->baseline_to;
  std::vector<uint8_t> listed;
  for (const BandSecond& b : selected) {
    if (b.host >= listed.size()) listed.resize(b.host + 1, 0);
    listed[b.host] = 1;
  }
  whole->listed = &listed;
  // The whole range on the query threads: each epoch piece cut in two at a minute near its
  // middle (the same keys read as uncut), the pieces shared out between the parts, each summing
  // into a Scan of its own, added up after (a region has no groups: AddSums).
  std::vector<std::pair<int64_t, int64_t>> pieces;
  (void)ForEachEpochPiece(query.replicas, from, to, [&pieces](int64_t lo, int64_t hi) {
    const int64_t mid = (lo + (hi - lo) / 2) / 60 * 60;
    if (mid > lo && mid < hi) {
      pieces.emplace_back(lo, mid);
      pieces.emplace_back(mid, hi);
    } else {
      pieces.emplace_back(lo, hi);
    }
    return Status::Ok();
  });
  const int parts = static_cast<int>(
      std::clamp<size_t>(pieces.size(), 1, static_cast<size_t>(std::max(1, threads))));
  std::vector<Scan> scans;
  for (int i = 0; i < parts; ++i) {
    scans.push_back(
        Scan{whole->catalog, whole->where, whole->allowed, whole->group_by, {}, {}, {}, {}});
    scans.back().listed = &listed;
    scans.back().budget = whole->budget;
  }
  std::vector<Status> status(parts);
  RunScanParts(parts, [&](int i) {
    for (size_t k = static_cast<size_t>(i); k < pieces.size() && status[i].ok(); k += parts) {
      status[i] = scans[i].RunMinutes(db, stacks, stacks_60s, snapshot, metric, pieces[k].first,
                                      pieces[k].second);
    }
  });
  for (int i = 0; i < parts; ++i) {
    if (!status[i].ok()) return status[i];
    whole->saturated = whole->saturated || scans[i].saturated;
    AddSums(scans[i].counts, &whole->counts, &whole->saturated);
  }
  bool exact = !whole->saturated && !once_saturated;
  for (auto it = selected_once.begin(); exact && it != selected_once.end(); ++it) {
    auto w = whole->counts.find(it->first);
    if (w == whole->counts.end() || w->second < it->second) {
      exact = false;
    } else if ((w->second -= it->second) == 0) {
      whole->counts.erase(w);
    }
  }
  if (exact) return Status::Ok();
  whole->counts.clear();  // second by second, leaving the selected host-seconds out
  whole->saturated = false;
  whole->excluded = &selected;
  const Status s = ForEachEpochPiece(query.replicas, from, to, [&](int64_t lo, int64_t hi) {
    return whole->Run(db, stacks, snapshot, metric, lo, hi);
  });
  whole->excluded = nullptr;
  whole->listed = nullptr;
  return s;
}

// One time slice of a region, on a thread of its own: its band's host-seconds and its stack sums.
struct RegionSlice {
  Status status;
  std::vector<BandSecond> selected;
  Scan scan;
};

// Fewer seconds than this a thread are not worth one (as the band count alone found).
constexpr int64_t kMinRegionSecondsPerThread = 30;

// The bounds of up to `threads` equal time slices of [from, to).
std::vector<int64_t> RegionSlices(int64_t from, int64_t to, int threads) {
  const uint64_t span = static_cast<uint64_t>(to) - static_cast<uint64_t>(from);
  const auto parts = static_cast<uint64_t>(std::clamp<int64_t>(
      static_cast<int64_t>(span / kMinRegionSecondsPerThread), 1, std::max(1, threads)));
  std::vector<int64_t> bounds;
  for (uint64_t i = 0; i <= parts; ++i) {
    bounds.push_back(static_cast<int64_t>(static_cast<uint64_t>(from) + span * i / parts));
  }
  return bounds;
}

// Region -> code (StackQuery::region): the band's host-seconds, then their stacks, each counted
// its events times, and with a baseline the same hosts' other seconds; all under one snapshot.
Result<StackAnswer> RunRegionQuery(const StackScan& store, const Catalog& catalog,
                                   const StackQuery& query, QueryBudget* budget) {
  const RegionBand& region = *query.region;
  Result<Predicate> band_where = Predicate::Parse(region.where);
  if (!band_where.ok()) return band_where.status();
  StackAnswer answer;
  if (region.baseline) answer.baseline.emplace();
  MetricRecord events;
  const std::optional<uint32_t> events_metric = catalog.FindMetric(region.metric, &events);
  if (!events_metric) return answer;
  if (events.kind != MetricKind::kLatency && events.kind != MetricKind::kSize) {
    return Status::InvalidArgument("--region selects events of a latency or size metric; " +
                                   region.metric + " is a " + MetricKindName(events.kind) +
                                   " metric");
  }
  MetricRecord record;
  const std::optional<uint32_t> metric = catalog.FindMetric(query.metric, &record);
  if (metric && record.kind != MetricKind::kStacks) {
    return Status::InvalidArgument(query.metric + " is a " + MetricKindName(record.kind) +
                                   " metric, not stacks");
  }
  const HostMask allowed =
      HostMask::Make(catalog, query.hosts, query.replicas, query.from, query.to);
  if (allowed.keeps_none()) return answer;
  rocksdb::ManagedSnapshot managed(store.db);
  const rocksdb::Snapshot* snapshot = managed.snapshot();
  const Result<Predicate> all = Predicate::Parse("");
  const Predicate& everything = *all;
  // The region in time slices, one a thread: each counts its seconds' band and seeks to their
  // stacks into sums of its own, added up after (docs/benchmarks-log.md, "The web page and trailmap-query").
  const std::vector<int64_t> bounds = RegionSlices(query.from, query.to, store.threads);
  const int parts = static_cast<int>(bounds.size()) - 1;
  const bool fill_cache = BandFillsCache(store.db, store.hist, *events_metric, query.from,
                                         query.to, store.block_cache_bytes);
  std::vector<RegionSlice> slices;
  for (int i = 0; i < parts; ++i) {
    slices.push_back(
        RegionSlice{{}, {}, Scan{catalog, everything, allowed, query.group_by, {}, {}, {}, {}}});
    slices.back().scan.budget = budget;
  }
  std::vector<std::unordered_map<uint64_t, uint64_t>> once(region.baseline ? parts : 0);
  RunScanParts(parts, [&](int i) {
    RegionSlice& slice = slices[i];
    Result<std::vector<BandSecond>> band =
        CountBand(BandScan{store.db, store.hist, snapshot, 1, budget, fill_cache}, catalog,
                  *events_metric, bounds[i], bounds[i + 1], allowed, *band_where);
    if (!band.ok()) {
      slice.status = band.status();
      return;
    }
    slice.selected = std::move(band).value();
    if (!metric || slice.selected.empty()) return;
    if (region.baseline) slice.scan.once = &once[i];
    std::vector<SeekTarget> targets;
    targets.reserve(slice.selected.size());
    for (const BandSecond& b : slice.selected) {
      targets.push_back(SeekTarget{b.second, b.host, b.events});
    }
    slice.status =
        ForEachEpochPiece(query.replicas, bounds[i], bounds[i + 1], [&](int64_t lo, int64_t hi) {
          return slice.scan.RunSeeking(store.db, store.stacks, snapshot, *metric, lo, hi, targets);
        });
  });
  std::vector<BandSecond> selected;
  for (RegionSlice& slice : slices) {
    if (!slice.status.ok()) return slice.status;
    selected.insert(selected.end(), slice.selected.begin(), slice.selected.end());
  }
  // The selection by host, in name order.
  std::unordered_map<uint32_t, RegionHost> by_host;
  for (const BandSecond& b : selected) {
    RegionHost& h = by_host[b.host];
    bool saturated = false;
    h.events = SaturatingCountAdd(h.events, b.events, &saturated);
    ++h.host_seconds;
  }
  for (auto& [id, host] : by_host) {
    host.host = catalog.Host(id).name;
    answer.region_hosts.push_back(std::move(host));
  }
  std::sort(answer.region_hosts.begin(), answer.region_hosts.end(),
            [](const RegionHost& a, const RegionHost& b) { return a.host < b.host; });
  if (!metric || selected.empty()) return answer;

  Scan& scan = slices[0].scan;
  std::unordered_map<uint64_t, uint64_t> selected_once;
  bool once_saturated = false;
  for (int i = 0; i < parts; ++i) {
    const Scan& part = slices[i].scan;
    once_saturated = once_saturated || part.once_saturated;
    if (i > 0) {
      scan.saturated = scan.saturated || part.saturated;
      AddSums(part.counts, &scan.counts, &scan.saturated);
    }
    if (region.baseline) AddSums(once[i], &selected_once, &once_saturated);
  }
  Result<FoldedStacks> target = Folded(catalog, query, scan);
  if (!target.ok()) return target.status();
  answer.stacks = std::move(target).value();
  if (region.baseline) {
    const HostMask baseline_allowed = HostMask::Make(catalog, query.hosts, query.replicas,
                                                     region.baseline_from, region.baseline_to);
    Scan whole{catalog, everything, baseline_allowed, query.group_by, {}, {}, {}, {}};
    whole.budget = budget;
    Status s = RunBaseline(store.db, store.stacks, store.stacks_60s, snapshot, *metric, query,
                           selected, selected_once, once_saturated, store.threads, &whole);
    if (!s.ok()) return s;
    Result<FoldedStacks> baseline = Folded(catalog, query, whole);
    if (!baseline.ok()) return baseline.status();
    answer.baseline = std::move(baseline).value();
  }
  return answer;
}

}  // namespace

Result<StackAnswer> RunStackQuery(const StackScan& store, const Catalog& catalog,
                                  const StackQuery& query, QueryBudget* budget) {
  if (Status s = CheckStackQuery(query); !s.ok()) return s;
  if (query.region) return RunRegionQuery(store, catalog, query, budget);
  Result<Predicate> where = Predicate::Parse(query.where);
  if (!where.ok()) return where.status();
  StackAnswer answer;
  MetricRecord record;
  const std::optional<uint32_t> metric = catalog.FindMetric(query.metric, &record);
  if (!metric) return answer;
  if (record.kind != MetricKind::kStacks) {
    return Status::InvalidArgument(query.metric + " is a " + MetricKindName(record.kind) +
                                   " metric, not stacks");
  }
  const HostMask allowed =
      HostMask::Make(catalog, query.hosts, query.replicas, query.from, query.to);
  if (allowed.keeps_none()) return answer;
  Scan scan{catalog, *where, allowed, query.group_by, {}, {}, {}, {}};
  scan.budget = budget;
  rocksdb::ManagedSnapshot managed(store.db);
  // Its whole minutes from `stacks_60s`, its edges from `stacks`.
  const Status s =
      ForEachEpochPiece(query.replicas, query.from, query.to, [&](int64_t from, int64_t to) {
        return scan.RunMinutes(store.db, store.stacks, store.stacks_60s, managed.snapshot(),
                               *metric, from, to);
      });
  if (!s.ok()) return s;
  Result<FoldedStacks> stacks = Folded(catalog, query, scan);
  if (!stacks.ok()) return stacks.status();
  answer.stacks = std::move(stacks).value();
  return answer;
}

}  // namespace trailmap::aggregator
