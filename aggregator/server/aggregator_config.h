// AggregatorConfig: what trailmap-aggregator runs with, read from a TOML file (configs/
// aggregator.toml shows every key) and overridden by command-line flags in main().
//
//   data   = "/var/lib/trailmap"        # required (here or --data)
//   ingest = "127.0.0.1:7400"           # HOST:PORT or tcp://HOST:PORT
//   query  = "127.0.0.1:7401"
//   name   = "agg-1"                    # default "<hostname>:<ingest port>"
//   host   = "db-7"                     # the host of its self-metrics; default the hostname
//   self_metrics = true                 # publish trailmap.aggregator.* (aggregator/server/self_metrics.h)
//   metrics = "127.0.0.1:9126"          # serve them for Prometheus at /metrics; default "off"
//   key     = "/etc/trailmap/agg.key"   # its CURVE key (required unless insecure_plaintext)
//   clients = "/etc/trailmap/clients"   # the client keys it accepts (core/curve_keys.h)
//   insecure_plaintext = false          # true: no encryption, no authentication (a lab)
//   aggregate_by = ["role", "op"]       # fields pre-aggregated besides the fleet (aggregates.h)
//   aggregates = true                   # false: no pre-aggregates written or read
//                                       # (--no-aggregates)
//   backfill = true                     # false: aggregates added to a store that holds data stay
//                                       # unread instead of backfilled (--no-backfill)
//   [store]  sync, max_successive_merges, block_cache_mb, write_buffer_mb, min_free_mb,
//            warm_cache_seconds (see StoreOptions)
//   [retention] hist = "2d", hist_10s = "14d", hist_60s = "90d", hist_600s = "730d",
//               scalar = "14d", stacks = "2d", stacks_60s = "30d", agents = "30d"
//               (a duration, or "forever")
//   [limits] max_batch_bytes; per agent id (agent_limits.h, 0 = unlimited): batches_per_second,
//            bytes_per_second, values_per_second, definitions_per_second,
//            new_series_per_minute, burst_seconds, max_agents; the ingest path's memory:
//            max_pending_bytes (ingest_server.h); connections admitted at once on each socket:
//            max_connections (zap_handler.h; 10,000, 0 = no cap); metric names each client key
//            may add to the catalog a day: new_metrics_per_key (metric_quota.h; 10,000, 0 = none);
//            a connection's ZMTP and CURVE handshake: handshake_timeout = "10s" (router_server.h)
//   [queries] workers = 4, deadline = "30s", max_keys, max_groups, max_cells, max_answer_bytes
//             (the most one query may cost, aggregator/scan/query_budget.h; a client may ask for less)
//
// An unknown key is an error (a typo should not silently fall back to a default). Errors name the
// file and the key. Value types; no shared state.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "aggregator/server/agent_limits.h"
#include "aggregator/scan/query_budget.h"
#include "aggregator/store/store.h"
#include "core/batch.h"
#include "core/status.h"

