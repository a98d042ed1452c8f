// trailmap-agent: turns this host's statsd timings, its own /proc metrics, the output of any
// configured commands and its CPU stacks (perf, folded-stack lines) into per-second histograms,
// scalars and stack counts, and ships them to every aggregator that owns the host (core/cluster.h:
// its R owners; ingest/replicated_shipper.h).
//
// main() builds everything and hands it down: the bucketizer, the shippers (one per owner, each
// its own thread and spool segment), the statsd server, the proc source, each exec source and the
// stack sources (a thread each). This thread waits for SIGINT/SIGTERM in sigtimedwait (SIGHUP:
// read the cluster file again, to route by an epoch an operator added; core/cluster.h
// ReloadCluster), and every flush_ms turns the seconds before the current one into one batch;
// stack samples that arrive late (perf delivers a window at a time) go out with the next batch as
// further counts of their seconds, which the aggregator adds up.
//
// Exit codes: 0 after a signal, 2 on a bad flag or config, 1 when the statsd port cannot be bound.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_config.h"
#include "agent/exec_source.h"
#include "agent/folded_source.h"
#include "agent/otlp_http.h"
#include "agent/perf_source.h"
#include "agent/proc_source.h"
#include "agent/prom_remote_write.h"
#include "agent/self_metrics.h"
#include "agent/spool_flags.h"
#include "agent/stack_flags.h"
#include "agent/statsd_server.h"
#include "core/clock.h"
#include "core/curve_keys.h"
#include "core/log.h"
#include "core/metrics_http.h"
#include "core/open_files.h"
#include "ingest/bucketizer.h"
#include "ingest/replicated_shipper.h"

