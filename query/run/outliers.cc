#include "query/run/outliers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/units.h"
#include "query/run/flame.h"
#include "query/run/predicate_tree.h"

namespace trailmap {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  return (*std::max_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(mid)) + upper) / 2;
}

Result<double> StatOf(const Histogram& h, const std::string& stat) {
  if (stat == "mean") return h.mean();
  if (stat == "max") return static_cast<double>(h.max());
  if (stat == "p50") return static_cast<double>(h.Percentile(50));
  if (stat == "p90") return static_cast<double>(h.Percentile(90));
  if (stat == "p99") return static_cast<double>(h.Percentile(99));
  if (stat == "p99.9") return static_cast<double>(h.Percentile(99.9));
  return Status::InvalidArgument("--stat " + stat + ": give p50, p90, p99, p99.9, mean or max");
}

// `host in ("a", "b")`: the predicate that names exactly the outliers, as a tree (a host name
// with a quote in it stays one value).
PredicateTree HostsPredicate(const std::vector<HostScore>& hosts) {
  std::vector<std::string> names;
  for (const HostScore& h : hosts) {
    if (h.outlier) names.push_back(h.host);
  }
  return PredicateTree::FieldIn("host", names);
}

}  // namespace

std::vector<double> ModifiedZScores(const std::vector<double>& values) {
  std::vector<double> scores(values.size(), 0.0);
  const double median = Median(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  double sum = 0;
  for (double v : values) {
    deviations.push_back(std::fabs(v - median));
    sum += std::fabs(v - median);
  }
  // Values closer than a histogram bucket (1/64 of the value) are not told apart: the MAD is
  // floored there, so hosts that agree to within the precision do not make a zero scale.
  const double mad = std::max(Median(deviations), std::fabs(median) / 64);
  const double mean_ad = values.empty() ? 0 : sum / static_cast<double>(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (mad > 0) {
      scores[i] = 0.6745 * (values[i] - median) / mad;
    } else if (mean_ad > 0) {
      scores[i] = (values[i] - median) / (1.253314 * mean_ad);
    }
  }
  return scores;
}

Result<ViewDocument> RunOutliersView(const OutliersRequest& flags, const QueryContext& context) {
  if (Status s = OutliersParameters().Check(flags); !s.ok()) return s;
  const bool flame = flags.flame;
  const std::string format = flame && flags.format == "table" ? "svg" : flags.format;
  if (!flame && format != "table" && format != "json") {
    return Status::InvalidArgument("--format " + format + ": give table or json");
  }
  if (!flags.query.by.empty()) {
    return Status::InvalidArgument("--by: outliers are always hosts");
  }
  Result<TimeRange> range = ParseTimeRange(flags.query, context.now);
  if (!range.ok()) return range.status();

  const HistogramQuery query = WholeRangeQuery(flags.query, *range, "host");
  Result<Fetched> fetched = FetchGrid(context, flags.query, query);
  if (!fetched.ok()) return fetched.status();
  const MergedGrid& grid = fetched->grid;

  std::vector<HostScore> hosts;
  std::vector<double> values;
  for (size_t g = 0; g < grid.groups.size(); ++g) {
    const Histogram h = grid.Group(g);
    if (h.empty()) continue;
    HostScore s;
    s.host = grid.groups[g];
    s.count = h.count();
    s.value = *StatOf(h, flags.stat);
    hosts.push_back(s);
    values.push_back(s.value);
  }
  const std::vector<double> scores = ModifiedZScores(values);
  const double median = Median(values);
  size_t outliers = 0;
  for (size_t i = 0; i < hosts.size(); ++i) {
    hosts[i].score = scores[i];
    hosts[i].outlier = scores[i] > flags.threshold;
    outliers += hosts[i].outlier;
  }
  std::stable_sort(hosts.begin(), hosts.end(), [](const HostScore& a, const HostScore& b) {
    return a.score != b.score ? a.score > b.score : a.host < b.host;
  });

  nlohmann::ordered_json names = nlohmann::ordered_json::array();
  for (const HostScore& h : hosts) {
    if (h.outlier) names.push_back(h.host);
  }
  ViewDocument doc;
  doc.format = format;
  doc.missing = fetched->missing;
  NoteSkipped(fetched->skipped, &doc);
  if (flame) {
    if (outliers == 0) {
      return Status::InvalidArgument("--flame: no host of " + std::to_string(hosts.size()) +
                                     " scores above " + std::to_string(flags.threshold) +
                                     ", so there is nothing to compare");
    }
    const PredicateTree where = HostsPredicate(hosts);
    Result<PredicateTree> rest = PredicateTree::Not(where);
    if (!rest.ok()) return rest.status();
    FlameRequest request;
    request.format = format;
    request.fleet.view = flags.query;
    request.fleet.view.metric = flags.stacks;
    request.fleet.view.by.clear();
    request.fleet.view.hosts.clear();
    request.fleet.view.where = where.Json();
    request.fleet.baseline_where = rest->Json();
    request.title = "Outliers (" + flags.stat + ") vs the rest";
    std::istringstream no_input;
    Result<ViewDocument> graph = RunFlameView(request, context, no_input);
    if (!graph.ok()) return graph.status();
    doc.bytes = std::move(graph->bytes);
    doc.notes = std::move(graph->notes);
    for (std::string& m : graph->missing) doc.missing.push_back(std::move(m));
    if (format == "json") {  // the outliers join the root object: "...]}\n" ends it
      doc.bytes.resize(doc.bytes.size() - 2);
      doc.bytes += ",\"outliers\":" + names.dump() + "}\n";
    }
    return doc;
  }

  if (format == "json") {
    nlohmann::ordered_json j;
    j["view"] = "outliers";
    j["metric"] = grid.metric.empty() ? flags.query.metric : grid.metric;
    j["unit"] = grid.unit;
    j["from"] = range->from;
    j["to"] = range->to;
    j["stat"] = flags.stat;
    j["score"] = "modified_z";
    j["threshold"] = flags.threshold;
    j["median"] = median;
    j["outliers"] = std::move(names);
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const HostScore& h : hosts) {
      rows.push_back({{"host", h.host},
                      {"count", h.count},
                      {flags.stat, h.value},
                      {"score", std::round(h.score * 1000) / 1000},
                      {"outlier", h.outlier}});
    }
    j["hosts"] = std::move(rows);
    j["missing_shards"] = fetched->missing;
    doc.bytes = j.dump(2) + "\n";
    return doc;
  }
  std::string out = "host                      " + flags.stat + "        score\n";
  for (const HostScore& h : hosts) {
    char line[256];
    snprintf(line, sizeof line, "%-24s %10s %10.2f%s\n", h.host.c_str(),
             FormatQuantity(h.value, grid.unit).c_str(), h.score, h.outlier ? "  outlier" : "");
    out += line;
  }
  char tail[160];
  snprintf(tail, sizeof tail, "%zu of %zu hosts score above %.3g (fleet median %s %s)\n", outliers,
           hosts.size(), flags.threshold, flags.stat.c_str(),
           FormatQuantity(median, grid.unit).c_str());
  doc.bytes = out + tail;
  return doc;
}

}  // namespace trailmap
