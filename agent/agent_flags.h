// trailmap-agent's command line: every flag, read over the config file (configs/agent.toml) the
// way the stack sources' (stack_flags.h) and the spool's (spool_flags.h) flags are, which it adds
// too. A flag given wins over the file's key; a flag not given leaves the key as the file set it.
//
//   --config FILE       the TOML config, read first
//   --host, --label     this host's name and labels
//   --aggregators LIST  the short form of a cluster (one zone, R=1); not with --cluster
//   --cluster FILE      the cluster file (net/cluster_file.h)
//   --key, --server-key, --insecure-plaintext   net/client_keys.h
//   --statsd, --otlp, --otlp-resource-fields, --metrics, --exec, --no-proc, --proc-root,
//   --no-self-metrics, --flush-ms, --max-series, --statsd-new-metrics, --statsd-max-metrics,
//   --window, --ack-timeout-ms   the sources and the shipper (agent/agent_config.h)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/agent_config.h"
#include "agent/spool_flags.h"
#include "agent/stack_flags.h"
#include "core/status.h"
#include "net/client_keys.h"

namespace CLI {
class App;
}

namespace trailmap {

struct AgentFlags {
  std::string config_path, host, aggregators, cluster, statsd, metrics, otlp, proc_root, prom_write;
  std::vector<std::string> labels, execs, otlp_resource_fields;
  bool no_proc = false, no_self_metrics = false;
  int64_t flush_ms = 0, max_series = 0, window = 0, ack_timeout_ms = 0;
  int64_t statsd_new_metrics = 0, statsd_max_metrics = 0;
  ClientKeyFlags keys;
  StackSourceFlags stacks;
  SpoolFlags spool;
};

// The program's description and every flag, into *flags.
void AddAgentFlags(CLI::App* app, AgentFlags* flags);

// After parsing: the config file the flags name, then each flag given over it, the keys the
// environment gives where neither did, the host name where none is given; then
// ValidateAgentConfig. InvalidArgument naming the flag or the file's key.
Status ApplyAgentFlags(const CLI::App& app, const AgentFlags& flags, AgentConfig* config);

}  // namespace trailmap
