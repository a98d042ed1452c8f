#include "aggregator/stack_query.h"

#include <rocksdb/db.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "aggregator/host_mask.h"
#include "aggregator/keys.h"
#include "aggregator/query_budget.h"
#include "aggregator/series_filter.h"
#include "aggregator/stack_merge_operator.h"
#include "core/counts.h"
#include "core/predicate.h"
#include "core/series.h"

namespace trailmap::aggregator {
namespace {

int64_t FloorMinute(int64_t t) { return t - ((t % 60) + 60) % 60; }

// How many keys RunSeeking steps over before it seeks instead.
constexpr int kMaxSteps = 16;

struct HostWeights {
  std::unordered_map<int64_t, uint64_t> seconds;
  uint64_t other = 0;
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
  // A weighted query's weights by host id (none: every value counts once).
  const std::unordered_map<uint32_t, HostWeights>* weights = nullptr;
  // With `weights`: every second of a listed host counts once, whatever its weights say (the
  // parts of a baseline read as a whole and a difference; see RunStackQuery).
  bool listed_hosts_once = false;
  QueryBudget* budget = nullptr;  // charged per key and distinct stack; null: no limits

  // How many times the value of (host, second) counts: 1, or its weight in a weighted query.
  uint64_t WeightOf(uint32_t host, int64_t second) const {
    if (weights == nullptr) return 1;
    auto h = weights->find(host);
    if (h == weights->end()) return 0;
    if (listed_hosts_once) return 1;
    auto s = h->second.seconds.find(second);
    return s == h->second.seconds.end() ? h->second.other : s->second;
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
      if (Status s = Visit(*it, cf, &meter, &key); !s.ok()) return s;
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

  // A weighted query whose other seconds weigh 0 (no baseline): only the selected host-seconds
  // are read, each by a seek to its first key (or a few steps on to it), instead of every key of
  // the range.
  Status RunSeeking(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                    const rocksdb::Snapshot* snapshot, uint32_t metric, int64_t from, int64_t to,
                    std::vector<std::pair<int64_t, uint32_t>> targets) {
    std::sort(targets.begin(), targets.end());
    const std::string upper = DataKeyPrefix(metric, to);
    const rocksdb::Slice upper_slice(upper);
    std::unique_ptr<rocksdb::Iterator> it = IteratorBelow(db, cf, snapshot, &upper_slice);
    KeyMeter meter(budget);
    DataKey key;
    char start[kDataKeySize];
    bool positioned = false;
    for (const auto& [second, host] : targets) {
      if (second < from || second >= to) continue;
      EncodeDataKey(DataKey{metric, second, host, 0}, start);
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
        if (Status s = Visit(*it, cf, &meter, &key); !s.ok()) return s;
      }
      if (!it->status().ok()) {
        return Status::IOError(cf->GetName() + ": " + it->status().ToString());
      }
    }
    return meter.Flush();
  }

