#include "core/prometheus_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "core/series.h"

namespace trailmap {
namespace {

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // The shortest of 15, 16 or 17 significant digits that reads back as `v`: "0.04151", not
  // "0.041510000000000002".
  char buffer[32];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
    if (std::strtod(buffer, nullptr) == v) break;
  }
  return buffer;
}

// HELP text escaping: '\\' and newline.
std::string EscapeHelp(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// Label value escaping: '\\', '"' and newline.
std::string EscapeLabel(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '"') {
      out += "\\\"";
    } else {
      out += EscapeHelp(std::string_view(&c, 1));
    }
  }
  return out;
}

// The exposed name, and the factor its values are multiplied by.
std::pair<std::string, double> ExposedName(const SelfReading& r) {
  std::string name = PrometheusName(r.series.metric, true);
  double scale = 1;
  // A suffix the name already ends with is not repeated: "rocksdb.memtable_bytes" ->
  // "..._memtable_bytes", not "..._bytes_bytes".
  auto add = [&name](std::string_view suffix) {
    if (!name.ends_with(suffix)) name += suffix;
  };
  if (r.series.unit == "B") {
    add("_bytes");
  } else if (r.series.unit == "ns") {
    add("_seconds");
    scale = 1e-9;
  } else if (r.series.unit == "s") {
    add("_seconds");
  }
  if (r.counter) add("_total");
  return {name, scale};
}

std::string Labels(const std::string& fields) {
  if (fields.empty()) return "";
  Result<FieldSet> set = ParseFields(fields);
  if (!set.ok()) return "";  // readings are made with canonical fields; never here
  std::string out = "{";
  for (size_t i = 0; i < set->size(); ++i) {
    if (i > 0) out += ",";
    out += PrometheusName((*set)[i].first, false) + "=\"" + EscapeLabel((*set)[i].second) + "\"";
  }
  return out + "}";
}

// `items` grouped by their exposed name, names in the order they first appear.
template <typename T, typename NameOf>
std::vector<std::pair<std::string, std::vector<const T*>>> GroupByName(const std::vector<T>& items,
                                                                       NameOf name_of) {
  std::vector<std::pair<std::string, std::vector<const T*>>> groups;
  std::map<std::string, size_t> index;
  for (const T& item : items) {
    std::string name = name_of(item);
    auto [it, added] = index.try_emplace(name, groups.size());
    if (added) groups.emplace_back(std::move(name), std::vector<const T*>{});
    groups[it->second].second.push_back(&item);
  }
  return groups;
}

}  // namespace

std::string PrometheusName(std::string_view name, bool metric) {
  std::string out;
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) out += '_';
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || (metric && c == ':');
    out += ok ? c : '_';
  }
  return out;
}

void LatencyBuckets::Record(uint64_t ns) {
  const double value = static_cast<double>(ns);
  size_t i = 0;
  for (; i < kBounds; ++i) {
    if (value <= BoundSeconds(i) * 1e9) break;
  }
  ++buckets_[i];
  ++count_;
  sum_ns_ += static_cast<double>(ns);
}

double LatencyBuckets::BoundSeconds(size_t i) {
  return std::ldexp(1.0, kMinExponent + static_cast<int>(i));
}

std::string FormatPrometheusText(const SelfReadings& readings, const LatencyReadings& latencies) {
  std::string out;
  for (const auto& [name, rs] :
       GroupByName(readings, [](const SelfReading& r) { return ExposedName(r).first; })) {
    const SelfReading& first = *rs.front();
    // The unit when the name does not say it; a counter's "packets/s" (trailmap stores the
    // per-second gain) counts packets here, where the total is exposed.
    std::string unit = first.series.unit;
    if (first.counter && unit.ends_with("/s")) unit.resize(unit.size() - 2);
    std::string help = first.series.description;
    if (!unit.empty() && unit != "B" && unit != "ns" && unit != "s") {
      help += (help.empty() ? "(" : " (") + unit + ")";
    }
    out += "# HELP " + name + " " + EscapeHelp(help) + "\n";
    out += "# TYPE " + name + (first.counter ? " counter\n" : " gauge\n");
    for (const SelfReading* r : rs) {
      out += name + Labels(r->series.fields) + " " +
             FormatValue(r->value * ExposedName(*r).second) + "\n";
    }
  }
  for (const auto& [name, rs] : GroupByName(latencies, [](const LatencyReading& r) {
         return PrometheusName(r.metric, true) + "_seconds";
       })) {
    out += "# HELP " + name + " " + EscapeHelp(rs.front()->description) + "\n";
    out += "# TYPE " + name + " histogram\n";
    for (const LatencyReading* r : rs) {
      const std::string labels = Labels(r->fields);
      // "{a=\"b\"" without its '}', so le can follow; "{" when there are no fields.
      const std::string open = labels.empty() ? "{" : labels.substr(0, labels.size() - 1) + ",";
      uint64_t cumulative = 0;
      const auto& buckets = r->buckets.buckets();
      for (size_t i = 0; i < buckets.size(); ++i) {
        cumulative += buckets[i];
        const std::string le = i < LatencyBuckets::kBounds
                                   ? FormatValue(LatencyBuckets::BoundSeconds(i))
                                   : std::string("+Inf");
        out += name + "_bucket" + open + "le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
      }
      out += name + "_sum" + labels + " " + FormatValue(r->buckets.sum_ns() / 1e9) + "\n";
      out += name + "_count" + labels + " " + std::to_string(r->buckets.count()) + "\n";
    }
  }
  return out;
}

}  // namespace trailmap
