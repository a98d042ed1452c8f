#include "core/prometheus_text.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "core/series.h"

namespace trailmap {
namespace {

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
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
  if (r.series.unit == "B") {
    name += "_bytes";
  } else if (r.series.unit == "ns") {
    name += "_seconds";
    scale = 1e-9;
  }
  if (r.counter) name += "_total";
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

std::string FormatPrometheusText(const SelfReadings& readings) {
  // Metric name -> its readings, in order of first appearance.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const SelfReading*>> by_name;
  for (const SelfReading& r : readings) {
    const std::string name = ExposedName(r).first;
    auto [it, added] = by_name.try_emplace(name);
    if (added) order.push_back(name);
    it->second.push_back(&r);
  }
  std::string out;
  for (const std::string& name : order) {
    const std::vector<const SelfReading*>& rs = by_name[name];
    const SelfReading& first = *rs.front();
    // The unit when the name does not say it; a counter's "packets/s" (trailmap stores the
    // per-second gain) counts packets here, where the total is exposed.
    std::string unit = first.series.unit;
    if (first.counter && unit.ends_with("/s")) unit.resize(unit.size() - 2);
    std::string help = first.series.description;
    if (!unit.empty() && unit != "B" && unit != "ns") {
      help += (help.empty() ? "(" : " (") + unit + ")";
    }
    out += "# HELP " + name + " " + EscapeHelp(help) + "\n";
    out += "# TYPE " + name + (first.counter ? " counter\n" : " gauge\n");
    for (const SelfReading* r : rs) {
      out += name + Labels(r->series.fields) + " " +
             FormatValue(r->value * ExposedName(*r).second) + "\n";
    }
  }
  return out;
}

}  // namespace trailmap
