// trailmap-agent: turns this host's statsd timings, its own /proc metrics, the output of any
// configured commands and its CPU stacks (perf, folded-stack lines) into per-second histograms,
// scalars and stack counts, and ships them to every aggregator that owns the host (core/cluster.h:
// its R owners; ingest/replicated_shipper.h).
//
// main() builds everything and hands it down: the bucketizer, the shippers (one per owner, each
// its own thread and spool segment), the statsd server, the proc source, each exec source and the
// stack sources (a thread each). This thread waits for SIGINT/SIGTERM (net/daemon_signals.h;
// SIGHUP: read the cluster file again, to route by an epoch an operator added; net/cluster_file.h
// ReloadCluster), and every flush_ms turns the seconds before the current one into one batch;
// stack samples that arrive late (perf delivers a window at a time) go out with the next batch as
// further counts of their seconds, which the aggregator adds up.
//
// Exit codes: 0 after a signal, 2 on a bad flag or config, 1 when the statsd port cannot be bound.
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
#include "agent/agent_flags.h"
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
#include "core/log.h"
#include "core/open_files.h"
#include "ingest/bucketizer.h"
#include "ingest/replicated_shipper.h"
#include "net/client_keys.h"
#include "net/cluster_file.h"
#include "net/command_line.h"
#include "net/daemon_signals.h"
#include "net/metrics_http.h"

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

// Parses flags over the config file (agent/agent_flags.h); returns the exit code to use, or -1
// to run.
int Configure(int argc, char** argv, AgentConfig* config) {
  CLI::App app;
  AgentFlags flags;
  AddAgentFlags(&app, &flags);
  if (const int code = ParseCommandLine(&app, argc, argv); code >= 0) return code;
  if (Status s = ApplyAgentFlags(app, flags, config); !s.ok()) {
    std::fprintf(stderr, "trailmap-agent: %s\n", s.message().c_str());
    return 2;
  }
  return -1;
}

// The exit code of a part that did not start: 2 for a bad setting, 1 otherwise.
int ExitCode(const Status& s) { return s.code() == Status::Code::kInvalidArgument ? 2 : 1; }

// SIGHUP: the cluster file read again (net/cluster_file.h ReloadCluster); batches are routed by the
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

// The shippers, one per owner of the host (ingest/replicated_shipper.h), and what the start-up
// line says of them. Not movable once started: the shipper's factory writes the highest stack
// and frame ids of the spools it opens into stack_high and frame_high.
struct Shipping {
  bool segmented = false;  // a spool segment per member (a cluster file), or the directory itself
  uint32_t stack_high = 0, frame_high = 0;
  std::unique_ptr<ReplicatedShipper> shipper;
  std::vector<size_t> owners_now;  // the host's owners at start
  std::string agents_text;         // each segment's agent id (sequences are per agent id)
  std::string spool_text;
};

