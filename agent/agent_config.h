// AgentConfig: what trailmap-agent runs with, from a TOML file (configs/agent.toml documents
// every key) and flags that override it.
//
// Loading and validation are separate: main() loads the file, applies the flags, then calls
// ValidateAgentConfig once, so every message names the key (and its flag) and what to fix:
//   "flush_ms (--flush-ms) must be from 10 to 60000, got 5"
// Value types and pure functions, apart from DefaultHostName (gethostname).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/exec_source.h"
#include "agent/folded_source.h"
#include "agent/perf_source.h"
#include "agent/prom_write_config.h"
#include "agent/statsd.h"
#include "core/cluster.h"
#include "core/endpoint.h"  // HostPort, ParseHostPort
#include "core/series.h"
#include "core/status.h"

namespace trailmap {

// [proc]: the agent's own /proc source (agent/proc_source.h).
struct ProcConfig {
  bool enabled = true;                         // --no-proc turns it off
  int64_t interval_ms = 1000;                  // between passes, 1000..3600000
  std::string root = "/proc";                  // --proc-root (a fixture tree in tests)
  std::string cgroup_root = "/sys/fs/cgroup";  // where the memory limit is looked for
  bool per_process = true;                     // per process name metrics (reads /proc/PID/*)
  int64_t max_process_names = 200;             // beyond: summed into execname=(other)
};

// [spool]: the on-disk spool of unacknowledged batches (ingest/spool.h).
struct SpoolConfig {
  std::string dir;                       // --spool; "" = DefaultSpoolDir(host), "off" = memory
  int64_t max_bytes = int64_t{1} << 30;  // --spool-bytes, 1 MiB..1 TiB; oldest dropped beyond
  std::string fsync = "always";          // --spool-fsync: always | interval | never
  int64_t fsync_ms = 1000;               // --spool-fsync-ms (interval), 10..60000
};

struct AgentConfig {
  std::string host;                                        // "" = this machine's hostname
  FieldSet labels;                                         // host labels, e.g. role=web
  std::vector<std::string> aggregators{"127.0.0.1:7400"};  // ingest HOST:PORT of every shard
  std::string cluster;  // --cluster: a cluster file (core/cluster.h); "" = aggregators instead
  std::string statsd = "127.0.0.1:8125";  // UDP HOST:PORT, or "off"
  // [[statsd_unit]] match = "GLOB", unit = "ms|s|us|ns|B|none": the unit of |h and |d lines whose
  // metric name matches (the first matching table wins; none matches: ms). agent/statsd.h.
  std::vector<StatsdUnitRule> statsd_units;
  // --metrics: the self-metrics in the Prometheus text format at http://HOST:PORT/metrics
  // (core/metrics_http.h), or "off".
  std::string metrics = "off";
  // --otlp: OTLP/HTTP metrics at http://HOST:PORT/v1/metrics (agent/otlp_http.h), or "off".
  // "" = the default, 127.0.0.1:4318, where OpenTelemetry SDKs export unless told otherwise; when
  // that port is taken (a collector runs there) the agent logs it and runs on without OTLP, while
  // an address given explicitly that cannot be bound is an error.
  std::string otlp;
  // [otlp] resource_fields = ["service.name", "k8s.pod.name", ...] (--otlp-resource-fields
  // a,b,...): the resource attributes that become fields of every point (agent/otlp_convert.h),
  // the whole list; unset = the converter's (service.name, service.namespace,
  // deployment.environment, host.name). The [otlp] table's `listen` key is the same as `otlp`.
  std::optional<std::vector<std::string>> otlp_resource_fields;
  // [prometheus] (--prom-write HOST:PORT): the remote-write receiver (agent/prom_write_config.h).
  PromWriteConfig prom_write;
  // CURVE (core/curve_keys.h): its own .key (--key, $TRAILMAP_KEY) and the aggregators' .pub
  // (--server-key, $TRAILMAP_SERVER_KEY); or plaintext, explicitly (--insecure-plaintext).
  std::string key;
  std::string server_key;
  bool insecure_plaintext = false;
  int64_t flush_ms = 250;         // how often completed seconds become a batch
  int64_t max_series = 1000;      // distinct field sets per metric per second
  // statsd metric names new to the agent admitted per minute (0 = no bound), and distinct names
  // taken at most (agent/statsd_server.h "New metric names").
  int64_t statsd_new_metrics_per_minute = 1000;
  int64_t statsd_max_metrics = 100'000;
  int64_t window = 64;            // batches in flight without an ack
  int64_t ack_timeout_ms = 2000;  // then reconnect and resend
  bool self_metrics = true;       // publish trailmap.agent.* (agent/self_metrics.h); a flag only
  ProcConfig proc;
  SpoolConfig spool;
  std::vector<ExecSpec> exec;  // [[exec]] sections and --exec flags, each one command
  // Stack sources. [perf]: CPU stacks of the whole host from Linux perf; keys
  // enabled, frequency, window_ms, callgraph, pid, offsets, perf_path, metric
  // (agent/perf_source.h).
  bool perf_enabled = false;
  PerfSourceOptions perf;
  // [folded]: folded-stack lines from `path` and/or a unix `socket`; keys path, follow, socket,
  // metric, fields (agent/folded_source.h). Off while both path and socket are "".
  FoldedSourceOptions folded;
};

// Adds "k=v" to `labels`, replacing an earlier value of k (so a flag overrides the file).
Status AddLabel(std::string_view text, FieldSet* labels);

// Reads TOML text into `config`, leaving keys it does not mention as they are. Unknown keys and
// wrong types are errors naming the key; `source` names the file in messages.
Status ParseAgentConfig(std::string_view toml, std::string_view source, AgentConfig* config);
// Same, from a file.
Status LoadAgentConfigFile(const std::string& path, AgentConfig* config);

// --exec "metric=M,kind=latency,unit=ns,field.K=V,command=CMD ARGS": the keys metric, kind
// (latency|size|scalar, default latency), unit (default ns for latency, B for size; required for
// scalar), field.K=V (repeatable), restart_min_ms, restart_max_ms, then command=, which takes
// the REST of the text, commas included, and runs it with /bin/sh -c.
Result<ExecSpec> ParseExecFlag(std::string_view text);

// Checks every value after the file and flags are applied (host must be set by then).
Status ValidateAgentConfig(const AgentConfig& config);

// The cluster the agent ships to: the file `cluster` names (read now), else the short form of
// `aggregators` (ClusterFromList: one zone, R=1). InvalidArgument naming the key and flag.
Result<Cluster> AgentCluster(const AgentConfig& config);

// The aggregator this host ships to: "tcp://" + the aggregators entry that owns it by rendezvous
// hashing (core/cluster.h, RendezvousIndex over the normalized endpoints).
std::string IngestEndpoint(const AgentConfig& config);

// Where the spool lives when --spool is not given: /var/lib/trailmap-agent/spool when that can be
// created and written (a system service), else $XDG_STATE_HOME/trailmap-agent/spool, else
// $HOME/.local/state/trailmap-agent/spool (an agent run by a user), each ending in "/" + host so
// that agents of different --host on one machine never share one.
std::string DefaultSpoolDir(const std::string& host);

// gethostname(), or "localhost" if it fails.
std::string DefaultHostName();

}  // namespace trailmap
