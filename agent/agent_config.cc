#include "agent/agent_config.h"

#include <toml++/toml.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "core/shard.h"

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

// [perf] and [folded]: each key's value into the options; errors name "perf.key (--flag)".
Status ParseStackTable(std::string_view where, std::string_view section, const toml::table& t,
                       AgentConfig* config) {
  for (auto&& [key, node] : t) {
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
                                           "10000 Hz, got " + std::to_string(n));
          }
          p.frequency = static_cast<int>(n);
        }
      } else if (k == "window_ms") {
        s = get_int(&p.window_ms);
      } else if (k == "callgraph") {
        s = get_string(&p.callgraph);
      } else if (k == "pid") {
        s = get_bool(&p.pid_field);
      } else if (k == "perf_path") {
        s = get_string(&p.perf_path);
      } else if (k == "metric") {
        s = get_string(&p.metric);
      } else {
        return Status::InvalidArgument(std::string(where) + "unknown key " + Quote(name) +
                                       " (known: enabled, frequency, window_ms, callgraph, pid, "
                                       "perf_path, metric)");
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
            return Status::InvalidArgument(std::string(where) + name + "." +
                                           std::string(fk.str()) + " must be a string");
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

Result<HostPort> ParseHostPort(std::string_view text) {
  HostPort out;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Status::InvalidArgument(Quote(text) + " is not [IPv6]:PORT");
    }
    out.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon) {
      return Status::InvalidArgument(Quote(text) + " is not HOST:PORT");
    }
    out.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
  }
  if (out.host.empty()) return Status::InvalidArgument(Quote(text) + " has no host before ':'");
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || port.empty() || value == 0 ||
      value > 65535) {
    return Status::InvalidArgument(Quote(text) + ": port must be 1..65535");
  }
  out.port = static_cast<uint16_t>(value);
  return out;
}

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

Status ParseAgentConfig(std::string_view toml_text, std::string_view source, AgentConfig* config) {
  const std::string where = "config " + std::string(source) + ": ";
  toml::table table;
  try {
    table = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(where + "line " + std::to_string(e.source().begin.line) + ": " +
                                   std::string(e.description()));
  }
  for (auto&& [key, node] : table) {
    const std::string_view k = key.str();
    auto want = [&where, k](const char* type) {  // used only within this loop iteration
      return Status::InvalidArgument(where + KeyAndFlag(k) + " must be " + type);
    };
    if (k == "host" || k == "statsd") {
      const std::optional<std::string> v = node.value<std::string>();
      if (!v) return want("a string");
      (k == "host" ? config->host : config->statsd) = *v;
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
    } else if (k == "flush_ms" || k == "max_series" || k == "max_queued" || k == "window" ||
               k == "ack_timeout_ms") {
      const std::optional<int64_t> v = node.value_exact<int64_t>();
      if (!v) return want("an integer");
      int64_t* field = k == "flush_ms"     ? &config->flush_ms
                       : k == "max_series" ? &config->max_series
                       : k == "max_queued" ? &config->max_queued
                       : k == "window"     ? &config->window
                                           : &config->ack_timeout_ms;
      *field = *v;
    } else if (k == "perf" || k == "folded") {
      const toml::table* t = node.as_table();
      if (t == nullptr) return want("a table ([perf] / [folded])");
      if (Status s = ParseStackTable(where, k, *t, config); !s.ok()) return s;
    } else {
      return Status::InvalidArgument(where + "unknown key " + Quote(k) +
                                     " (known: host, labels, aggregators, statsd, flush_ms, "
                                     "max_series, max_queued, window, ack_timeout_ms, [perf], [folded])");
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
  if (Status s = CheckRange("flush_ms", c.flush_ms, 10, 60'000); !s.ok()) return s;
  if (Status s = CheckRange("max_series", c.max_series, 1, 1'000'000); !s.ok()) return s;
  if (Status s = CheckRange("max_queued", c.max_queued, 1, 10'000'000); !s.ok()) return s;
  if (Status s = CheckRange("window", c.window, 1, 10'000); !s.ok()) return s;
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
  return CheckRange("ack_timeout_ms", c.ack_timeout_ms, 100, 600'000);
}

std::string IngestEndpoint(const AgentConfig& config) {
  const std::string& chosen =
      config.aggregators[ShardIndex(config.host, config.aggregators.size())];
  Result<HostPort> hp = ParseHostPort(chosen);
  if (hp.ok() && hp->host.find(':') != std::string::npos) {  // IPv6: ZeroMQ wants brackets
    return "tcp://[" + hp->host + "]:" + std::to_string(hp->port);
  }
  return "tcp://" + chosen;
}

std::string DefaultHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace trailmap