// Opens a shipper for every owner of now (a spool that cannot be opened is an error at start)
// and every segment an earlier run left, owner or not, so it drains; logs why it failed.
Status StartShipping(const AgentConfig& config, const Cluster& cluster, const CurveClient& curve,
                     Shipping* out) {
  // One spool segment per owner. With a cluster file each is the subdirectory named after the
  // member; the short form (R=1, one owner) keeps using the directory itself, the layout of
  // earlier versions, so a spool they left drains unchanged.
  out->segmented = !config.cluster.empty();
  ShipperOptions shipper_options;
  shipper_options.curve = curve;
  shipper_options.window = static_cast<size_t>(config.window);
  shipper_options.ack_timeout = std::chrono::milliseconds(config.ack_timeout_ms);
  auto open_shipper = [&config, shipper_options,
                       out](const ClusterMember& member) -> Result<std::unique_ptr<Shipper>> {
    Result<std::unique_ptr<Spool>> spool =
        OpenAgentSpool(config, out->segmented ? member.name : "");
    if (!spool.ok()) return spool.status();
    // Each segment keeps its agent id and the stack and frame ids used under it.
    out->stack_high = std::max(out->stack_high, (*spool)->stack_high());
    out->frame_high = std::max(out->frame_high, (*spool)->frame_high());
    ShipperOptions options = shipper_options;
    options.endpoint = member.ingest;
    options.curve = MemberCurve(shipper_options.curve, member);
    if (member.name != member.ingest) options.name = member.name;
    options.agent_id = (*spool)->agent_id();
    return std::make_unique<Shipper>(std::move(options), std::move(*spool));
  };
  out->shipper = std::make_unique<ReplicatedShipper>(cluster, open_shipper);
  out->owners_now = cluster.Owners(config.host, UnixSecondsNow());
  const std::string spool_dir = AgentSpoolDir(config);
  for (size_t m = 0; m < cluster.members.size(); ++m) {
    const std::vector<size_t>& owners = out->owners_now;
    const bool owner = std::find(owners.begin(), owners.end(), m) != owners.end();
    std::error_code ec;
    const bool left = out->segmented && !spool_dir.empty() &&
                      std::filesystem::is_directory(spool_dir + "/" + cluster.members[m].name, ec);
    if (!owner && !left) continue;
    Result<std::unique_ptr<Shipper>> made = open_shipper(cluster.members[m]);
    if (!made.ok()) {
      Log(made.status().ToString());
      return made.status();
    }
    out->agents_text += (out->agents_text.empty() ? "" : " ") + (*made)->agent_id();
    out->shipper->Adopt(m, std::move(*made));
  }
  // A spool the short form left in the directory itself names no member: it is not sent.
  if (std::error_code ec; out->segmented && !spool_dir.empty()) {
    for (const auto& file : std::filesystem::directory_iterator(spool_dir, ec)) {
      if (file.path().extension() != ".spool") continue;
      Log("spool " + spool_dir +
          " holds batches of a run with --aggregators, not sent with "
          "--cluster: run once with the old --aggregators until its counters line shows spool "
          "batches=0, then switch");
      break;
    }
  }
  out->spool_text = spool_dir.empty() ? std::string("in memory")
                    : out->segmented  ? spool_dir + "/MEMBER"
                                      : spool_dir;
  return Status::Ok();
}

// Every source and listener of the agent; null (or empty) when off. The bucketizer they feed
// outlives them.
struct AgentSources {
  std::unique_ptr<StatsdServer> statsd;
  std::unique_ptr<ProcSource> proc;
  std::vector<std::unique_ptr<ExecSource>> execs;
  std::unique_ptr<PerfSource> perf;
  std::unique_ptr<FoldedSource> folded;
  // OTLP/HTTP metrics: a converter into the bucketizer behind a /v1/metrics route.
  std::unique_ptr<OtlpConverter> otlp_converter;
  std::unique_ptr<OtlpReceiver> otlp_receiver;
  std::unique_ptr<MetricsHttpServer> otlp_http;
  std::string otlp_text = "off";
  // Prometheus remote write: its own listener, other hosts' data held per host, shipped by the
  // flush loop.
  std::unique_ptr<PromWriteInput> prom;

  AgentParts Parts(const Bucketizer* bucketizer, const ReplicatedShipper* shipper) const {
    AgentParts parts{bucketizer, shipper,    statsd.get(), proc.get(),
                     &execs,     perf.get(), folded.get()};
    parts.otlp = otlp_converter.get();
    parts.otlp_http = otlp_receiver.get();
    parts.prom = prom.get();
    return parts;
  }
  std::string CountersLine(const Bucketizer& bucketizer, const ReplicatedShipper& shipper,
                           const std::optional<StatsdCounters>& statsd_counters) const {
    return trailmap::CountersLine(statsd_counters, bucketizer, shipper, proc.get(), execs,
                                  perf.get(), folded.get(), otlp_converter.get());
  }
};

Status StartStatsd(const AgentConfig& config, Bucketizer* bucketizer, AgentSources* sources) {
  if (config.statsd == "off") return Status::Ok();
  Result<HostPort> where = ParseHostPort(config.statsd);  // validated already
  StatsdServerOptions statsd_options;
  statsd_options.address = where->host;
  statsd_options.port = where->port;
  statsd_options.units = config.statsd_units;
  statsd_options.new_metrics_per_minute = static_cast<double>(config.statsd_new_metrics_per_minute);
  statsd_options.max_metrics = static_cast<size_t>(config.statsd_max_metrics);
  Result<std::unique_ptr<StatsdServer>> started =
      StatsdServer::Start(std::move(statsd_options), bucketizer);
  if (!started.ok()) {
    Log(started.status().ToString());
    return started.status();
  }
  sources->statsd = std::move(*started);
  return Status::Ok();
}

