#include "agent/agent_flags.h"

#include <CLI/CLI.hpp>
#include <utility>

#include "net/curve_keys.h"

namespace trailmap {

void AddAgentFlags(CLI::App* app, AgentFlags* flags) {
  app->description(
      "trailmap-agent: per-second latency histograms, scalars and CPU stack counts from statsd, "
      "this host's /proc, any command's output, perf and folded-stack lines, shipped to "
      "trailmap.\n"
      "Examples:\n"
      "  trailmap-agent --host web-1 --label role=web --aggregators 10.0.0.5:7400\n"
      "  trailmap-agent --host web-1 --cluster /etc/trailmap/cluster.toml   # R owners each\n"
      "  trailmap-agent --no-proc --exec 'metric=syscall.latency,command=bpftrace -e ...'\n"
      "  trailmap-agent --exec 'metric=queue.depth,kind=scalar,unit=items,command=while sleep 1; "
      "do wc -l </var/q; done'");
  app->add_option("--config", flags->config_path, "TOML config (see configs/agent.toml)");
  app->add_option("--host", flags->host, "this host's name (default: the hostname)");
  app->add_option("--label", flags->labels, "host label KEY=VALUE (repeatable)");
  app->add_option("--aggregators", flags->aggregators,
                  "ingest HOST:PORT[,HOST:PORT...] (default 127.0.0.1:7400): the short form of a "
                  "cluster of one zone and R=1; not with --cluster");
  app->add_option("--cluster", flags->cluster,
                  "cluster file (TOML, net/cluster_file.h): every aggregator with its zone and "
                  "endpoints, the replication R and the epochs; every batch goes to each of the "
                  "host's R owners, each with its own spool segment DIR/NAME under --spool. "
                  "Example: replication = 2, then one [[aggregator]] table per aggregator with "
                  "name = \"agg-1\", zone = \"a\", ingest = \"10.0.0.5:7400\", "
                  "query = \"10.0.0.5:7401\"");
  AddClientKeyFlags(app, &flags->keys, "this agent");
  app->add_option("--statsd", flags->statsd,
                  "statsd UDP HOST:PORT, or off (default 127.0.0.1:8125)");
  app->add_option(
      "--otlp", flags->otlp,
      "OpenTelemetry metrics over OTLP/HTTP at http://HOST:PORT/v1/metrics (protobuf or "
      "JSON, gzip), or off (default 127.0.0.1:4318; if that port is taken the agent "
      "runs on without it)");
  app->add_option("--otlp-resource-fields", flags->otlp_resource_fields,
                  "OTLP resource attributes that become fields, the whole list, e.g. "
                  "service.name,k8s.pod.name (default service.name, service.namespace, "
                  "deployment.environment, host.name)")
      ->delimiter(',');
  app->add_option("--prom-write", flags->prom_write,
                  "Prometheus remote write at http://HOST:PORT/api/v1/write, or off (the default; "
                  "[prometheus] in the config file, agent/prom_write_config.h)");
  app->add_option("--metrics", flags->metrics,
                  "serve the agent's self-metrics for Prometheus at http://HOST:PORT/metrics, or "
                  "off (default off)");
  app->add_option("--flush-ms", flags->flush_ms, "ship completed seconds this often (default 250)");
  app->add_option("--max-series", flags->max_series,
                  "field sets per metric per second (default 1000)");
  app->add_option(
      "--statsd-new-metrics", flags->statsd_new_metrics,
      "statsd metric names new to this agent taken per minute; lines of further new "
      "names are dropped and counted (rejected_new_metric), 0 = no bound (default 1000)");
  app->add_option("--statsd-max-metrics", flags->statsd_max_metrics,
                  "distinct statsd metric names taken at most; lines of further names are dropped "
                  "and counted (default 100000)");
  app->add_option("--window", flags->window, "batches in flight without an ack (default 64)");
  app->add_option("--ack-timeout-ms", flags->ack_timeout_ms,
                  "then reconnect and resend (default 2000)");
  app->add_flag("--no-proc", flags->no_proc,
                "do not read this host's /proc every second (cpu.usage, mem.rss, net.*, disk.*, "
                "fs.*; see agent/proc_source.h for the table)");
  app->add_option("--proc-root", flags->proc_root,
                  "read /proc from this directory (default /proc)");
  app->add_flag("--no-self-metrics", flags->no_self_metrics,
                "do not publish the agent's own counters every second (trailmap.agent.*: statsd "
                "lines, batches sent and acked, RSS, fds, CPU; see agent/self_metrics.h)");
  app->add_option("--exec", flags->execs,
                  "run a command and read '[time] value [key=value ...]' lines from its stdout: "
                  "'metric=M[,kind=latency|size|scalar][,unit=U][,field.K=V],command=CMD' "
                  "(command last, run by /bin/sh -c, restarted with backoff; repeatable)")
      ->allow_extra_args(false);
  AddStackSourceFlags(app, &flags->stacks);
  AddSpoolFlags(app, &flags->spool);
}

Status ApplyAgentFlags(const CLI::App& app, const AgentFlags& flags, AgentConfig* config) {
  if (!flags.config_path.empty()) {
    if (Status s = LoadAgentConfigFile(flags.config_path, config); !s.ok()) return s;
  }
  if (app.count("--host")) config->host = flags.host;
  for (const std::string& label : flags.labels) {
    if (Status s = AddLabel(label, &config->labels); !s.ok()) {
      return Status::InvalidArgument("--label: " + s.message());
    }
  }
  if (app.count("--aggregators") && app.count("--cluster")) {
    return Status::InvalidArgument(
        "give --cluster FILE or --aggregators LIST, not both (--aggregators is the short form "
        "of a one-zone cluster with R=1)");
  }
  if (app.count("--cluster")) config->cluster = flags.cluster;
  if (app.count("--aggregators")) {
    config->cluster.clear();  // the flag overrides a cluster file the config names
    config->aggregators.clear();
    size_t start = 0;
    while (start <= flags.aggregators.size()) {
      size_t end = flags.aggregators.find(',', start);
      if (end == std::string::npos) end = flags.aggregators.size();
      if (end > start) config->aggregators.push_back(flags.aggregators.substr(start, end - start));
      start = end + 1;
    }
  }
  if (app.count("--key")) config->key = flags.keys.key;
  if (app.count("--server-key")) config->server_key = flags.keys.server_key;
  if (flags.keys.insecure_plaintext) config->insecure_plaintext = true;
  ClientKeyPathsFromEnvironment(config->insecure_plaintext, &config->key, &config->server_key);
  if (app.count("--statsd")) config->statsd = flags.statsd;
  if (app.count("--metrics")) config->metrics = flags.metrics;
  if (app.count("--prom-write")) config->prom_write.listen = flags.prom_write;
  if (app.count("--otlp")) config->otlp = flags.otlp;
  if (app.count("--otlp-resource-fields"))
    config->otlp_resource_fields = flags.otlp_resource_fields;
  if (app.count("--flush-ms")) config->flush_ms = flags.flush_ms;
  if (app.count("--max-series")) config->max_series = flags.max_series;
  if (app.count("--statsd-new-metrics"))
    config->statsd_new_metrics_per_minute = flags.statsd_new_metrics;
  if (app.count("--statsd-max-metrics")) config->statsd_max_metrics = flags.statsd_max_metrics;
  if (app.count("--window")) config->window = flags.window;
  if (app.count("--ack-timeout-ms")) config->ack_timeout_ms = flags.ack_timeout_ms;
  if (flags.no_proc) config->proc.enabled = false;
  if (app.count("--proc-root")) config->proc.root = flags.proc_root;
  if (flags.no_self_metrics) config->self_metrics = false;
  for (const std::string& text : flags.execs) {
    Result<ExecSpec> spec = ParseExecFlag(text);
    if (!spec.ok()) return spec.status();
    config->exec.push_back(std::move(*spec));
  }
  if (Status s = ApplyStackSourceFlags(app, flags.stacks, config); !s.ok()) return s;
  ApplySpoolFlags(app, flags.spool, config);
  if (config->host.empty()) config->host = DefaultHostName();
  return ValidateAgentConfig(*config);
}

}  // namespace trailmap
