// FakeShard: what one aggregator holds, as a list of events, answering the queries a view sends
// as an aggregator would (histograms or summaries per column and group, the metric catalog,
// folded stacks). Hand FakeShard::Respond to a FakeAggregator. For the golden-file tests of whole
// views (query/run/golden_test.cc): small enough to check every number of a document by hand.
//
// What it does not model: comparisons on the value in `where` (only series fields and the host
// are tested), rollups, budgets and replicas.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/predicate.h"
#include "core/query_wire.h"

namespace trailmap::testing {

struct FakeEvent {
  std::string metric;
  std::string host;
  std::map<std::string, std::string> fields;
  int64_t second = 0;  // unix seconds
  uint64_t value = 0;  // base unit
  uint64_t count = 1;
};

struct FakeStack {
  std::string host;
  std::string stack;  // "main;serve;read"
  uint64_t count = 0;
};

struct FakeShard {
  std::string name;  // the aggregator's --name
  std::vector<FakeEvent> events;
  std::vector<FakeStack> stacks;
  std::vector<MetricInfo> metrics;  // the catalog; fields are filled in from the events

  Answer Respond(const Query& query) const {
    Answer a;
    a.shard = name;
    a.kind = query.kind;
    if (query.kind == Query::Kind::kHistograms) {
      Histograms(query.histograms, &a);
    } else if (query.kind == Query::Kind::kMetrics) {
      Catalog(&a);
    } else if (query.kind == Query::Kind::kStacks) {
      Stacks(query.stacks, &a);
    }
    return a;
  }

 private:
  class Fields : public FieldLookup {
   public:
    Fields(const std::string& host, const std::map<std::string, std::string>& fields)
        : host_(host), fields_(fields) {}
    const std::string* Find(std::string_view name) const override {
      if (name == "host") return &host_;
      auto it = fields_.find(std::string(name));
      return it == fields_.end() ? nullptr : &it->second;
    }

   private:
    const std::string& host_;
    const std::map<std::string, std::string>& fields_;
  };

  static bool Selected(const std::vector<std::string>& hosts, const std::string& where,
                       const std::string& host, const std::map<std::string, std::string>& fields) {
    if (!hosts.empty() && std::find(hosts.begin(), hosts.end(), host) == hosts.end()) return false;
    Result<Predicate> predicate = Predicate::Parse(where);
    return predicate.ok() && predicate->Matches(Fields(host, fields));
  }

  void Histograms(const HistogramQuery& q, Answer* a) const {
    a->histograms.unit = "ns";
    std::map<std::pair<std::string, uint32_t>, Histogram> cells;  // (group, column)
    std::map<std::pair<std::string, uint32_t>, CellSummary> summaries;
    std::set<std::string> groups;
    for (const FakeEvent& e : events) {
      if (e.metric != q.metric || e.second < q.from || e.second >= q.to) continue;
      if (!Selected(q.hosts, q.where, e.host, e.fields)) continue;
      std::string group;
      if (q.group_by == "host") {
        group = e.host;
      } else if (!q.group_by.empty()) {
        auto it = e.fields.find(q.group_by);
        group = it == e.fields.end() ? "" : it->second;
      }
      groups.insert(group);
      const auto column = static_cast<uint32_t>((e.second - q.from) / q.step);
      cells[{group, column}].Record(e.value, e.count);
      CellSummary& s = summaries[{group, column}];
      const auto v = static_cast<double>(e.value);
      s.min = s.count == 0 ? v : std::min(s.min, v);
      s.max = s.count == 0 ? v : std::max(s.max, v);
      s.count += e.count;
      s.sum += v * static_cast<double>(e.count);
    }
    a->histograms.groups.assign(groups.begin(), groups.end());
    auto index = [&](const std::string& g) {
      return static_cast<uint32_t>(std::distance(groups.begin(), groups.find(g)));
    };
    for (auto& [key, h] : cells) {
      if (q.summaries) {
        CellSummary s = summaries[key];
        s.column = key.second;
        s.group = index(key.first);
        a->histograms.summaries.push_back(s);
      } else {
        QueryCell cell;
        cell.column = key.second;
        cell.group = index(key.first);
        cell.histogram = std::move(h);
        a->histograms.cells.push_back(std::move(cell));
      }
    }
  }

  void Catalog(Answer* a) const {
    for (MetricInfo m : metrics) {
      std::set<std::string> keys;
      for (const FakeEvent& e : events) {
        if (e.metric != m.name) continue;
        for (const auto& [key, value] : e.fields) keys.insert(key);
      }
      m.fields.assign(keys.begin(), keys.end());
      a->metrics.push_back(std::move(m));
    }
  }

  void Stacks(const StackQuery& q, Answer* a) const {
    std::map<std::string, uint64_t> merged;
    for (const FakeStack& s : stacks) {
      if (Selected(q.hosts, q.where, s.host, {})) merged[s.stack] += s.count;
    }
    for (const auto& [stack, count] : merged) a->stacks.stacks.push_back({stack, count});
  }
};

}  // namespace trailmap::testing