  // One stored value: its host and series kept or not, its counts added times its weight.
  Status Visit(const rocksdb::Iterator& it, rocksdb::ColumnFamilyHandle* cf, KeyMeter* meter,
               DataKey* key) {
    const rocksdb::Slice k = it.key();
    if (!DecodeDataKey({k.data(), k.size()}, key)) {
      return Status::Corruption(cf->GetName() + ": key of " + std::to_string(k.size()) + " bytes");
    }
    if (Status s = meter->Add(); !s.ok()) return s;  // every key visited counts, kept or not
    if (!allowed.Keeps(key->host, key->second)) return Status::Ok();
    const int64_t g = GroupOf(key->host, key->series);
    if (g < 0) return Status::Ok();
    const uint64_t weight = WeightOf(key->host, key->second);
    if (weight == 0) return Status::Ok();
    const auto group = static_cast<uint64_t>(g);
    std::unordered_map<uint64_t, uint64_t>& sums = into != nullptr ? *into : counts;
    const auto add = [this, &sums, group, weight](uint32_t id, uint64_t count) {
      uint64_t& sum = sums[(group << 32) | id];
      sum = SaturatingCountAdd(sum, SaturatingCountTimes(count, weight, &saturated), &saturated);
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

// Calls fn(from, to) for each piece of the query's range between epoch starts, in order, until
// one fails: a replicated query's minutes never span two epochs, whose owners differ
// (core/cluster.h).
template <typename Fn>
Status ForEachEpochPiece(const StackQuery& query, Fn&& fn) {
  std::vector<int64_t> cuts;
  if (query.replicas) cuts = EpochCuts(query.replicas->cluster, query.from, query.to);
  cuts.push_back(query.to);
  int64_t from = query.from;
  for (int64_t to : cuts) {
    if (Status s = fn(from, to); !s.ok()) return s;
    from = to;
  }
  return Status::Ok();
}

// The scan's counts as the answer: folded text by stack id, under its group's frame if grouped,
// sorted by text.
Result<StackAnswer> Answer(const Catalog& catalog, const StackQuery& query, const Scan& scan) {
  StackAnswer answer;
  answer.stacks.reserve(scan.counts.size());
  for (const auto& [group_and_id, count] : scan.counts) {
    const auto id = static_cast<uint32_t>(group_and_id);
    std::string text = catalog.Stack(id);
    if (text.empty())
      return Status::Corruption("stacks: id " + std::to_string(id) + " has no text in the catalog");
    if (!query.group_by.empty()) text = scan.groups[group_and_id >> 32] + ";" + text;
    answer.stacks.push_back(FoldedStack{std::move(text), count});
  }
  std::sort(answer.stacks.begin(), answer.stacks.end(),
            [](const FoldedStack& a, const FoldedStack& b) { return a.stack < b.stack; });
  return answer;
}

// A baseline as the listed hosts' whole range minus their listed host-seconds (RunStackQuery says
// why), into `whole`'s counts. False when that cannot be exact: the caller scans instead.
Result<bool> RunDifference(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* stacks,
                           rocksdb::ColumnFamilyHandle* stacks_60s, uint32_t metric,
                           const StackQuery& query,
                           const std::vector<std::pair<int64_t, uint32_t>>& listed, Scan* whole) {
  const rocksdb::Snapshot* snapshot = db->GetSnapshot();
  whole->listed_hosts_once = true;
  Status s = ForEachEpochPiece(query, [&](int64_t from, int64_t to) {
    return whole->RunMinutes(db, stacks, stacks_60s, snapshot, metric, from, to);
  });
  std::unordered_map<uint64_t, uint64_t> minus;
  if (s.ok()) {
    whole->into = &minus;
    s = whole->RunSeeking(db, stacks, snapshot, metric, query.from, query.to, listed);
    whole->into = nullptr;
  }
  whole->listed_hosts_once = false;
  db->ReleaseSnapshot(snapshot);
  if (!s.ok()) return s;
  if (whole->saturated) return false;
  for (const auto& [key, n] : minus) {
    auto it = whole->counts.find(key);
    if (it == whole->counts.end() || it->second < n) return false;
    it->second -= n;
    if (it->second == 0) whole->counts.erase(it);
  }
  return true;
}

}  // namespace

Result<StackAnswer> RunStackQuery(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* stacks,
                                  rocksdb::ColumnFamilyHandle* stacks_60s, const Catalog& catalog,
                                  const StackQuery& query, QueryBudget* budget) {
  if (Status s = CheckStackQuery(query); !s.ok()) return s;
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
  // A weighted query: its weights by host id; only those hosts are read.
  std::unordered_map<uint32_t, HostWeights> weights;
  for (const HostSecondWeights& h : query.weights) {
    const std::optional<uint32_t> id = catalog.FindHost(h.host);
    if (!id) continue;  // another shard's host
    HostWeights& w = weights[*id];
    w.other = h.other_seconds;
    for (size_t i = 0; i < h.seconds.size(); ++i) w.seconds[h.seconds[i]] = h.weights[i];
  }
  if (!query.weights.empty() && weights.empty()) return answer;
  const HostMask allowed =
      HostMask::Make(catalog, query.hosts, query.replicas, query.from, query.to);
  if (allowed.keeps_none()) return answer;

  Scan scan{catalog, *where, allowed, query.group_by, {}, {}, {}, {}};
  if (!query.weights.empty()) scan.weights = &weights;
  scan.budget = budget;
  // A baseline (region -> code's differential: each listed host's other seconds weigh 1, its
  // listed ones 0) is read as the difference of two exact sums: the hosts' whole range, whole
  // minutes from `stacks_60s` as an unweighted query reads it, minus the listed host-seconds,
  // sought one by one. ~1/60 of the range's keys plus the selection, instead of every 1 s key
  // (docs/BENCHMARKS.md, region -> flame). Minutes are merged from the same 1 s values in the
  // same write, so under one snapshot the difference is exact. Should a sum have saturated, or
  // a minute hold less than its seconds, the range is scanned second by second instead. Where
  // the 1 s values have aged out and the minutes not, the baseline holds those minutes (a scan
  // would hold nothing there).
  if (!weights.empty() && std::all_of(weights.begin(), weights.end(), [](const auto& w) {
        return w.second.other == 1 && std::all_of(w.second.seconds.begin(), w.second.seconds.end(),
                                                  [](const auto& s) { return s.second == 0; });
      })) {
    std::vector<std::pair<int64_t, uint32_t>> listed;
    for (const auto& [host, w] : weights) {
      for (const auto& [second, weight] : w.seconds) listed.emplace_back(second, host);
    }
    Result<bool> done = RunDifference(db, stacks, stacks_60s, *metric, query, listed, &scan);
    if (!done.ok()) return done.status();
    if (*done) return Answer(catalog, query, scan);
    scan.counts.clear();  // read second by second below
    scan.saturated = false;
  }
  // A weighted query of a few host-seconds with the others weighing 0 seeks to each of them
  // (~134,000 of 600,000 keys for a region of 1,000 hosts x 10 min); a baseline, which weighs
  // the other seconds too, or a dense selection scans the range.
  std::vector<std::pair<int64_t, uint32_t>> seek_targets;
  if (!weights.empty() && std::all_of(weights.begin(), weights.end(),
                                      [](const auto& w) { return w.second.other == 0; })) {
    for (const auto& [host, w] : weights) {
      for (const auto& [second, weight] : w.seconds) {
        if (weight > 0) seek_targets.emplace_back(second, host);
      }
    }
    const uint64_t range_keys = weights.size() * static_cast<uint64_t>(query.to - query.from);
    if (seek_targets.empty() || seek_targets.size() * 3 > range_keys) seek_targets.clear();
  }
  const rocksdb::Snapshot* snapshot = db->GetSnapshot();
  // Its whole minutes from `stacks_60s`, its edges from `stacks`.
  const Status s = ForEachEpochPiece(query, [&](int64_t from, int64_t to) {
    if (!seek_targets.empty()) {
      return scan.RunSeeking(db, stacks, snapshot, *metric, from, to, seek_targets);
    }
    if (query.weights.empty()) {
      return scan.RunMinutes(db, stacks, stacks_60s, snapshot, *metric, from, to);
    }
    return scan.Run(db, stacks, snapshot, *metric, from, to);
  });
  db->ReleaseSnapshot(snapshot);
  if (!s.ok()) return s;
  return Answer(catalog, query, scan);
}

}  // namespace trailmap::aggregator