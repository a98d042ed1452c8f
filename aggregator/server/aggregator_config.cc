#include "aggregator/server/aggregator_config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "core/endpoint.h"
#include "core/series.h"
#include "core/units.h"

namespace trailmap::aggregator {
namespace {

Status KeyError(std::string_view source, std::string_view key, std::string_view what) {
  return Status::InvalidArgument(std::string(source) + ": " + std::string(key) + ": " +
                                 std::string(what));
}

Status CheckKeys(const toml::table& table, std::string_view source, std::string_view prefix,
                 const std::set<std::string, std::less<>>& known) {
  for (const auto& [key, value] : table) {
    if (!known.count(key.str())) {
      return KeyError(source, std::string(prefix) + std::string(key.str()), "unknown key");
    }
  }
  return Status::Ok();
}

Status ReadString(const toml::table& t, std::string_view source, std::string_view key,
                  std::string* out) {
  const toml::node* node = t.get(key);
  if (!node) return Status::Ok();
  const auto* s = node->as_string();
  if (!s) return KeyError(source, key, "expected a string");
  *out = s->get();
  return Status::Ok();
}

Status ReadEndpoint(const toml::table& t, std::string_view source, std::string_view key,
                    std::string* out) {
  std::string text;
  if (!t.get(key)) return Status::Ok();
  if (Status s = ReadString(t, source, key, &text); !s.ok()) return s;
  Result<std::string> e = NormalizeEndpoint(text);
  if (!e.ok()) return KeyError(source, key, e.status().message());
  *out = *e;
  return Status::Ok();
}

Status ReadSize(const toml::table& t, std::string_view source, std::string_view key, int64_t min,
                int64_t max, size_t* out) {
  const toml::node* node = t.get(key);
  if (!node) return Status::Ok();
  const auto* v = node->as_integer();
  if (!v) return KeyError(source, key, "expected an integer");
  if (v->get() < min || v->get() > max) {
    return KeyError(source, key,
                    "must be between " + std::to_string(min) + " and " + std::to_string(max));
  }
  *out = static_cast<size_t>(v->get());
  return Status::Ok();
}

}  // namespace

Result<int64_t> ParseRetention(std::string_view text) {
  if (text == "forever") return int64_t{0};
  Result<uint64_t> ns = ParseDuration(text);
  if (!ns.ok()) {
    return Status::InvalidArgument("\"" + std::string(text) +
                                   "\": expected a duration such as 36h, 14d or 90d, or forever");
  }
  if (*ns < 1'000'000'000) {
    return Status::InvalidArgument("\"" + std::string(text) +
                                   "\": at least 1s (or forever to keep everything)");
  }
  if (*ns / 1'000'000'000 > static_cast<uint64_t>(kMaxRetentionSeconds)) {
    return Status::InvalidArgument("\"" + std::string(text) +
                                   "\": at most 36500d (100 years), or forever to keep everything");
  }
  return static_cast<int64_t>(*ns / 1'000'000'000);
}

std::string FormatRetention(int64_t seconds) {
  if (seconds == 0) return "forever";
  for (auto [unit, size] : {std::pair{"d", 86400}, {"h", 3600}, {"m", 60}}) {
    if (seconds % size == 0) return std::to_string(seconds / size) + unit;
  }
  return std::to_string(seconds) + "s";
}

Result<std::string> NormalizeEndpoint(std::string_view text) {
  std::string_view rest = text;
  if (rest.substr(0, 6) == "tcp://") rest.remove_prefix(6);
  if (rest.find("://") != std::string_view::npos) {
    return Status::InvalidArgument("\"" + std::string(text) +
                                   "\": only tcp:// endpoints are supported");
  }
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Status::InvalidArgument("\"" + std::string(text) +
                                   "\": expected HOST:PORT, e.g. 127.0.0.1:7400");
  }
  const std::string_view port = rest.substr(colon + 1);
  bool numeric = !port.empty() && port.size() <= 5;
  for (char c : port) numeric = numeric && c >= '0' && c <= '9';
  if (port != "*" && (!numeric || std::stoul(std::string(port)) > 65535)) {
    return Status::InvalidArgument("\"" + std::string(text) + "\": port must be 0..65535 or *");
  }
  return "tcp://" + std::string(rest);
}

std::string DefaultName(std::string_view hostname, std::string_view ingest_endpoint) {
  const size_t colon = ingest_endpoint.rfind(':');
  const std::string_view port = colon == std::string_view::npos ? std::string_view("7400")
                                                                : ingest_endpoint.substr(colon + 1);
  return std::string(hostname) + ":" + std::string(port);
}

Status ParseAggregateBy(std::string_view list, std::vector<std::string>* fields) {
  fields->clear();
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    const std::string_view key = list.substr(start, comma - start);
    start = comma + 1;
    if (key.empty()) continue;
    if (key == "host") {
      return Status::InvalidArgument("host is not a field to pre-aggregate by: a view by host "
                                     "reads every host anyway");
    }
    if (Status s = ValidateField(key, "x"); !s.ok()) return s;
    if (std::find(fields->begin(), fields->end(), key) == fields->end()) fields->emplace_back(key);
  }
  return Status::Ok();
}

