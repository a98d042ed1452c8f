#include "query/run/catalog.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "core/timespec.h"
#include "core/units.h"
#include "query/fetch/fanout.h"
#include "query/run/predicate_tree.h"

namespace trailmap {
namespace {

// The catalogs of every shard, merged by metric name (field keys united).
struct Catalog {
  std::map<std::string, MetricInfo> metrics;
  std::vector<std::string> missing;
};

Result<Catalog> FetchCatalog(const QueryContext& context, const ViewRequest& flags) {
  Query query;
  query.kind = Query::Kind::kMetrics;
  Result<FanoutResult> result = FanOutAll(context, flags, query);
  if (!result.ok()) return result.status();
  Catalog catalog;
  for (const ShardFailure& f : result->failures)
    catalog.missing.push_back(f.endpoint + ": " + f.reason);
  for (const Answer& a : result->answers) {
    for (const MetricInfo& m : a.metrics) {
      auto [it, inserted] = catalog.metrics.emplace(m.name, m);
      if (inserted) continue;
      if (it->second.description.empty()) it->second.description = m.description;
      std::set<std::string> keys(it->second.fields.begin(), it->second.fields.end());
      keys.insert(m.fields.begin(), m.fields.end());
      it->second.fields.assign(keys.begin(), keys.end());
    }
  }
  return catalog;
}

}  // namespace

std::string OverflowNote(uint64_t events) {
  return "note: " + std::to_string(events) +
         " events over the cardinality bound went to the overflow series (overflow=\"true\"): an "
         "agent saw more distinct field sets a second than its max_series allows; they are counted "
         "there, not lost, but cannot be told apart by field";
}

namespace {

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

namespace {

// `request` with its timeout cut to what is left of it since `started`; nullopt when nothing is.
std::optional<ViewRequest> WithTimeLeft(const ViewRequest& request,
                                        std::chrono::steady_clock::time_point started) {
  Result<uint64_t> timeout = ParseDuration(request.timeout);
  if (!timeout.ok()) return std::nullopt;
  const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  const int64_t left_ms = static_cast<int64_t>(*timeout / 1'000'000) - spent.count();
  if (left_ms < 1) return std::nullopt;
  ViewRequest out = request;
  out.timeout = std::to_string(left_ms) + "ms";
  return out;
}

}  // namespace

std::optional<std::string> OverflowNoteFor(const QueryContext& context, const ViewRequest& flags,
                                           int64_t from, int64_t to,
                                           std::chrono::steady_clock::time_point view_started) {
  std::optional<ViewRequest> asking = WithTimeLeft(flags, view_started);
  if (!asking) return std::nullopt;
  Result<Catalog> catalog = FetchCatalog(context, *asking);
  if (!catalog.ok()) return std::nullopt;
  auto it = catalog->metrics.find(flags.metric);
  if (it == catalog->metrics.end() || std::find(it->second.fields.begin(), it->second.fields.end(),
                                                kOverflowField) == it->second.fields.end()) {
    return std::nullopt;
  }
  std::optional<ViewRequest> counting = WithTimeLeft(flags, view_started);
  Result<PredicateTree> where = PredicateTree::Parse(flags.where);
  if (!counting || !where.ok()) return std::nullopt;
  counting->where =
      PredicateTree::And(*where, PredicateTree::FieldEquals(kOverflowField, "true")).Json();
  HistogramQuery query;
  query.metric = flags.metric;
  query.from = from;
  query.to = to;
  query.step = static_cast<uint32_t>(std::min<int64_t>(to - from, UINT32_MAX));
  query.hosts = SplitList(flags.hosts);
  Result<Fetched> fetched = FetchGrid(context, *counting, query);
  if (!fetched.ok()) return std::nullopt;
  const uint64_t events = fetched->grid.Total().count();
  if (events == 0) return std::nullopt;
  return OverflowNote(events);
}

Result<ViewDocument> RunMetricsView(const MetricsRequest& flags, const QueryContext& context) {
  if (Status s = MetricsParameters().Check(flags); !s.ok()) return s;
  ViewDocument doc;
  doc.format = flags.format;
  Result<Catalog> catalog = FetchCatalog(context, flags.query);
  if (!catalog.ok()) return catalog.status();
  if (flags.format == "json") {
    nlohmann::ordered_json j;
    j["view"] = "metrics";
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& [name, m] : catalog->metrics) {
      list.push_back({{"name", name},
                      {"kind", MetricKindName(m.kind)},
                      {"unit", m.unit},
                      {"description", m.description},
                      {"fields", m.fields}});
    }
    j["metrics"] = std::move(list);
    j["missing_shards"] = catalog->missing;
    doc.bytes = j.dump(2) + "\n";
  } else {
    // Columns as wide as their longest entry (units such as "packets/s" included).
    size_t width = 6, unit_width = 4, fields_width = 6;
    for (const auto& [name, m] : catalog->metrics) {
      width = std::max(width, name.size());
      unit_width = std::max(unit_width, m.unit.size());
      fields_width = std::max(fields_width, m.fields.empty() ? 1 : Join(m.fields, ", ").size());
    }
    std::string out = PadCell("metric", width) + PadCell("kind", 7) + PadCell("unit", unit_width) +
                      PadCell("fields", fields_width) + "description\n";
    for (const auto& [name, m] : catalog->metrics) {
      const std::string fields = m.fields.empty() ? "-" : Join(m.fields, ", ");
      out += PadCell(name, width) + PadCell(MetricKindName(m.kind), 7) +
             PadCell(m.unit, unit_width) + PadCell(fields, fields_width) +
             (m.description.empty() ? "-" : m.description) + "\n";
    }
    if (catalog->metrics.empty())
      out += "(no metrics yet: point an agent or `trailmap import` at the aggregators)\n";
    doc.bytes = std::move(out);
  }
  doc.missing = catalog->missing;
  return doc;
}

Result<ViewDocument> RunFieldsView(const FieldsRequest& flags, const QueryContext& context) {
  if (Status s = FieldsParameters().Check(flags); !s.ok()) return s;
  ViewDocument doc;
  doc.format = flags.format;
  Result<TimeRange> range = ParseTimeRange(flags.query, context.now);
  if (!range.ok()) return range.status();
  Result<Catalog> catalog = FetchCatalog(context, flags.query);
  if (!catalog.ok()) return catalog.status();
  auto it = catalog->metrics.find(flags.query.metric);
  if (it == catalog->metrics.end()) {
    std::vector<std::string> known;
    for (const auto& [name, m] : catalog->metrics) known.push_back(name);
    return Status::InvalidArgument(
        "no metric '" + flags.query.metric +
        "' on the aggregators; known: " + (known.empty() ? "(none)" : Join(known, ", ")));
  }
  std::vector<std::string> keys = {"host"};
  keys.insert(keys.end(), it->second.fields.begin(), it->second.fields.end());

  struct FieldValues {
    std::string key;
    std::vector<std::pair<std::string, uint64_t>> values;  // most events first
    size_t distinct = 0;
  };
  std::vector<FieldValues> fields;
  std::set<std::string> missing(catalog->missing.begin(), catalog->missing.end());
  // Most events first (then by value), cut to --top, keeping how many values there were.
  const auto add_field = [&fields, &flags](FieldValues fv) {
    std::sort(fv.values.begin(), fv.values.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    fv.distinct = fv.values.size();
    if (flags.top > 0 && fv.values.size() > flags.top) fv.values.resize(flags.top);
    fields.push_back(std::move(fv));
  };
  const bool stacks = it->second.kind == MetricKind::kStacks;
  for (const std::string& key : keys) {
    if (stacks) {  // samples per value: a stack query grouped by the key, summed by first frame
      Query query;
      query.kind = Query::Kind::kStacks;
      query.stacks.metric = flags.query.metric;
      query.stacks.from = range->from;
      query.stacks.to = range->to;
      query.stacks.where = flags.query.where;
      query.stacks.group_by = key;
      Result<FanoutResult> result = FanOutAll(context, flags.query, std::move(query));
      if (!result.ok()) return result.status();
      for (const ShardFailure& f : result->failures) missing.insert(f.endpoint + ": " + f.reason);
      std::map<std::string, uint64_t> per_value;
      for (const FoldedStack& s : MergeStackAnswers(result->answers)) {
        per_value[s.stack.substr(0, s.stack.find(';'))] += s.count;
      }
      add_field(FieldValues{key, {per_value.begin(), per_value.end()}, 0});
      continue;
    }
    HistogramQuery query;
    query.metric = flags.query.metric;
    query.from = range->from;
    query.to = range->to;
    query.step = static_cast<uint32_t>(std::min<int64_t>(range->to - range->from, UINT32_MAX));
    query.group_by = key;
    Result<Fetched> fetched = FetchGrid(context, flags.query, query);
    if (!fetched.ok()) return fetched.status();
    missing.insert(fetched->missing.begin(), fetched->missing.end());
    FieldValues fv{key, {}, 0};
    const MergedGrid& grid = fetched->grid;
    for (size_t g = 0; g < grid.groups.size(); ++g) {
      const uint64_t count = grid.Group(g).count();
      if (count > 0) fv.values.emplace_back(grid.groups[g], count);
    }
    add_field(std::move(fv));
  }

  // The agent's cardinality bound: events past it went to the series overflow=true.
  uint64_t overflow_events = 0;
  for (const FieldValues& fv : fields) {
    if (fv.key != kOverflowField) continue;
    for (const auto& [value, count] : fv.values) {
      if (value == "true") overflow_events = count;
    }
  }
  const bool scalar = it->second.kind == MetricKind::kScalar;
  const char* counted = scalar ? "host-seconds" : stacks ? "samples" : "events";

  if (flags.format == "json") {
    nlohmann::ordered_json j;
    j["view"] = "fields";
    j["metric"] = flags.query.metric;
    j["from"] = range->from;
    j["to"] = range->to;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const FieldValues& fv : fields) {
      nlohmann::ordered_json values = nlohmann::ordered_json::array();
      for (const auto& [value, count] : fv.values)
        values.push_back({{"value", value}, {"count", count}});
      list.push_back({{"key", fv.key}, {"distinct", fv.distinct}, {"values", std::move(values)}});
    }
    j["fields"] = std::move(list);
    j["counts"] = counted;
    j["overflow_events"] = overflow_events;
    j["missing_shards"] = std::vector<std::string>(missing.begin(), missing.end());
    doc.bytes = j.dump(2) + "\n";
  } else {
    std::string out = flags.query.metric + "  " + FormatRfc3339(range->from) + " .. " +
                      FormatRfc3339(range->to) + "\n";
    for (const FieldValues& fv : fields) {
      out +=
          "\n" + fv.key + "  (" + std::to_string(fv.distinct) + " value" +
          (fv.distinct == 1 ? "" : "s") +
          (fv.values.size() < fv.distinct ? ", top " + std::to_string(fv.values.size()) + " shown"
                                          : "") +
          ")\n";
      size_t width = 0;
      for (const auto& [value, count] : fv.values) width = std::max(width, value.size());
      for (const auto& [value, count] : fv.values) {
        out += "  " + value + std::string(width - value.size() + 2, ' ') + std::to_string(count) +
               "\n";
      }
    }
    out += "\n(counts are " + std::string(counted) + ")\n";
    if (overflow_events > 0) out += OverflowNote(overflow_events) + "\n";
    doc.bytes = std::move(out);
  }
  doc.missing.assign(missing.begin(), missing.end());
  return doc;
}

}  // namespace trailmap