void StartProcAndExec(const AgentConfig& config, Bucketizer* bucketizer, AgentSources* sources) {
  if (config.proc.enabled) {
    ProcSourceOptions proc_options;
    proc_options.root = config.proc.root;
    proc_options.cgroup_root = config.proc.cgroup_root;
    proc_options.interval = std::chrono::milliseconds(config.proc.interval_ms);
    proc_options.per_process = config.proc.per_process;
    proc_options.max_process_names = static_cast<size_t>(config.proc.max_process_names);
    sources->proc = std::make_unique<ProcSource>(std::move(proc_options), bucketizer);
    sources->proc->Start();
  }
  for (const ExecSpec& spec : config.exec) {
    sources->execs.push_back(std::make_unique<ExecSource>(spec, ExecSourceOptions{}, bucketizer));
    sources->execs.back()->Start();
  }
}

// Stack sources deliver from their own threads; the bucketizer takes them under its lock.
Status StartStackSources(const AgentConfig& config, Bucketizer* bucketizer, AgentSources* sources) {
  const StackSink stack_sink = [bucketizer](StackSample&& sample) { bucketizer->AddStack(sample); };
  if (config.perf_enabled) {
    // Each timed sample's offset in its second: FlameScope's map of the host (perf_source.h).
    SeriesDef offsets;
    offsets.metric = kCpuOffsetsMetric;
    offsets.kind = MetricKind::kLatency;
    offsets.unit = "ns";
    offsets.description = "offset of each CPU sample within its second (trailmap subsecond)";
    const OffsetSink offset_sink = [bucketizer, offsets](int64_t second, uint64_t offset_ns) {
      bucketizer->Add(second, offsets, offset_ns);
    };
    sources->perf = std::make_unique<PerfSource>(config.perf, stack_sink,
                                                 config.perf.offsets ? offset_sink : OffsetSink{});
    // Where perf is missing or forbidden the source says why and retries; the agent runs on.
    if (Status s = sources->perf->Start(); !s.ok()) Log("perf: " + s.ToString());
  }
  if (!config.folded.path.empty() || !config.folded.socket.empty()) {
    sources->folded = std::make_unique<FoldedSource>(config.folded, stack_sink);
    if (Status s = sources->folded->Start(); !s.ok()) {
      Log("folded stacks: " + s.ToString());
      return s;
    }
  }
  return Status::Ok();
}

Status StartOtlp(const AgentConfig& config, Bucketizer* bucketizer, AgentSources* sources) {
  if (config.otlp == "off") return Status::Ok();
  const std::string address = config.otlp.empty() ? "127.0.0.1:4318" : config.otlp;
  Result<HostPort> where = ParseHostPort(address);  // validated already
  OtlpConvertOptions otlp_options;
  otlp_options.host = config.host;
  if (config.otlp_resource_fields) otlp_options.resource_fields = *config.otlp_resource_fields;
  sources->otlp_converter = std::make_unique<OtlpConverter>(bucketizer, std::move(otlp_options));
  sources->otlp_receiver = std::make_unique<OtlpReceiver>(sources->otlp_converter.get());
  MetricsHttpOptions listen{
      where->host, where->port, "trailmap-agent", {sources->otlp_receiver->Route()}};
  // The listener's own refusals (a 404, a 431 before the path is read) count as OTLP's too.
  listen.refused = [receiver = sources->otlp_receiver.get()](unsigned status) {
    receiver->CountRefused(status);
  };
  Result<std::unique_ptr<MetricsHttpServer>> started =
      MetricsHttpServer::Start(std::move(listen), {});
  if (started.ok()) {
    sources->otlp_http = std::move(*started);
    sources->otlp_text = "http://" + address.substr(0, address.rfind(':')) + ":" +
                         std::to_string(sources->otlp_http->port()) + "/v1/metrics";
  } else if (config.otlp.empty()) {  // the default port, taken: run on without it
    Log("otlp: " + started.status().message() + "; OTLP is off (give --otlp HOST:PORT)");
    sources->otlp_receiver.reset();
    sources->otlp_converter.reset();
  } else {
    Log(started.status().ToString());
    return started.status();
  }
  return Status::Ok();
}

// Held back while the spool holds more than max_backlog_batches: remote writers then retry.
Status StartPromWrite(const AgentConfig& config, const ReplicatedShipper* shipper,
                      AgentSources* sources) {
  if (config.prom_write.listen == "off") return Status::Ok();
  const auto max_backlog = static_cast<uint64_t>(config.prom_write.max_backlog_batches);
  Result<std::unique_ptr<PromWriteInput>> started = PromWriteInput::Start(
      config.prom_write,
      [shipper, max_backlog] { return shipper->TotalSpoolCounters().batches > max_backlog; });
  if (!started.ok()) {
    Log(started.status().ToString());
    return started.status();
  }
  sources->prom = std::move(*started);
  Log("prometheus remote write at " + sources->prom->url());
  return Status::Ok();
}