Status ParseAggregatorConfig(std::string_view text, std::string_view source,
                             AggregatorConfig* config) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(
        std::string(source) + ":" + std::to_string(e.source().begin.line) + ":" +
        std::to_string(e.source().begin.column) + ": " + std::string(e.description()));
  }
  if (Status s =
          CheckKeys(root, source, "",
                    {"data", "ingest", "query", "name", "host", "self_metrics", "metrics",
                     "aggregate_by", "aggregates", "backfill", "key", "clients", "insecure_plaintext",
                     "store", "retention",
                     "limits", "queries"});
      !s.ok()) {
    return s;
  }
  if (Status s = ReadString(root, source, "data", &config->data_dir); !s.ok()) return s;
  if (Status s = ReadEndpoint(root, source, "ingest", &config->ingest_endpoint); !s.ok()) return s;
  if (Status s = ReadEndpoint(root, source, "query", &config->query_endpoint); !s.ok()) return s;
  if (Status s = ReadString(root, source, "name", &config->name); !s.ok()) return s;
  if (Status s = ReadString(root, source, "host", &config->host); !s.ok()) return s;
  if (Status s = ReadString(root, source, "metrics", &config->metrics); !s.ok()) return s;
  if (Status s = ReadString(root, source, "key", &config->key); !s.ok()) return s;
  if (Status s = ReadString(root, source, "clients", &config->clients); !s.ok()) return s;
  if (const toml::node* plain = root.get("insecure_plaintext")) {
    if (!plain->as_boolean()) {
      return KeyError(source, "insecure_plaintext", "expected true or false");
    }
    config->insecure_plaintext = plain->as_boolean()->get();
  }
  if (const toml::node* node = root.get("aggregate_by")) {
    const toml::array* fields = node->as_array();
    if (!fields) return KeyError(source, "aggregate_by", "expected a list of field keys, e.g. [\"role\", \"op\"]");
    std::string list;
    for (const toml::node& f : *fields) {
      if (!f.as_string()) return KeyError(source, "aggregate_by", "expected field keys (strings)");
      list += (list.empty() ? "" : ",") + f.as_string()->get();
    }
    if (Status s = ParseAggregateBy(list, &config->store.aggregates.fields); !s.ok()) {
      return KeyError(source, "aggregate_by", s.message());
    }
  }
  if (const toml::node* node = root.get("aggregates")) {
    if (!node->as_boolean()) return KeyError(source, "aggregates", "expected true or false");
    config->store.aggregates.enabled = node->as_boolean()->get();
  }
  if (const toml::node* node = root.get("backfill")) {
    if (!node->as_boolean()) return KeyError(source, "backfill", "expected true or false");
    config->store.aggregates.backfill = node->as_boolean()->get();
  }
  if (const toml::node* self = root.get("self_metrics")) {
    if (!self->as_boolean()) return KeyError(source, "self_metrics", "expected true or false");
    config->self_metrics = self->as_boolean()->get();
  }

  if (const toml::node* node = root.get("store")) {
    const toml::table* store = node->as_table();
    if (!store) return KeyError(source, "store", "expected a table");
    if (Status s = CheckKeys(*store, source, "store.",
                             {"sync", "max_successive_merges", "block_cache_mb", "write_buffer_mb",
                              "min_free_mb", "warm_cache_seconds"});
        !s.ok()) {
      return s;
    }
    if (const toml::node* sync = store->get("sync")) {
      if (!sync->as_boolean()) return KeyError(source, "store.sync", "expected true or false");
      config->store.sync = sync->as_boolean()->get();
    }
    StoreOptions& o = config->store;
    if (Status s =
            ReadSize(*store, source, "max_successive_merges", 1, 1000, &o.max_successive_merges);
        !s.ok())
      return s;
    if (Status s = ReadSize(*store, source, "block_cache_mb", 1, 1 << 20, &o.block_cache_mb);
        !s.ok())
      return s;
    if (Status s = ReadSize(*store, source, "write_buffer_mb", 1, 4096, &o.write_buffer_mb);
        !s.ok())
      return s;
    if (Status s = ReadSize(*store, source, "min_free_mb", 0, 1 << 20, &o.min_free_mb); !s.ok())
      return s;
    if (Status s = ReadSize(*store, source, "warm_cache_seconds", 0, 86400, &o.warm_cache_seconds);
        !s.ok())
      return s;
  }
  if (const toml::node* node = root.get("retention")) {
    const toml::table* retention = node->as_table();
    if (!retention) return KeyError(source, "retention", "expected a table");
    // Every data family, and `agents`: how long the watermark of a silent agent is kept.
    std::vector<std::pair<std::string, int64_t*>> keys;
    for (size_t i = 0; i < kHistogramResolutionCount; ++i) {
      keys.emplace_back(kHistogramResolutions[i].family, &config->store.retention_seconds[i]);
    }
    keys.emplace_back("scalar", &config->store.scalar_retention_seconds);
    keys.emplace_back("stacks", &config->store.stacks_retention_seconds);
    keys.emplace_back("stacks_60s", &config->store.stacks_60s_retention_seconds);
    keys.emplace_back("agents", &config->store.agent_idle_seconds);
    std::set<std::string, std::less<>> known;
    for (const auto& [name, out] : keys) known.insert(name);
    if (Status s = CheckKeys(*retention, source, "retention.", known); !s.ok()) return s;
    for (const auto& [name, out] : keys) {
      const std::string key = "retention." + name;
      const toml::node* value = retention->get(name);
      if (!value) continue;
      if (!value->as_string()) return KeyError(source, key, "expected a string such as \"14d\"");
      Result<int64_t> seconds = ParseRetention(value->as_string()->get());
      if (!seconds.ok()) return KeyError(source, key, seconds.status().message());
      *out = *seconds;
    }
  }
  if (const toml::node* node = root.get("limits")) {
    const toml::table* limits = node->as_table();
    if (!limits) return KeyError(source, "limits", "expected a table");
    if (Status s = CheckKeys(
            *limits, source, "limits.",
            {"max_batch_bytes", "batches_per_second", "bytes_per_second", "values_per_second",
             "definitions_per_second", "new_series_per_minute", "burst_seconds", "max_agents",
             "max_pending_bytes", "max_connections", "new_metrics_per_key", "handshake_timeout"});
        !s.ok()) {
      return s;
    }
    if (Status s = ReadSize(*limits, source, "max_batch_bytes", 1024, 1ll << 30,
                            &config->limits.max_bytes);
        !s.ok())
      return s;
    // Per-agent rates (agent_limits.h): whole numbers, 0 = unlimited.
    AgentLimits& a = config->agent_limits;
    for (auto [key, out] : {std::pair{"batches_per_second", &a.batches_per_second},
                            {"bytes_per_second", &a.bytes_per_second},
                            {"values_per_second", &a.values_per_second},
                            {"definitions_per_second", &a.definitions_per_second},
                            {"new_series_per_minute", &a.new_series_per_minute},
                            {"burst_seconds", &a.burst_seconds}}) {
      size_t value = static_cast<size_t>(*out);
      if (Status s = ReadSize(*limits, source, key, 0, int64_t{1} << 50, &value); !s.ok()) return s;
      *out = static_cast<double>(value);
    }
    if (a.burst_seconds < 1) return KeyError(source, "limits.burst_seconds", "must be at least 1");
    if (Status s = ReadSize(*limits, source, "max_agents", 1, 100'000'000, &a.max_agents); !s.ok())
      return s;
    if (Status s = ReadSize(*limits, source, "max_pending_bytes", 1 << 20, int64_t{1} << 40,
                            &config->max_pending_bytes);
        !s.ok())
      return s;
    if (Status s = ReadSize(*limits, source, "max_connections", 0, 100'000'000,
                            &config->max_connections);
        !s.ok())
      return s;
    if (const toml::node* timeout = limits->get("handshake_timeout")) {
      Result<uint64_t> ns = timeout->as_string() ? ParseDuration(timeout->as_string()->get())
                                                 : Status::InvalidArgument("expected a string");
      if (!ns.ok() || *ns < 100'000'000 || *ns > 600'000'000'000) {
        return KeyError(source, "limits.handshake_timeout",
                        "expected a duration from 100ms to 10m such as \"10s\"");
      }
      config->handshake_timeout = std::chrono::milliseconds(*ns / 1'000'000);
    }
    if (Status s = ReadSize(*limits, source, "new_metrics_per_key", 0, 100'000'000,
                            &config->new_metrics_per_key);
        !s.ok())
      return s;
  }
  if (const toml::node* node = root.get("queries")) {
    const toml::table* queries = node->as_table();
    if (!queries) return KeyError(source, "queries", "expected a table");
    if (Status s = CheckKeys(*queries, source, "queries.",
                             {"workers", "deadline", "max_keys", "max_groups", "max_cells",
                              "max_answer_bytes"});
        !s.ok()) {
      return s;
    }
    if (Status s = ReadSize(*queries, source, "workers", 1, 256, &config->query_workers); !s.ok())
      return s;
    QueryLimits& l = config->query_limits;
    for (auto [key, out] : {std::pair{"max_keys", &l.max_keys}, {"max_groups", &l.max_groups},
                            {"max_cells", &l.max_cells}, {"max_answer_bytes", &l.max_answer_bytes}}) {
      size_t value = *out;
      if (Status s = ReadSize(*queries, source, key, 1, INT64_MAX, &value); !s.ok()) return s;
      *out = value;
    }
    if (const toml::node* deadline = queries->get("deadline")) {
      Result<uint64_t> ns = deadline->as_string() ? ParseDuration(deadline->as_string()->get())
                                                  : Status::InvalidArgument("expected a string");
      if (!ns.ok() || *ns < 1'000'000) {
        return KeyError(source, "queries.deadline",
                        "expected a duration of at least 1ms such as \"30s\"");
      }
      l.deadline_ms = *ns / 1'000'000;
    }
  }
  return Status::Ok();
}

Status LoadAggregatorConfig(const std::string& path, AggregatorConfig* config) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot open the config file");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseAggregatorConfig(text.str(), path, config);
}

Status ValidateAggregatorConfig(const AggregatorConfig& config) {
  if (config.data_dir.empty()) {
    return Status::InvalidArgument(
        "no data directory: give --data DIR or `data = \"DIR\"` in the config");
  }
  if (!config.host.empty()) {
    if (Status s = ValidateField("host", config.host); !s.ok()) {
      return Status::InvalidArgument("host (--host) \"" + config.host + "\": " + s.message());
    }
  }
  if (config.metrics != "off") {
    Result<HostPort> where = ParseHostPort(config.metrics);
    if (!where.ok()) {
      return Status::InvalidArgument("metrics (--metrics): " + where.status().message() +
                                     " (or \"off\")");
    }
  }
  if (config.ingest_endpoint == config.query_endpoint) {
    return Status::InvalidArgument("ingest and query endpoints are the same: " +
                                   config.ingest_endpoint);
  }
  return Status::Ok();
}

}  // namespace trailmap::aggregator
