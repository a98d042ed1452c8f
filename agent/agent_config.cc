#include "agent/agent_config.h"

#include <toml++/toml.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/cluster.h"
#include "core/endpoint.h"
#include "ingest/spool.h"

namespace trailmap {
namespace {

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// "flush_ms (--flush-ms)": the TOML key and the flag that overrides it.
std::string KeyAndFlag(std::string_view key) {
  std::string flag(key);
  for (char& c : flag) {
    if (c == '_') c = '-';
  }
  return std::string(key) + " (--" + flag + ")";
}

Status CheckRange(std::string_view key, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return Status::Ok();
  return Status::InvalidArgument(KeyAndFlag(key) + " must be from " + std::to_string(lo) + " to " +
                                 std::to_string(hi) + ", got " + std::to_string(value));
}

// Splits "a,b , c" into trimmed non-empty parts.
std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> out;
  std::stringstream in{std::string(text)};
  std::string part;
  while (std::getline(in, part, ',')) {
    const size_t b = part.find_first_not_of(" \t");
    const size_t e = part.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(part.substr(b, e - b + 1));
  }
  return out;
}

Result<MetricKind> ParseKind(std::string_view text) {
  if (text == "latency") return MetricKind::kLatency;
  if (text == "size") return MetricKind::kSize;
  if (text == "scalar") return MetricKind::kScalar;
  return Status::InvalidArgument("kind " + Quote(text) + " is not latency, size or scalar");
}

// The unit a kind implies when none is given ("" for scalar: it must be given).
std::string DefaultUnit(MetricKind kind) {
  return kind == MetricKind::kLatency ? "ns" : kind == MetricKind::kSize ? "B" : "";
}

Status ParseSpoolTable(const toml::table& t, const std::string& where, SpoolConfig* spool) {
  for (auto&& [key, node] : t) {
    const std::string k(key.str());
    const std::string name = "spool." + k;
    if (k == "dir" || k == "fsync") {
      const std::optional<std::string> v = node.value<std::string>();
      if (!v) return Status::InvalidArgument(where + name + " must be a string");
      (k == "dir" ? spool->dir : spool->fsync) = *v;
    } else if (k == "max_bytes" || k == "fsync_ms") {
      const std::optional<int64_t> v = node.value_exact<int64_t>();
      if (!v) return Status::InvalidArgument(where + name + " must be an integer");
      (k == "max_bytes" ? spool->max_bytes : spool->fsync_ms) = *v;
    } else {
      return Status::InvalidArgument(where + "unknown key " + Quote(name) +
                                     " (known: dir, max_bytes, fsync, fsync_ms)");
    }
  }
  return Status::Ok();
}

Status ParseProcTable(const toml::table& t, const std::string& where, ProcConfig* proc) {
  for (auto&& [key, node] : t) {
    const std::string k(key.str());
    const std::string name = "proc." + k;
    if (k == "enabled" || k == "per_process") {
      const std::optional<bool> v = node.value_exact<bool>();
      if (!v) return Status::InvalidArgument(where + name + " must be true or false");
      (k == "enabled" ? proc->enabled : proc->per_process) = *v;
    } else if (k == "interval_ms" || k == "max_process_names") {
      const std::optional<int64_t> v = node.value_exact<int64_t>();
      if (!v) return Status::InvalidArgument(where + name + " must be an integer");
      (k == "interval_ms" ? proc->interval_ms : proc->max_process_names) = *v;
    } else if (k == "root" || k == "cgroup_root") {
      const std::optional<std::string> v = node.value<std::string>();
      if (!v) return Status::InvalidArgument(where + name + " must be a string");
      (k == "root" ? proc->root : proc->cgroup_root) = *v;
    } else {
      return Status::InvalidArgument(where + "unknown key " + Quote(name) +
                                     " (known: enabled, interval_ms, root, cgroup_root, "
                                     "per_process, max_process_names)");
    }
  }
  return Status::Ok();
}

Status ParseExecTable(const toml::table& t, const std::string& where, ExecSpec* spec) {
  bool unit_given = false;
  for (auto&& [key, node] : t) {
    const std::string k(key.str());
    const std::string name = where + k;
    if (k == "metric" || k == "kind" || k == "unit" || k == "description") {
      const std::optional<std::string> v = node.value<std::string>();
      if (!v) return Status::InvalidArgument(name + " must be a string");
      if (k == "metric") spec->metric = *v;
      if (k == "description") spec->description = *v;
      if (k == "unit") {
        spec->unit = *v;
        unit_given = true;
      }
      if (k == "kind") {
        Result<MetricKind> kind = ParseKind(*v);
        if (!kind.ok()) return Status::InvalidArgument(name + ": " + kind.status().message());
        spec->kind = *kind;
      }
    } else if (k == "command") {
      if (const std::optional<std::string> v = node.value<std::string>()) {
        spec->shell = *v;
      } else if (const toml::array* a = node.as_array(); a != nullptr && !a->empty()) {
        for (const toml::node& item : *a) {
          const std::optional<std::string> arg = item.value<std::string>();
          if (!arg)
            return Status::InvalidArgument(name + " must be a string or an array of strings");
          spec->argv.push_back(*arg);
        }
      } else {
        return Status::InvalidArgument(name +
                                       " must be a string (run by /bin/sh -c) or a "
                                       "non-empty array of strings (run directly)");
      }
    } else if (k == "fields") {
      const toml::table* f = node.as_table();
      if (f == nullptr)
        return Status::InvalidArgument(name + " must be a table of key = \"value\"");
      for (auto&& [fk, fv] : *f) {
        const std::optional<std::string> v = fv.value<std::string>();
        if (!v)
          return Status::InvalidArgument(name + "." + std::string(fk.str()) + " must be a string");
        spec->fields.emplace_back(std::string(fk.str()), *v);
      }
    } else if (k == "restart_min_ms" || k == "restart_max_ms") {
      const std::optional<int64_t> v = node.value_exact<int64_t>();
      if (!v) return Status::InvalidArgument(name + " must be an integer");
      (k == "restart_min_ms" ? spec->restart_min : spec->restart_max) =
          std::chrono::milliseconds(*v);
    } else {
      return Status::InvalidArgument(where + "unknown key " + Quote(k) +
                                     " (known: metric, kind, unit, description, command, fields, "
                                     "restart_min_ms, restart_max_ms)");
    }
  }
  if (!unit_given) spec->unit = DefaultUnit(spec->kind);
  return Status::Ok();
}

// [perf] and [folded]: each key's value into the options; errors name "perf.key (--flag)".
Status ParseStackTable(std::string_view where, std::string_view section, const toml::table& t,
                       AgentConfig* config) {
  for (auto&& [key, value] : t) {
    const toml::node& node = value;  // clang 14 cannot capture a structured binding in a lambda
    const std::string k(key.str());
    const std::string name = std::string(section) + "." + k;
    auto want = [&](const char* type) {
      return Status::InvalidArgument(std::string(where) + name + " must be " + type);
    };
    auto get_string = [&](std::string* out) -> Status {
      const std::optional<std::string> v = node.value<std::string>();
      if (!v) return want("a string");
      *out = *v;
      return Status::Ok();
    };
    auto get_bool = [&](bool* out) -> Status {
      const toml::value<bool>* v = node.as_boolean();  // value<bool>() would take 1 too
      if (v == nullptr) return want("true or false");
      *out = v->get();
      return Status::Ok();
    };
    auto get_int = [&](int64_t* out) -> Status {
      const std::optional<int64_t> v = node.value_exact<int64_t>();
      if (!v) return want("an integer");
      *out = *v;
      return Status::Ok();
    };
    Status s = Status::Ok();
    if (section == "perf") {
      PerfSourceOptions& p = config->perf;
      int64_t n = 0;
      if (k == "enabled") {
        s = get_bool(&config->perf_enabled);
      } else if (k == "frequency") {
        s = get_int(&n);
        if (s.ok()) {
          if (n < 1 || n > 10'000) {
            return Status::InvalidArgument(std::string(where) +
                                           "perf.frequency (--perf-frequency) must be from 1 to "
                                           "10000 Hz, got " +
                                           std::to_string(n));
          }
          p.frequency = static_cast<int>(n);
        }
      } else if (k == "window_ms") {
        s = get_int(&p.window_ms);
      } else if (k == "callgraph") {
        s = get_string(&p.callgraph);
      } else if (k == "pid") {
        s = get_bool(&p.pid_field);
      } else if (k == "offsets") {
        s = get_bool(&p.offsets);
      } else if (k == "perf_path") {
        s = get_string(&p.perf_path);
      } else if (k == "metric") {
        s = get_string(&p.metric);
      } else {
        return Status::InvalidArgument(std::string(where) + "unknown key " + Quote(name) +
                                       " (known: enabled, frequency, window_ms, callgraph, pid, "
                                       "offsets, perf_path, metric)");
      }
    } else {
      FoldedSourceOptions& f = config->folded;
      if (k == "path") {
        s = get_string(&f.path);
      } else if (k == "follow") {
        s = get_bool(&f.follow);
      } else if (k == "socket") {
        s = get_string(&f.socket);
      } else if (k == "metric") {
        s = get_string(&f.metric);
      } else if (k == "fields") {
        const toml::table* ft = node.as_table();
        if (ft == nullptr) return want("a table of key = \"value\"");
        for (auto&& [fk, fv] : *ft) {
          const std::optional<std::string> v = fv.value<std::string>();
          if (!v) {
            return Status::InvalidArgument(std::string(where) + name + "." + std::string(fk.str()) +
                                           " must be a string");
          }
          if (Status a = AddLabel(std::string(fk.str()) + "=" + *v, &f.fields); !a.ok()) {
            return Status::InvalidArgument(std::string(where) + name + ": " + a.message());
          }
        }
      } else {
        return Status::InvalidArgument(std::string(where) + "unknown key " + Quote(name) +
                                       " (known: path, follow, socket, metric, fields)");
      }
    }
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

Status AddLabel(std::string_view text, FieldSet* labels) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return Status::InvalidArgument("label " + Quote(text) + " is not KEY=VALUE");
  }
  std::string key(text.substr(0, eq));
  std::string value(text.substr(eq + 1));
  if (Status s = ValidateField(key, value); !s.ok()) {
    return Status::InvalidArgument("label " + Quote(text) + ": " + s.message());
  }
  for (Field& f : *labels) {
    if (f.first == key) {
      f.second = std::move(value);
      return Status::Ok();
    }
  }
  labels->emplace_back(std::move(key), std::move(value));
  return Status::Ok();
}

namespace {

// One [[statsd_unit]] table: match = "glob", unit = "ms" | "s" | "us" | "ns" | "B" | "none".
// Messages name the table's index, the key and its line.
Result<StatsdUnitRule> ParseStatsdUnitTable(const toml::table& t, const std::string& where,
                                            size_t index) {
  const std::string here = where + "statsd_unit[" + std::to_string(index) + "] (line " +
                           std::to_string(t.source().begin.line) + ")";
  StatsdUnitRule rule;
  bool has_match = false, has_unit = false;
  for (auto&& [key, node] : t) {
    const std::string k(key.str());
    const std::string at = where + "statsd_unit[" + std::to_string(index) + "]." + k + " (line " +
                           std::to_string(node.source().begin.line) + ")";
    const std::optional<std::string> v = node.value<std::string>();
    if (k == "match") {
      if (!v || v->empty() || v->size() > kMaxMetricName + 64) {
        return Status::InvalidArgument(at + " must be a metric name pattern (* and ? globs)");
      }
      rule.match = *v;
      has_match = true;
    } else if (k == "unit") {
      if (!v) return Status::InvalidArgument(at + " must be a string: ms, s, us, ns, B or none");
      Result<StatsdUnit> unit = ParseStatsdUnit(*v);
      if (!unit.ok()) return Status::InvalidArgument(at + ": " + unit.status().message());
      rule.unit = *unit;
      has_unit = true;
    } else {
      return Status::InvalidArgument(at + ": unknown key (known: match, unit)");
    }
  }
  if (!has_match || !has_unit) {
    return Status::InvalidArgument(here + " needs both match = \"PATTERN\" and unit = \"UNIT\"");
  }
  return rule;
}

// [otlp]: listen = "HOST:PORT" (the same as otlp = "..."), resource_fields = ["k", ...].
Status ParseOtlpTable(const toml::table& t, const std::string& where, AgentConfig* config) {
  for (auto&& [key, node] : t) {
    const std::string k(key.str());
    const std::string at = where + "otlp." + k;
    if (k == "listen") {
      const std::optional<std::string> v = node.value<std::string>();
      if (!v) return Status::InvalidArgument(at + " (--otlp) must be a string \"HOST:PORT\"");
      config->otlp = *v;
    } else if (k == "resource_fields") {
      const toml::array* a = node.as_array();
      std::vector<std::string> names;
      for (size_t i = 0; a != nullptr && i < a->size(); ++i) {
        const std::optional<std::string> v = (*a)[i].value<std::string>();
        if (!v) {
          a = nullptr;
          break;
        }
        names.push_back(*v);
      }
      if (a == nullptr) {
        return Status::InvalidArgument(
            at +
            " (--otlp-resource-fields) must be an array of resource "
            "attribute names, e.g. [\"service.name\", \"k8s.pod.name\"]");
      }
      config->otlp_resource_fields = std::move(names);
    } else {
      return Status::InvalidArgument(at + ": unknown key (known: listen, resource_fields)");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ParseAgentConfig(std::string_view toml_text, std::string_view source, AgentConfig* config) {
  const std::string where = "config " + std::string(source) + ": ";
  toml::table table;
  try {
    table = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(where + "line " + std::to_string(e.source().begin.line) + ": " +
                                   std::string(e.description()));
  }
  if (table.contains("cluster") && table.contains("aggregators")) {
    return Status::InvalidArgument(where +
                                   "give cluster = \"FILE\" or aggregators = [...], not "
                                   "both (aggregators is the short form of a one-zone cluster)");
  }
  for (auto&& [key, node] : table) {
    const std::string_view k = key.str();
    auto want = [&where, k](const char* type) {  // used only within this loop iteration
      return Status::InvalidArgument(where + KeyAndFlag(k) + " must be " + type);
    };
    if (k == "otlp" && node.is_table()) {
      if (Status s = ParseOtlpTable(*node.as_table(), where, config); !s.ok()) return s;
    } else if (k == "prometheus" && node.is_table()) {
      for (auto&& [pk, pv] : *node.as_table()) {
        Status s = SetPromWriteKey(pk.str(), pv.value<std::string>(), pv.value_exact<int64_t>(),
                                   &config->prom_write);
        if (!s.ok()) return Status::InvalidArgument(where + s.message());
      }
    } else if (k == "host" || k == "statsd" || k == "key" || k == "server_key" || k == "metrics" ||
               k == "otlp") {
      const std::optional<std::string> v = node.value<std::string>();
      if (!v) return want("a string");
      (k == "host"      ? config->host
       : k == "statsd"  ? config->statsd
       : k == "metrics" ? config->metrics
       : k == "otlp"    ? config->otlp
       : k == "key"     ? config->key
                        : config->server_key) = *v;
    } else if (k == "insecure_plaintext") {
      const std::optional<bool> v = node.value<bool>();
      if (!v) return want("true or false");
      config->insecure_plaintext = *v;
    } else if (k == "aggregators") {
      config->aggregators.clear();
      if (const std::optional<std::string> v = node.value<std::string>()) {
        config->aggregators = SplitList(*v);
      } else if (const toml::array* a = node.as_array()) {
        for (const toml::node& item : *a) {
          const std::optional<std::string> v = item.value<std::string>();
          if (!v) return want("an array of \"HOST:PORT\" strings");
          config->aggregators.push_back(*v);
        }
      } else {
        return want("an array of \"HOST:PORT\" strings");
      }
    } else if (k == "cluster") {
      const std::optional<std::string> v = node.value<std::string>();
      if (!v) return want("a string (the cluster file's path)");
      config->cluster = *v;
    } else if (k == "labels") {
      const toml::table* t = node.as_table();
      if (t == nullptr) return want("a table of key = \"value\"");
      for (auto&& [lk, lv] : *t) {
        const std::optional<std::string> v = lv.value<std::string>();
        if (!v)
          return Status::InvalidArgument(where + "labels." + std::string(lk.str()) +
                                         " must be a string");
        if (Status s = AddLabel(std::string(lk.str()) + "=" + *v, &config->labels); !s.ok()) {
          return Status::InvalidArgument(where + s.message());
        }
      }
    } else if (k == "flush_ms" || k == "max_series" || k == "window" || k == "ack_timeout_ms" ||
               k == "statsd_new_metrics_per_minute" || k == "statsd_max_metrics") {
      const std::optional<int64_t> v = node.value_exact<int64_t>();
      if (!v) return want("an integer");
      int64_t* field = k == "flush_ms"     ? &config->flush_ms
                       : k == "max_series" ? &config->max_series
                       : k == "window"     ? &config->window
                       : k == "statsd_new_metrics_per_minute"
                           ? &config->statsd_new_metrics_per_minute
                       : k == "statsd_max_metrics" ? &config->statsd_max_metrics
                                                   : &config->ack_timeout_ms;
      *field = *v;
    } else if (k == "spool") {
      const toml::table* t = node.as_table();
      if (t == nullptr) return want("a table ([spool])");
      if (Status s = ParseSpoolTable(*t, where, &config->spool); !s.ok()) return s;
    } else if (k == "proc") {
      const toml::table* t = node.as_table();
      if (t == nullptr) return want("a table ([proc])");
      if (Status s = ParseProcTable(*t, where, &config->proc); !s.ok()) return s;
    } else if (k == "exec") {
      const toml::array* a = node.as_array();
      if (a == nullptr) return want("an array of tables ([[exec]])");
      for (const toml::node& item : *a) {
        const toml::table* t = item.as_table();
        if (t == nullptr) return want("an array of tables ([[exec]])");
        ExecSpec spec;
        const std::string here = where + "exec[" + std::to_string(config->exec.size()) + "].";
        if (Status s = ParseExecTable(*t, here, &spec); !s.ok()) return s;
        config->exec.push_back(std::move(spec));
      }
    } else if (k == "statsd_unit") {
      const toml::array* a = node.as_array();
      if (a == nullptr) return want("an array of tables ([[statsd_unit]])");
      for (const toml::node& item : *a) {
        const toml::table* t = item.as_table();
        if (t == nullptr) return want("an array of tables ([[statsd_unit]])");
        Result<StatsdUnitRule> rule = ParseStatsdUnitTable(*t, where, config->statsd_units.size());
        if (!rule.ok()) return rule.status();
        config->statsd_units.push_back(std::move(*rule));
      }
    } else if (k == "perf" || k == "folded") {
      const toml::table* t = node.as_table();
      if (t == nullptr) return want("a table ([perf] / [folded])");
      if (Status s = ParseStackTable(where, k, *t, config); !s.ok()) return s;
    } else {
      return Status::InvalidArgument(
          where + "unknown key " + Quote(k) +
          " (known: host, labels, aggregators, cluster, statsd, metrics, otlp or [otlp], "
          "[prometheus], key, "
          "server_key, insecure_plaintext, flush_ms, max_series, statsd_new_metrics_per_minute, "
          "statsd_max_metrics, "
          "window, ack_timeout_ms, [spool], [proc], "
          "[[exec]], [[statsd_unit]], [perf], [folded])");
    }
  }
  return Status::Ok();
}

Status LoadAgentConfigFile(const std::string& path, AgentConfig* config) {
  std::ifstream in(path);
  if (!in) return Status::IOError("cannot read config " + Quote(path));
  std::stringstream text;
  text << in.rdbuf();
  return ParseAgentConfig(text.str(), path, config);
}

Result<ExecSpec> ParseExecFlag(std::string_view text) {
  ExecSpec spec;
  bool unit_given = false;
  std::string_view rest = text;
  while (!rest.empty()) {
    if (rest.substr(0, 8) == "command=") {
      spec.shell = std::string(rest.substr(8));
      break;
    }
    const size_t comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument("--exec: " + Quote(part) + " is not KEY=VALUE");
    }
    const std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
    if (key == "metric") {
      spec.metric = std::string(value);
    } else if (key == "kind") {
      Result<MetricKind> kind = ParseKind(value);
      if (!kind.ok()) return Status::InvalidArgument("--exec: " + kind.status().message());
      spec.kind = *kind;
    } else if (key == "unit") {
      spec.unit = std::string(value);
      unit_given = true;
    } else if (key.substr(0, 6) == "field.") {
      spec.fields.emplace_back(std::string(key.substr(6)), std::string(value));
    } else if (key == "restart_min_ms" || key == "restart_max_ms") {
      int64_t ms = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
      if (ec != std::errc() || end != value.data() + value.size()) {
        return Status::InvalidArgument("--exec: " + std::string(key) + " must be an integer");
      }
      (key == "restart_min_ms" ? spec.restart_min : spec.restart_max) =
          std::chrono::milliseconds(ms);
    } else {
      return Status::InvalidArgument("--exec: unknown key " + Quote(key) +
                                     " (known: metric, kind, unit, field.NAME, restart_min_ms, "
                                     "restart_max_ms, command — last, it takes the rest)");
    }
  }
  if (spec.shell.empty()) {
    return Status::InvalidArgument("--exec: " + Quote(text) + " has no command=... (last)");
  }
  if (!unit_given) spec.unit = DefaultUnit(spec.kind);
  return spec;
}

Status ValidateAgentConfig(const AgentConfig& c) {
  if (Status s = ValidateField("host", c.host); !s.ok()) {
    return Status::InvalidArgument("host (--host) " + Quote(c.host) +
                                   " must be 1..200 printable bytes without spaces or ','");
  }
  if (Result<std::string> labels = CanonicalFields(c.labels); !labels.ok()) {
    return Status::InvalidArgument("labels (--label): " + labels.status().message());
  }
  if (c.aggregators.empty()) {
    return Status::InvalidArgument(KeyAndFlag("aggregators") + " must name at least one HOST:PORT");
  }
  for (const std::string& a : c.aggregators) {
    if (Result<HostPort> hp = ParseHostPort(a); !hp.ok()) {
      return Status::InvalidArgument(KeyAndFlag("aggregators") + ": " + hp.status().message());
    }
  }
  if (c.statsd != "off") {
    if (Result<HostPort> hp = ParseHostPort(c.statsd); !hp.ok()) {
      return Status::InvalidArgument(KeyAndFlag("statsd") + ": " + hp.status().message() +
                                     " (or \"off\")");
    }
  }
  if (c.metrics != "off") {
    if (Result<HostPort> hp = ParseHostPort(c.metrics); !hp.ok()) {
      return Status::InvalidArgument(KeyAndFlag("metrics") + ": " + hp.status().message() +
                                     " (or \"off\")");
    }
  }
  if (c.otlp_resource_fields) {
    for (const std::string& name : *c.otlp_resource_fields) {
      if (Status s = ValidateField(name, "v"); !s.ok()) {
        return Status::InvalidArgument("otlp.resource_fields (--otlp-resource-fields): " +
                                       s.message() + " (name resource attributes to keep)");
      }
    }
  }
  if (Status s = ValidatePromWriteConfig(c.prom_write); !s.ok()) return s;
  if (!c.otlp.empty() && c.otlp != "off") {
    if (Result<HostPort> hp = ParseHostPort(c.otlp); !hp.ok()) {
      return Status::InvalidArgument(KeyAndFlag("otlp") + ": " + hp.status().message() +
                                     " (or \"off\")");
    }
  }
  if (Status s = CheckRange("flush_ms", c.flush_ms, 10, 60'000); !s.ok()) return s;
  if (Status s = CheckRange("max_series", c.max_series, 1, 1'000'000); !s.ok()) return s;
  if (Status s = CheckRange("statsd_new_metrics_per_minute", c.statsd_new_metrics_per_minute, 0,
                            10'000'000);
      !s.ok()) {
    return s;
  }
  if (Status s = CheckRange("statsd_max_metrics", c.statsd_max_metrics, 1, 100'000'000); !s.ok()) {
    return s;
  }
  if (c.spool.max_bytes < (int64_t{1} << 20) || c.spool.max_bytes > (int64_t{1} << 40)) {
    return Status::InvalidArgument(
        "spool.max_bytes (--spool-bytes) must be from 1 MiB to 1 TiB, "
        "got " +
        std::to_string(c.spool.max_bytes));
  }
  if (Result<SpoolFsync> f = ParseSpoolFsync(c.spool.fsync); !f.ok()) {
    return Status::InvalidArgument("spool.fsync (--spool-fsync): " + f.status().message());
  }
  if (c.spool.fsync_ms < 10 || c.spool.fsync_ms > 60'000) {
    return Status::InvalidArgument(
        "spool.fsync_ms (--spool-fsync-ms) must be from 10 to 60000, "
        "got " +
        std::to_string(c.spool.fsync_ms));
  }
  if (Status s = CheckRange("window", c.window, 1, 10'000); !s.ok()) return s;
  if (Status s = CheckRange("ack_timeout_ms", c.ack_timeout_ms, 100, 600'000); !s.ok()) return s;
  if (c.proc.interval_ms < 1000 || c.proc.interval_ms > 3'600'000) {
    return Status::InvalidArgument("proc.interval_ms must be from 1000 to 3600000, got " +
                                   std::to_string(c.proc.interval_ms));
  }
  if (c.proc.max_process_names < 1 || c.proc.max_process_names > 100'000) {
    return Status::InvalidArgument("proc.max_process_names must be from 1 to 100000, got " +
                                   std::to_string(c.proc.max_process_names));
  }
  if (c.proc.root.empty()) return Status::InvalidArgument("proc.root (--proc-root) is empty");
  for (size_t i = 0; i < c.exec.size(); ++i) {
    const std::string where = "exec[" + std::to_string(i) + "] (" + c.exec[i].metric + ")";
    if (c.exec[i].unit.empty()) {
      return Status::InvalidArgument(
          where + ": a scalar metric needs a unit (unit = \"%\" in [[exec]], unit=% in --exec)");
    }
    if (Status s = ValidateExecSpec(c.exec[i], where); !s.ok()) return s;
  }
  if (c.perf_enabled) {
    if (Status s = ValidatePerfSourceOptions(c.perf); !s.ok()) {
      return Status::InvalidArgument("[perf] (--perf-*): " + s.message());
    }
  }
  if (!c.folded.path.empty() || !c.folded.socket.empty()) {
    if (Status s = ValidateFoldedSourceOptions(c.folded); !s.ok()) {
      return Status::InvalidArgument("[folded] (--folded-*): " + s.message());
    }
  }
  return Status::Ok();
}

Result<Cluster> AgentCluster(const AgentConfig& config) {
  if (!config.cluster.empty()) {
    Result<Cluster> cluster = LoadCluster(config.cluster);
    if (!cluster.ok())
      return Status::InvalidArgument(KeyAndFlag("cluster") + ": " + cluster.status().message());
    return cluster;
  }
  std::string list;
  for (const std::string& a : config.aggregators) list += (list.empty() ? "" : ",") + a;
  Result<Cluster> cluster = ClusterFromList(list, kDefaultIngestPort);
  if (!cluster.ok()) {
    return Status::InvalidArgument(KeyAndFlag("aggregators") + ": " + cluster.status().message());
  }
  return cluster;
}

std::string IngestEndpoint(const AgentConfig& config) {
  // Placed by the normalized endpoints ("tcp://h:p"), as `trailmap import` places the same host.
  std::vector<std::string> names;
  for (const std::string& a : config.aggregators) {
    Result<std::string> e = ParseEndpoint(a, kDefaultIngestPort);
    names.push_back(e.ok() ? *e : a);
  }
  const std::string& chosen = config.aggregators[RendezvousIndex(config.host, names)];
  Result<HostPort> hp = ParseHostPort(chosen);
  if (hp.ok() && hp->host.find(':') != std::string::npos) {  // IPv6: ZeroMQ wants brackets
    return "tcp://[" + hp->host + "]:" + std::to_string(hp->port);
  }
  return "tcp://" + chosen;
}

std::string DefaultSpoolDir(const std::string& host) {
  std::error_code ec;
  const std::filesystem::path system = "/var/lib/trailmap-agent";
  std::filesystem::create_directories(system, ec);
  if (!ec && ::access(system.c_str(), W_OK) == 0) return (system / "spool" / host).string();
  const char* state = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  const std::filesystem::path base =
      state != nullptr && state[0] == '/'
          ? std::filesystem::path(state)
          : std::filesystem::path(home ? home : ".") / ".local/state";
  return (base / "trailmap-agent" / "spool" / host).string();
}

std::string DefaultHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace trailmap