Status StartSources(const AgentConfig& config, Bucketizer* bucketizer,
                    const ReplicatedShipper* shipper, AgentSources* sources) {
  if (Status s = StartStatsd(config, bucketizer, sources); !s.ok()) return s;
  StartProcAndExec(config, bucketizer, sources);
  if (Status s = StartStackSources(config, bucketizer, sources); !s.ok()) return s;
  if (Status s = StartOtlp(config, bucketizer, sources); !s.ok()) return s;
  return StartPromWrite(config, shipper, sources);
}

std::string StartedLine(const AgentConfig& config, const Cluster& cluster, const Shipping& shipping,
                        const AgentSources& sources) {
  std::string owners_text;
  for (size_t m : shipping.owners_now) {
    owners_text += (owners_text.empty() ? "" : ", ") + cluster.members[m].name +
                   (shipping.segmented ? " (" + cluster.members[m].ingest + ")" : "");
  }
  return "started: host " + config.host + ", labels " + LabelsText(config.labels) + ", agent " +
         shipping.agents_text + ", shipping to " + owners_text + " (" +
         std::to_string(shipping.owners_now.size()) + " of " +
         std::to_string(cluster.members.size()) + ", R=" + std::to_string(cluster.replication) +
         "), statsd " +
         (sources.statsd ? config.statsd.substr(0, config.statsd.rfind(':')) + ":" +
                               std::to_string(sources.statsd->port())
                         : std::string("off")) +
         ", proc " +
         (sources.proc
              ? "every " + std::to_string(config.proc.interval_ms) + " ms from " + config.proc.root
              : std::string("off")) +
         ", exec " + std::to_string(sources.execs.size()) + ", perf " +
         (sources.perf ? std::to_string(config.perf.frequency) + " Hz" : std::string("off")) +
         ", folded stacks " + (sources.folded ? std::string("on") : std::string("off")) +
         ", otlp " + sources.otlp_text + ", spool " + shipping.spool_text;
}

// The self-metrics for a Prometheus scrape: read afresh at every request, on the server's thread.
Result<std::unique_ptr<MetricsHttpServer>> StartMetricsHttp(const AgentConfig& config,
                                                            const AgentParts& parts) {
  if (config.metrics == "off") return std::unique_ptr<MetricsHttpServer>();
  Result<HostPort> where = ParseHostPort(config.metrics);  // validated already
  Result<std::unique_ptr<MetricsHttpServer>> started =
      MetricsHttpServer::Start(MetricsHttpOptions{where->host, where->port, "trailmap-agent"},
                               [parts] { return AgentReadings(ReadAgentCounters(parts)); });
  if (!started.ok()) {
    Log(started.status().ToString());
    return started.status();
  }
  Log("metrics: Prometheus text at " + (*started)->url());
  return started;
}

// Until SIGINT or SIGTERM: every flush_ms the seconds before now go out (self-metrics first,
// into the second just ended), a SIGHUP reads the cluster file again, and every 10 s the
// counters line is logged when it changed.
void ServeUntilStopped(const DaemonSignals& signals, const AgentConfig& config,
                       const CurveClient& curve, Bucketizer* bucketizer, ReplicatedShipper* shipper,
                       const AgentSources& sources, AgentSelfMetrics* self_metrics) {
  const std::chrono::milliseconds tick(config.flush_ms);
  const auto report_every = std::chrono::seconds(10);
  auto last_report = std::chrono::steady_clock::now();
  std::string last_line;
  const auto send = [shipper](Batch batch) { shipper->Send(std::move(batch)); };
  while (true) {
    const int signal = signals.WaitFor(tick);
    if (DaemonSignals::Stops(signal)) {
      Log("stopping on " + DaemonSignals::Name(signal));
      return;
    }
    if (signal == SIGHUP) ReloadAgentCluster(config.cluster, curve, shipper);
    const int64_t now = UnixSecondsNow();
    if (self_metrics) self_metrics->Tick(now);  // into the second before `now`, shipped next
    ShipSecondsBefore(now, config, bucketizer, shipper);
    if (sources.prom) sources.prom->ShipSecondsBefore(now, send);
    if (std::chrono::steady_clock::now() - last_report >= report_every) {
      last_report = std::chrono::steady_clock::now();
      std::string line =
          sources.CountersLine(*bucketizer, *shipper, StatsdCountersOf(sources.statsd.get()));
      if (line != last_line) Log(line);
      last_line = std::move(line);
    }
  }
}