namespace trailmap::aggregator {

// The retention trailmap-aggregator runs with unless configured, in kHistogramResolutions order:
// 2 days of seconds, 14 days of 10 s buckets, 90 days of minutes, 2 years of 10-minute buckets
// (a year's heat map reads about as many keys as an hour's at 10 s).
inline constexpr std::array<int64_t, kHistogramResolutionCount> kDefaultRetention = {
    2 * 86400, 14 * 86400, 90 * 86400, 730 * 86400};

// The other families: 14 days of per-second scalars (they have no rollups, so this is how far
// back a scalar chart reaches), 2 days of per-second stacks (the biggest family) and 30 days of
// per-minute stacks.
inline constexpr int64_t kDefaultScalarRetention = 14 * 86400;
inline constexpr int64_t kDefaultStacksRetention = 2 * 86400;
inline constexpr int64_t kDefaultStacks60sRetention = 30 * 86400;
// An agent silent this long loses its watermark ([retention] agents): far longer than an agent's
// spool holds batches, so a returning agent resends without duplicates (store.h).
inline constexpr int64_t kDefaultAgentIdle = 30 * 86400;

struct AggregatorConfig {
  std::string data_dir;                                  // RocksDB directory; required
  std::string ingest_endpoint = "tcp://127.0.0.1:7400";  // always a tcp:// endpoint once parsed
  std::string query_endpoint = "tcp://127.0.0.1:7401";
  std::string name;          // "" until main() fills the default
  std::string host;          // the self-metrics' host; "" until main() fills the hostname
  bool self_metrics = true;  // --no-self-metrics: false
  // --metrics: the self-metrics in the Prometheus text format at http://HOST:PORT/metrics
  // (core/metrics_http.h, aggregator/server/self_metrics.h AggregatorPrometheusText), or "off". Off by
  // default: aggregators side by side on one machine would fight over one default port, and the
  // same numbers are in the store as trailmap.aggregator.* anyway.
  std::string metrics = "off";
  // CURVE: its key pair file (--key, $TRAILMAP_KEY) and the clients list (--clients,
  // $TRAILMAP_CLIENTS); both required unless insecure_plaintext (--insecure-plaintext).
  std::string key;
  std::string clients;
  bool insecure_plaintext = false;
  StoreOptions store = [] {
    StoreOptions o;
    o.retention_seconds = kDefaultRetention;
    o.scalar_retention_seconds = kDefaultScalarRetention;
    o.stacks_retention_seconds = kDefaultStacksRetention;
    o.stacks_60s_retention_seconds = kDefaultStacks60sRetention;
    o.agent_idle_seconds = kDefaultAgentIdle;
    return o;
  }();
  BatchLimits limits;
  AgentLimits agent_limits;  // [limits]: the per-agent rates
  // [limits]: received, unapplied ingest bytes held at most (then agents are told "busy";
  // ingest_server.h).
  size_t max_pending_bytes = size_t{256} << 20;
  // [limits]: connections admitted at once on each of the ingest and query sockets (CURVE only;
  // zap_handler.h); 0 = no cap.
  size_t max_connections = 10'000;
  // [limits]: a connection that has not completed its handshake within this is closed.
  std::chrono::milliseconds handshake_timeout{10'000};
  // [limits] new_metrics_per_key: metric names new to the catalog each key may create a day
  // (metric_quota.h); 0 = no quota.
  size_t new_metrics_per_key = 10'000;
  size_t query_workers = kDefaultQueryWorkers;     // [queries] workers, --query-workers
  QueryLimits query_limits = kDefaultQueryLimits;  // [queries], --query-deadline
};

// Reads TOML text over `config` (so flags and files layer). `source` names the text in errors.
Status ParseAggregatorConfig(std::string_view toml, std::string_view source,
                             AggregatorConfig* config);
Status LoadAggregatorConfig(const std::string& path, AggregatorConfig* config);

// "role,zone,op" (--aggregate-by, or aggregate_by in the file) into field keys: valid keys, not
// "host", duplicates dropped. InvalidArgument names the bad key.
Status ParseAggregateBy(std::string_view list, std::vector<std::string>* fields);

// The longest retention short of forever: 100 years. Past it a duration in nanoseconds no longer
// holds whole seconds exactly in a double (ParseDuration), so "12109090914s" read back as one
// second less (found by fuzz/aggregator_config_fuzz); under it every retention formats back to
// itself.
inline constexpr int64_t kMaxRetentionSeconds = int64_t{36500} * 86400;

// A retention: a duration from 1 s to kMaxRetentionSeconds ("36h", "14d") in seconds, or
// "forever" = 0.
Result<int64_t> ParseRetention(std::string_view text);
// The other way: 0 → "forever", 172800 → "2d", 5400 → "90m", 90 → "90s".
std::string FormatRetention(int64_t seconds);

// "HOST:PORT" or "tcp://HOST:PORT" (HOST may be "*", PORT may be "*") -> "tcp://HOST:PORT".
Result<std::string> NormalizeEndpoint(std::string_view text);
// The default aggregator name: "<hostname>:<port of the ingest endpoint>".
std::string DefaultName(std::string_view hostname, std::string_view ingest_endpoint);
// Checks what only the whole config can tell: a data directory is set.
Status ValidateAggregatorConfig(const AggregatorConfig& config);

}  // namespace trailmap::aggregator