namespace trailmap {
namespace {

std::string LabelsText(const FieldSet& labels) {
  Result<std::string> canonical = CanonicalFields(labels);
  return canonical.ok() && !canonical->empty() ? *canonical : "(none)";
}

// One line with every counter; logged when it differs from the last one logged.
std::string CountersLine(const std::optional<StatsdCounters>& statsd, const Bucketizer& bucketizer,
                         const ReplicatedShipper& shipper, const ProcSource* proc,
                         const std::vector<std::unique_ptr<ExecSource>>& execs,
                         const PerfSource* perf, const FoldedSource* folded,
                         const OtlpConverter* otlp) {
  std::string line = "counters:";
  if (statsd) {
    const StatsdCounters& s = *statsd;
    line += " statsd packets=" + std::to_string(s.packets) +
            " accepted=" + std::to_string(s.lines_accepted) +
            " rejected=" + std::to_string(s.lines_rejected);
    for (size_t i = 0; i < kStatsdRejectClasses; ++i) {
      if (s.rejected_by_reason[i] == 0) continue;
      line += std::string(" rejected_") + StatsdRejectName(static_cast<StatsdReject>(i)) + "=" +
              std::to_string(s.rejected_by_reason[i]);
    }
    line += " unsupported=" + std::to_string(s.lines_unsupported) +
            " values=" + std::to_string(s.values) +
            " tags_renamed=" + std::to_string(s.tags_renamed);
    if (s.scalars.set_members_dropped + s.scalars.gauge_deltas_dropped + s.scalars.stale != 0) {
      line += " set_members_dropped=" + std::to_string(s.scalars.set_members_dropped) +
              " gauge_deltas_dropped=" + std::to_string(s.scalars.gauge_deltas_dropped) +
              " stale=" + std::to_string(s.scalars.stale);
    }
    line += ";";
  }
  if (proc != nullptr) {
    const ProcCounters p = proc->counters();
    line += " proc passes=" + std::to_string(p.passes) +
            " processes=" + std::to_string(p.processes) +
            " last_pass_us=" + std::to_string(p.last_pass_us) +
            " unreadable=" + std::to_string(p.unreadable) +
            " parse_errors=" + std::to_string(p.parse_errors) +
            " resets=" + std::to_string(p.resets) + ";";
  }
  for (const auto& e : execs) {
    const ExecCounters x = e->counters();
    line += " exec " + e->spec().metric + " starts=" + std::to_string(x.starts) +
            " accepted=" + std::to_string(x.lines_accepted) +
            " rejected=" + std::to_string(x.lines_rejected);
    for (size_t i = 0; i < kExecRejectClasses; ++i) {
      if (x.rejected_by_reason[i] == 0) continue;
      line += std::string(" rejected_") + ExecRejectName(static_cast<ExecReject>(i)) + "=" +
              std::to_string(x.rejected_by_reason[i]);
    }
    line += " stderr=" + std::to_string(x.stderr_lines) + ";";
  }
  if (perf != nullptr) {
    const PerfSourceStats p = perf->stats();
    line += " perf windows=" + std::to_string(p.windows) + " samples=" + std::to_string(p.samples) +
            " offsets=" + std::to_string(p.offsets) + " failures=" + std::to_string(p.failures) +
            " malformed=" + std::to_string(p.malformed_lines) + ";";
  }
  if (folded != nullptr) {
    const FoldedSourceStats f = folded->stats();
    line += " folded lines=" + std::to_string(f.lines) +
            " malformed=" + std::to_string(f.malformed) +
            " over_count=" + std::to_string(f.over_count) +
            " clients=" + std::to_string(f.clients) + ";";
  }
  if (otlp != nullptr) {
    const OtlpCounters o = otlp->counters();
    line += " otlp requests=" + std::to_string(o.requests) +
            " accepted=" + std::to_string(o.points_accepted) +
            " rejected=" + std::to_string(o.points_rejected);
    for (size_t i = 0; i < kOtlpRejectClasses; ++i) {
      if (o.rejected_by_reason[i] == 0) continue;
      line += std::string(" rejected_") + OtlpRejectName(static_cast<OtlpReject>(i)) + "=" +
              std::to_string(o.rejected_by_reason[i]);
    }
    line += " baselines=" + std::to_string(o.baselines) + " resets=" + std::to_string(o.resets) +
            " evicted=" + std::to_string(o.evicted_series) + ";";
  }
  const BucketizerCounters b = bucketizer.counters();
  line += " events=" + std::to_string(b.events) + " overflow=" + std::to_string(b.overflow_events) +
          " late=" + std::to_string(b.late_events) +
          " refused=" + std::to_string(b.refused_events) + " scalars=" + std::to_string(b.scalars) +
          " overflow_scalars=" + std::to_string(b.overflow_scalars) + ";";
  const std::vector<OwnerCounters> owners = shipper.counters();
  ShipperCounters c;
  SpoolCounters sp;
  for (const OwnerCounters& o : owners) {
    c += o.shipper;
    sp += o.spool;
  }
  line +=
      " batches sent=" + std::to_string(c.sent) + " acked=" + std::to_string(c.acked) +
      " duplicates=" + std::to_string(c.duplicates) + " rejected=" + std::to_string(c.rejected) +
      " items_refused=" + std::to_string(c.items_refused) + " resent=" + std::to_string(c.resent) +
      " reconnects=" + std::to_string(c.reconnects) + " dropped=" + std::to_string(c.dropped) +
      " out_of_order=" + std::to_string(c.out_of_order) +
      " incarnations=" + std::to_string(c.incarnations) +
      " retry_later=" + std::to_string(c.retry_later) +
      " unauthorized=" + std::to_string(c.unauthorized) +
      " handshake_failures=" + std::to_string(c.handshake_failures);
  line += "; spool bytes=" + std::to_string(sp.bytes) + " batches=" + std::to_string(sp.batches) +
          " replayed=" + std::to_string(sp.replayed) +
          " dropped_batches=" + std::to_string(sp.dropped_batches) +
          " dropped_events=" + std::to_string(sp.dropped_events);
  // Each owner apart: one that is down shows as sent but not acked, its batches spooled.
  for (const OwnerCounters& o : owners) {
    line += "; owner " + o.member + " sent=" + std::to_string(o.shipper.sent) +
            " acked=" + std::to_string(o.shipper.acked) +
            " resent=" + std::to_string(o.shipper.resent) +
            " spooled=" + std::to_string(o.spool.batches) +
            " dropped=" + std::to_string(o.shipper.dropped);
  }
  if (b.stack_samples > 0) {  // stack sources: samples, cuts, and definitions (re)sent
    line += "; stacks samples=" + std::to_string(b.stack_samples) +
            " truncated_stacks=" + std::to_string(b.truncated_stacks) +
            " truncated_frames=" + std::to_string(b.truncated_frames) +
            " stack_defs_sent=" + std::to_string(c.stack_defs_sent) +
            " need_dictionary=" + std::to_string(c.need_dictionary);
  }
  return line;
}

std::optional<StatsdCounters> StatsdCountersOf(const StatsdServer* statsd) {
  return statsd ? std::optional<StatsdCounters>(statsd->counters()) : std::nullopt;
}

// Turns the held seconds before `second` into batches (60 seconds at most each) and queues them.
void ShipSecondsBefore(int64_t second, const AgentConfig& config, Bucketizer* bucketizer,
                       ReplicatedShipper* shipper) {
  while (true) {
    CompletedSeconds done = bucketizer->TakeSecondsBefore(second);
    if (done.empty()) return;
    for (Batch& batch : MakeBatches(std::move(done), config.host, config.labels)) {
      shipper->Send(std::move(batch));  // logs a drop
    }
  }
}

// Parses flags over the config file; returns the exit code to use, or -1 to run.
int Configure(int argc, char** argv, AgentConfig* config) {
  CLI::App app{
      "trailmap-agent: per-second latency histograms, scalars and CPU stack counts from statsd, "
      "this host's /proc, any command's output, perf and folded-stack lines, shipped to "
      "trailmap.\n"
      "Examples:\n"
      "  trailmap-agent --host web-1 --label role=web --aggregators 10.0.0.5:7400\n"
      "  trailmap-agent --host web-1 --cluster /etc/trailmap/cluster.toml   # R owners each\n"
      "  trailmap-agent --no-proc --exec 'metric=syscall.latency,command=bpftrace -e ...'\n"
      "  trailmap-agent --exec 'metric=queue.depth,kind=scalar,unit=items,command=while sleep 1; "
      "do wc -l </var/q; done'"};
  std::string config_path, host, aggregators, cluster, statsd, metrics, otlp, proc_root, prom_write;
  std::vector<std::string> labels, execs, otlp_resource_fields;
  bool no_proc = false, no_self_metrics = false;
  int64_t flush_ms = 0, max_series = 0, window = 0, ack_timeout_ms = 0;
  int64_t statsd_new_metrics = 0, statsd_max_metrics = 0;
  app.add_option("--config", config_path, "TOML config (see configs/agent.toml)");
  app.add_option("--host", host, "this host's name (default: the hostname)");
  app.add_option("--label", labels, "host label KEY=VALUE (repeatable)");
  app.add_option("--aggregators", aggregators,
                 "ingest HOST:PORT[,HOST:PORT...] (default 127.0.0.1:7400): the short form of a "
                 "cluster of one zone and R=1; not with --cluster");
  app.add_option("--cluster", cluster,
                 "cluster file (TOML, core/cluster.h): every aggregator with its zone and "
                 "endpoints, the replication R and the epochs; every batch goes to each of the "
                 "host's R owners, each with its own spool segment DIR/NAME under --spool. "
                 "Example: replication = 2, then one [[aggregator]] table per aggregator with "
                 "name = \"agg-1\", zone = \"a\", ingest = \"10.0.0.5:7400\", "
                 "query = \"10.0.0.5:7401\"");
  std::string key, server_key;
  bool insecure_plaintext = false;
  app.add_option("--key", key,
                 "this agent's CURVE key, NAME.key from trailmap keygen "
                 "(default $TRAILMAP_KEY)");
  app.add_option("--server-key", server_key,
                 "the aggregators' public key, their .pub (default $TRAILMAP_SERVER_KEY)");
  app.add_flag("--insecure-plaintext", insecure_plaintext,
               "send without encryption or authentication (lab only; logs a warning)");
  app.add_option("--statsd", statsd, "statsd UDP HOST:PORT, or off (default 127.0.0.1:8125)");
  app.add_option("--otlp", otlp,
                 "OpenTelemetry metrics over OTLP/HTTP at http://HOST:PORT/v1/metrics (protobuf or "
                 "JSON, gzip), or off (default 127.0.0.1:4318; if that port is taken the agent "
                 "runs on without it)");
  app.add_option("--prom-write", prom_write,
                 "Prometheus remote write at http://HOST:PORT/api/v1/write, or off (the default; "
                 "[prometheus] in the config file, agent/prom_write_config.h)");
  app.add_option("--otlp-resource-fields", otlp_resource_fields,
                 "OTLP resource attributes that become fields, the whole list, e.g. "
                 "service.name,k8s.pod.name (default service.name, service.namespace, "
                 "deployment.environment, host.name)")
      ->delimiter(',');
  app.add_option("--metrics", metrics,
                 "serve the agent's self-metrics for Prometheus at http://HOST:PORT/metrics, or "
                 "off (default off)");
  app.add_option("--flush-ms", flush_ms, "ship completed seconds this often (default 250)");
  app.add_option("--max-series", max_series, "field sets per metric per second (default 1000)");
  app.add_option(
      "--statsd-new-metrics", statsd_new_metrics,
      "statsd metric names new to this agent taken per minute; lines of further new "
      "names are dropped and counted (rejected_new_metric), 0 = no bound (default 1000)");
  app.add_option("--statsd-max-metrics", statsd_max_metrics,
                 "distinct statsd metric names taken at most; lines of further names are dropped "
                 "and counted (default 100000)");
  app.add_option("--window", window, "batches in flight without an ack (default 64)");
  app.add_option("--ack-timeout-ms", ack_timeout_ms, "then reconnect and resend (default 2000)");
  app.add_flag("--no-proc", no_proc,
               "do not read this host's /proc every second (cpu.usage, mem.rss, net.*, disk.*, "
               "fs.*; see agent/proc_source.h for the table)");
  app.add_option("--proc-root", proc_root, "read /proc from this directory (default /proc)");
  app.add_flag("--no-self-metrics", no_self_metrics,
               "do not publish the agent's own counters every second (trailmap.agent.*: statsd "
               "lines, batches sent and acked, RSS, fds, CPU; see agent/self_metrics.h)");
  app.add_option("--exec", execs,
                 "run a command and read '[time] value [key=value ...]' lines from its stdout: "
                 "'metric=M[,kind=latency|size|scalar][,unit=U][,field.K=V],command=CMD' "
                 "(command last, run by /bin/sh -c, restarted with backoff; repeatable)")
      ->allow_extra_args(false);
  StackSourceFlags stack_flags;
  AddStackSourceFlags(&app, &stack_flags);
  SpoolFlags spool_flags;
  AddSpoolFlags(&app, &spool_flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (!config_path.empty()) {
    if (Status s = LoadAgentConfigFile(config_path, config); !s.ok()) {
      std::fprintf(stderr, "trailmap-agent: %s\n", s.message().c_str());
      return 2;
    }
  }
  if (app.count("--host")) config->host = host;
  for (const std::string& label : labels) {
    if (Status s = AddLabel(label, &config->labels); !s.ok()) {
      std::fprintf(stderr, "trailmap-agent: --label: %s\n", s.message().c_str());
      return 2;
    }
  }
  if (app.count("--aggregators") && app.count("--cluster")) {
    std::fprintf(stderr,
                 "trailmap-agent: give --cluster FILE or --aggregators LIST, not both "
                 "(--aggregators is the short form of a one-zone cluster with R=1)\n");
    return 2;
  }
  if (app.count("--cluster")) config->cluster = cluster;
  if (app.count("--aggregators")) {
    config->cluster.clear();  // the flag overrides a cluster file the config names
    config->aggregators.clear();
    size_t start = 0;
    while (start <= aggregators.size()) {
      size_t end = aggregators.find(',', start);
      if (end == std::string::npos) end = aggregators.size();
      if (end > start) config->aggregators.push_back(aggregators.substr(start, end - start));
      start = end + 1;
    }
  }
  if (app.count("--key")) config->key = key;
  if (app.count("--server-key")) config->server_key = server_key;
  if (insecure_plaintext) config->insecure_plaintext = true;
  ClientKeyPathsFromEnvironment(config->insecure_plaintext, &config->key, &config->server_key);
  if (app.count("--statsd")) config->statsd = statsd;
  if (app.count("--metrics")) config->metrics = metrics;
  if (app.count("--otlp")) config->otlp = otlp;
  if (app.count("--prom-write")) config->prom_write.listen = prom_write;
  if (app.count("--otlp-resource-fields")) config->otlp_resource_fields = otlp_resource_fields;
  if (app.count("--flush-ms")) config->flush_ms = flush_ms;
  if (app.count("--max-series")) config->max_series = max_series;
  if (app.count("--statsd-new-metrics")) config->statsd_new_metrics_per_minute = statsd_new_metrics;
  if (app.count("--statsd-max-metrics")) config->statsd_max_metrics = statsd_max_metrics;
  if (app.count("--window")) config->window = window;
  if (app.count("--ack-timeout-ms")) config->ack_timeout_ms = ack_timeout_ms;
  if (no_proc) config->proc.enabled = false;
  if (app.count("--proc-root")) config->proc.root = proc_root;
  if (no_self_metrics) config->self_metrics = false;
  for (const std::string& text : execs) {
    Result<ExecSpec> spec = ParseExecFlag(text);
    if (!spec.ok()) {
      std::fprintf(stderr, "trailmap-agent: %s\n", spec.status().message().c_str());
      return 2;
    }
    config->exec.push_back(std::move(*spec));
  }
  if (Status s = ApplyStackSourceFlags(app, stack_flags, config); !s.ok()) {
    std::fprintf(stderr, "trailmap-agent: %s\n", s.message().c_str());
    return 2;
  }
  ApplySpoolFlags(app, spool_flags, config);
  if (config->host.empty()) config->host = DefaultHostName();
  if (Status s = ValidateAgentConfig(*config); !s.ok()) {
    std::fprintf(stderr, "trailmap-agent: %s\n", s.message().c_str());
    return 2;
  }
  return -1;
}

// SIGHUP: the cluster file read again (core/cluster.h ReloadCluster); batches are routed by the
// new one from now on, or, when it is refused, by the old one, and the log says which. A member
// whose server key changed is reconnected with it (`curve`: the shared keys), and only it.
void ReloadAgentCluster(const std::string& path, const CurveClient& curve,
                        ReplicatedShipper* shipper) {
  if (path.empty()) {
    Log("SIGHUP: no cluster file to read again (started with --aggregators)");
    return;
  }
  const std::shared_ptr<const Cluster> current = shipper->cluster();
  std::optional<Cluster> next = ReloadClusterOnSignal(path, *current, UnixSecondsNow());
  if (!next) return;
  const Cluster taken = *next;
  for (size_t m : shipper->SetCluster(std::move(*next))) {
    shipper->Rekey(m, MemberCurve(curve, taken.members[m]));
  }
}

int Run(const AgentConfig& config) {
  // Signals are taken by this thread alone, in sigtimedwait: block them before any thread starts
  // so every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);  // re-read the cluster file
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // The proc source keeps three /proc/PID files open per process (agent/proc_source.h).
  RaiseOpenFileLimit();
  Result<Cluster> cluster = AgentCluster(config);
  if (!cluster.ok()) {
    Log(cluster.status().ToString());
    return 2;
  }
  // One spool segment per owner. With a cluster file each is the subdirectory named after the
  // member; the short form (R=1, one owner) keeps using the directory itself, the layout of
  // earlier versions, so a spool they left drains unchanged.
  const bool segmented = !config.cluster.empty();
  Result<CurveClient> curve =
      ResolveCurveClient(config.key, config.server_key, config.insecure_plaintext);
  if (curve.ok() && !curve->Usable().ok()) curve = curve->Usable();
  if (!curve.ok()) {
    Log(curve.status().message());
    return 2;
  }
  if (curve->plaintext) Log(kPlaintextWarning);
  ShipperOptions shipper_options;
  shipper_options.curve = *curve;
  shipper_options.window = static_cast<size_t>(config.window);
  shipper_options.ack_timeout = std::chrono::milliseconds(config.ack_timeout_ms);
  uint32_t stack_high = 0, frame_high = 0;
  auto open_shipper = [&config, segmented, &shipper_options, &stack_high, &frame_high](
                          const ClusterMember& member) -> Result<std::unique_ptr<Shipper>> {
    Result<std::unique_ptr<Spool>> spool = OpenAgentSpool(config, segmented ? member.name : "");
    if (!spool.ok()) return spool.status();
    // Each segment keeps its agent id and the stack and frame ids used under it.
    stack_high = std::max(stack_high, (*spool)->stack_high());
    frame_high = std::max(frame_high, (*spool)->frame_high());
    ShipperOptions options = shipper_options;
    options.endpoint = member.ingest;
    options.curve = MemberCurve(shipper_options.curve, member);
    if (member.name != member.ingest) options.name = member.name;
    options.agent_id = (*spool)->agent_id();
    return std::make_unique<Shipper>(std::move(options), std::move(*spool));
  };
  ReplicatedShipper shipper(*cluster, open_shipper);
  // Up front: the owners of now (a spool that cannot be opened is an error at start, as it always
  // was) and every segment an earlier run left, owner or not, so it drains; the bucketizer's ids
  // continue above the highest of them all.
  const std::vector<size_t> owners_now = cluster->Owners(config.host, UnixSecondsNow());
  const std::string spool_dir = AgentSpoolDir(config);
  std::string agents_text;  // each segment's agent id (sequences are per agent id)
  for (size_t m = 0; m < cluster->members.size(); ++m) {
    const bool owner = std::find(owners_now.begin(), owners_now.end(), m) != owners_now.end();
    std::error_code ec;
    const bool left = segmented && !spool_dir.empty() &&
                      std::filesystem::is_directory(spool_dir + "/" + cluster->members[m].name, ec);
    if (!owner && !left) continue;
    Result<std::unique_ptr<Shipper>> made = open_shipper(cluster->members[m]);
    if (!made.ok()) {
      Log(made.status().ToString());
      return made.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
    }
    agents_text += (agents_text.empty() ? "" : " ") + (*made)->agent_id();
    shipper.Adopt(m, std::move(*made));
  }
  // A spool the short form left in the directory itself names no member: it is not sent.
  if (std::error_code ec; segmented && !spool_dir.empty()) {
    for (const auto& file : std::filesystem::directory_iterator(spool_dir, ec)) {
      if (file.path().extension() != ".spool") continue;
      Log("spool " + spool_dir +
          " holds batches of a run with --aggregators, not sent with "
          "--cluster: run once with the old --aggregators until its counters line shows spool "
          "batches=0, then switch");
      break;
    }
  }
  BucketizerOptions bucketizer_options{static_cast<size_t>(config.max_series)};
  bucketizer_options.stacks.first_stack_id = stack_high + 1;
  bucketizer_options.stacks.first_frame_id = frame_high + 1;
  Bucketizer bucketizer(bucketizer_options);
  std::string owners_text;
  for (size_t m : owners_now) {
    owners_text += (owners_text.empty() ? "" : ", ") + cluster->members[m].name +
                   (segmented ? " (" + cluster->members[m].ingest + ")" : "");
  }
  const std::string spool_text = spool_dir.empty() ? std::string("in memory")
                                 : segmented       ? spool_dir + "/MEMBER"
                                                   : spool_dir;

  std::unique_ptr<StatsdServer> statsd;
  if (config.statsd != "off") {
    Result<HostPort> where = ParseHostPort(config.statsd);  // validated already
    StatsdServerOptions statsd_options;
    statsd_options.address = where->host;
    statsd_options.port = where->port;
    statsd_options.units = config.statsd_units;
    statsd_options.new_metrics_per_minute =
        static_cast<double>(config.statsd_new_metrics_per_minute);
    statsd_options.max_metrics = static_cast<size_t>(config.statsd_max_metrics);
    Result<std::unique_ptr<StatsdServer>> started =
        StatsdServer::Start(std::move(statsd_options), &bucketizer);
    if (!started.ok()) {
      Log(started.status().ToString());
      return started.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
    }
    statsd = std::move(*started);
  }
  std::unique_ptr<ProcSource> proc;
  if (config.proc.enabled) {
    ProcSourceOptions proc_options;
    proc_options.root = config.proc.root;
    proc_options.cgroup_root = config.proc.cgroup_root;
    proc_options.interval = std::chrono::milliseconds(config.proc.interval_ms);
    proc_options.per_process = config.proc.per_process;
    proc_options.max_process_names = static_cast<size_t>(config.proc.max_process_names);
    proc = std::make_unique<ProcSource>(std::move(proc_options), &bucketizer);
    proc->Start();
  }
  std::vector<std::unique_ptr<ExecSource>> execs;
  for (const ExecSpec& spec : config.exec) {
    execs.push_back(std::make_unique<ExecSource>(spec, ExecSourceOptions{}, &bucketizer));
    execs.back()->Start();
  }
  // Stack sources deliver from their own threads; the bucketizer takes them under its lock.
  const StackSink stack_sink = [&bucketizer](StackSample&& sample) { bucketizer.AddStack(sample); };
  std::unique_ptr<PerfSource> perf;
  if (config.perf_enabled) {
    // Each timed sample's offset in its second: FlameScope's map of the host (perf_source.h).
    SeriesDef offsets;
    offsets.metric = kCpuOffsetsMetric;
    offsets.kind = MetricKind::kLatency;
    offsets.unit = "ns";
    offsets.description = "offset of each CPU sample within its second (trailmap subsecond)";
    const OffsetSink offset_sink = [&bucketizer, offsets](int64_t second, uint64_t offset_ns) {
      bucketizer.Add(second, offsets, offset_ns);
    };
    perf = std::make_unique<PerfSource>(config.perf, stack_sink,
                                        config.perf.offsets ? offset_sink : OffsetSink{});
    // Where perf is missing or forbidden the source says why and retries; the agent runs on.
    if (Status s = perf->Start(); !s.ok()) Log("perf: " + s.ToString());
  }
  std::unique_ptr<FoldedSource> folded;
  if (!config.folded.path.empty() || !config.folded.socket.empty()) {
    folded = std::make_unique<FoldedSource>(config.folded, stack_sink);
    if (Status s = folded->Start(); !s.ok()) {
      Log("folded stacks: " + s.ToString());
      return s.code() == Status::Code::kInvalidArgument ? 2 : 1;
    }
  }
  // OTLP/HTTP metrics: a converter into the bucketizer behind a /v1/metrics route.
  std::unique_ptr<OtlpConverter> otlp_converter;
  std::unique_ptr<OtlpReceiver> otlp_receiver;
  std::unique_ptr<MetricsHttpServer> otlp_http;
  std::string otlp_text = "off";
  if (config.otlp != "off") {
    const std::string address = config.otlp.empty() ? "127.0.0.1:4318" : config.otlp;
    Result<HostPort> where = ParseHostPort(address);  // validated already
    OtlpConvertOptions otlp_options;
    otlp_options.host = config.host;
    if (config.otlp_resource_fields) otlp_options.resource_fields = *config.otlp_resource_fields;
    otlp_converter = std::make_unique<OtlpConverter>(&bucketizer, std::move(otlp_options));
    otlp_receiver = std::make_unique<OtlpReceiver>(otlp_converter.get());
    MetricsHttpOptions listen{where->host, where->port, "trailmap-agent", {otlp_receiver->Route()}};
    // The listener's own refusals (a 404, a 431 before the path is read) count as OTLP's too.
    listen.refused = [receiver = otlp_receiver.get()](unsigned status) {
      receiver->CountRefused(status);
    };
    Result<std::unique_ptr<MetricsHttpServer>> started =
        MetricsHttpServer::Start(std::move(listen), {});
    if (started.ok()) {
      otlp_http = std::move(*started);
      otlp_text = "http://" + address.substr(0, address.rfind(':')) + ":" +
                  std::to_string(otlp_http->port()) + "/v1/metrics";
    } else if (config.otlp.empty()) {  // the default port, taken: run on without it
      Log("otlp: " + started.status().message() + "; OTLP is off (give --otlp HOST:PORT)");
      otlp_receiver.reset();
      otlp_converter.reset();
    } else {
      Log(started.status().ToString());
      return started.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
    }
  }
  // Prometheus remote write: its own listener, other hosts' data held per host, shipped below.
  std::unique_ptr<PromWriteInput> prom;
  const auto send = [&shipper](Batch batch) { shipper.Send(std::move(batch)); };
  if (config.prom_write.listen != "off") {
    const auto max_backlog = static_cast<uint64_t>(config.prom_write.max_backlog_batches);
    Result<std::unique_ptr<PromWriteInput>> started = PromWriteInput::Start(
        config.prom_write,
        [&shipper, max_backlog] { return shipper.TotalSpoolCounters().batches > max_backlog; });
    if (!started.ok()) {
      Log(started.status().ToString());
      return started.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
    }
    prom = std::move(*started);
    Log("prometheus remote write at " + prom->url());
  }
  Log("started: host " + config.host + ", labels " + LabelsText(config.labels) + ", agent " +
      agents_text + ", shipping to " + owners_text + " (" + std::to_string(owners_now.size()) +
      " of " + std::to_string(cluster->members.size()) +
      ", R=" + std::to_string(cluster->replication) + "), statsd " +
      (statsd ? config.statsd.substr(0, config.statsd.rfind(':')) + ":" +
                    std::to_string(statsd->port())
              : std::string("off")) +
      ", proc " +
      (proc ? "every " + std::to_string(config.proc.interval_ms) + " ms from " + config.proc.root
            : std::string("off")) +
      ", exec " + std::to_string(execs.size()) + ", perf " +
      (perf ? std::to_string(config.perf.frequency) + " Hz" : std::string("off")) +
      ", folded stacks " + (folded ? std::string("on") : std::string("off")) + ", otlp " +
      otlp_text + ", spool " + spool_text);

  // The self-metrics for a Prometheus scrape: read afresh at every request, on the server's thread.
  std::unique_ptr<MetricsHttpServer> metrics_http;
  if (config.metrics != "off") {
    Result<HostPort> where = ParseHostPort(config.metrics);  // validated already
    AgentParts parts{&bucketizer, &shipper,   statsd.get(), proc.get(),
                     &execs,      perf.get(), folded.get()};
    parts.otlp = otlp_converter.get();
    parts.otlp_http = otlp_receiver.get();
    parts.prom = prom.get();
    Result<std::unique_ptr<MetricsHttpServer>> started =
        MetricsHttpServer::Start(MetricsHttpOptions{where->host, where->port, "trailmap-agent"},
                                 [parts] { return AgentReadings(ReadAgentCounters(parts)); });
    if (!started.ok()) {
      Log(started.status().ToString());
      return started.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
    }
    metrics_http = std::move(*started);
    Log("metrics: Prometheus text at " + metrics_http->url());
  }

  std::unique_ptr<AgentSelfMetrics> self_metrics;
  if (config.self_metrics) {
    AgentParts parts{&bucketizer, &shipper,   statsd.get(), proc.get(),
                     &execs,      perf.get(), folded.get()};
    parts.otlp = otlp_converter.get();
    parts.otlp_http = otlp_receiver.get();
    parts.prom = prom.get();
    self_metrics = std::make_unique<AgentSelfMetrics>(&bucketizer, parts);
  }
  const std::chrono::milliseconds tick(config.flush_ms);
  const auto report_every = std::chrono::seconds(10);
  auto last_report = std::chrono::steady_clock::now();
  std::string last_line;
  while (true) {
    const timespec wait{static_cast<time_t>(tick.count() / 1000),
                        static_cast<long>(tick.count() % 1000) * 1'000'000};
    const int signal = sigtimedwait(&signals, nullptr, &wait);
    if (signal == SIGINT || signal == SIGTERM) {
      Log(std::string("stopping on ") + (signal == SIGINT ? "SIGINT" : "SIGTERM"));
      break;
    }
    if (signal == SIGHUP) ReloadAgentCluster(config.cluster, *curve, &shipper);
    const int64_t now = UnixSecondsNow();
    if (self_metrics) self_metrics->Tick(now);  // into the second before `now`, shipped next
    ShipSecondsBefore(now, config, &bucketizer, &shipper);
    if (prom) prom->ShipSecondsBefore(now, send);
    if (std::chrono::steady_clock::now() - last_report >= report_every) {
      last_report = std::chrono::steady_clock::now();
      std::string line =
          CountersLine(StatsdCountersOf(statsd.get()), bucketizer, shipper, proc.get(), execs,
                       perf.get(), folded.get(), otlp_converter.get());
      if (line != last_line) Log(line);
      last_line = std::move(line);
    }
  }
  // Stop receiving, then ship everything held, the current second too: a second shipped in two
  // parts merges at the aggregator, so nothing a client sent before the signal is lost.
  const std::optional<StatsdCounters> statsd_counters = StatsdCountersOf(statsd.get());
  metrics_http.reset();  // it reads the parts: stopped before any of them
  otlp_http.reset();     // then no request converts any more
  if (prom) prom->StopListening();
  statsd.reset();
  if (proc) proc->Stop();
  for (auto& e : execs) e->Stop();
  if (perf) perf->Stop();  // delivers nothing more; a window still recording is not read
  if (folded) folded->Stop();
  ShipSecondsBefore(std::numeric_limits<int64_t>::max(), config, &bucketizer, &shipper);
  if (prom) prom->ShipSecondsBefore(std::numeric_limits<int64_t>::max(), send);
  if (Status s = shipper.Flush(std::chrono::seconds(2)); !s.ok()) Log("at exit: " + s.ToString());
  if (self_metrics) {  // the counters since the last tick, acks included, in one last batch
    self_metrics->RecordAtExit(UnixSecondsNow(), statsd_counters);
    ShipSecondsBefore(std::numeric_limits<int64_t>::max(), config, &bucketizer, &shipper);
    if (Status s = shipper.Flush(std::chrono::seconds(2)); !s.ok()) Log("at exit: " + s.ToString());
  }
  Log(CountersLine(statsd_counters, bucketizer, shipper, proc.get(), execs, perf.get(),
                   folded.get(), otlp_converter.get()) +
      " (at exit)");
  return 0;
}

}  // namespace
}  // namespace trailmap

int main(int argc, char** argv) {
  trailmap::SetLogProgram("trailmap-agent");
  trailmap::AgentConfig config;
  if (const int code = trailmap::Configure(argc, argv, &config); code >= 0) return code;
  return trailmap::Run(config);
}