// Stop receiving, then ship everything held, the current second too: a second shipped in two
// parts merges at the aggregator, so nothing a client sent before the signal is lost.
void StopAndDrain(const AgentConfig& config, Bucketizer* bucketizer, ReplicatedShipper* shipper,
                  AgentSources* sources, std::unique_ptr<MetricsHttpServer> metrics_http,
                  AgentSelfMetrics* self_metrics) {
  const std::optional<StatsdCounters> statsd_counters = StatsdCountersOf(sources->statsd.get());
  metrics_http.reset();        // it reads the parts: stopped before any of them
  sources->otlp_http.reset();  // then no request converts any more
  if (sources->prom) sources->prom->StopListening();
  sources->statsd.reset();
  if (sources->proc) sources->proc->Stop();
  for (auto& e : sources->execs) e->Stop();
  if (sources->perf) sources->perf->Stop();  // delivers nothing more, a recording window unread
  if (sources->folded) sources->folded->Stop();
  ShipSecondsBefore(std::numeric_limits<int64_t>::max(), config, bucketizer, shipper);
  if (sources->prom) {
    sources->prom->ShipSecondsBefore(std::numeric_limits<int64_t>::max(),
                                     [shipper](Batch batch) { shipper->Send(std::move(batch)); });
  }
  if (Status s = shipper->Flush(std::chrono::seconds(2)); !s.ok()) Log("at exit: " + s.ToString());
  if (self_metrics) {  // the counters since the last tick, acks included, in one last batch
    self_metrics->RecordAtExit(UnixSecondsNow(), statsd_counters);
    ShipSecondsBefore(std::numeric_limits<int64_t>::max(), config, bucketizer, shipper);
    if (Status s = shipper->Flush(std::chrono::seconds(2)); !s.ok()) {
      Log("at exit: " + s.ToString());
    }
  }
  Log(sources->CountersLine(*bucketizer, *shipper, statsd_counters) + " (at exit)");
}

int Run(const AgentConfig& config) {
  // Signals are taken by this thread alone: blocked before any thread starts, so every thread
  // inherits the mask.
  const DaemonSignals signals;
  // The proc source keeps three /proc/PID files open per process (agent/proc_source.h).
  RaiseOpenFileLimit();
  Result<Cluster> cluster = AgentCluster(config);
  if (!cluster.ok()) {
    Log(cluster.status().ToString());
    return 2;
  }
  Result<CurveClient> curve =
      ClientCurve({config.key, config.server_key, config.insecure_plaintext}, /*need_keys=*/true);
  if (!curve.ok()) {
    Log(curve.status().message());
    return 2;
  }
  Shipping shipping;
  if (Status s = StartShipping(config, *cluster, *curve, &shipping); !s.ok()) return ExitCode(s);
  ReplicatedShipper* shipper = shipping.shipper.get();
  // The bucketizer's ids continue above the highest of every spool segment's.
  BucketizerOptions bucketizer_options{static_cast<size_t>(config.max_series)};
  bucketizer_options.stacks.first_stack_id = shipping.stack_high + 1;
  bucketizer_options.stacks.first_frame_id = shipping.frame_high + 1;
  Bucketizer bucketizer(bucketizer_options);
  AgentSources sources;
  if (Status s = StartSources(config, &bucketizer, shipper, &sources); !s.ok()) return ExitCode(s);
  Log(StartedLine(config, *cluster, shipping, sources));
  const AgentParts parts = sources.Parts(&bucketizer, shipper);
  Result<std::unique_ptr<MetricsHttpServer>> metrics_http = StartMetricsHttp(config, parts);
  if (!metrics_http.ok()) return ExitCode(metrics_http.status());
  std::unique_ptr<AgentSelfMetrics> self_metrics;
  if (config.self_metrics) self_metrics = std::make_unique<AgentSelfMetrics>(&bucketizer, parts);

  ServeUntilStopped(signals, config, *curve, &bucketizer, shipper, sources, self_metrics.get());
  StopAndDrain(config, &bucketizer, shipper, &sources, std::move(*metrics_http),
               self_metrics.get());
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
