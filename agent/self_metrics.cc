#include "agent/self_metrics.h"

#include "core/log.h"

namespace trailmap {
namespace {

// Each part's counters as metrics (core/self_metrics.h): adding a metric is one line here.
constexpr CounterField<StatsdCounters> kStatsd[] = {
    {"trailmap.agent.statsd.packets", true, "packets/s",
     "UDP datagrams received on the statsd port", &StatsdCounters::packets},
    {"trailmap.agent.statsd.lines", true, "lines/s", "statsd lines accepted",
     &StatsdCounters::lines_accepted},
    {"trailmap.agent.statsd.unsupported", true, "lines/s",
     "DogStatsD events and service checks received (recognised, not stored)",
     &StatsdCounters::lines_unsupported},
    {"trailmap.agent.statsd.values", true, "values/s",
     "values and set members of accepted statsd lines (a packed line holds several)",
     &StatsdCounters::values},
    {"trailmap.agent.statsd.tags_renamed", true, "tags/s",
     "statsd tags with a reserved key (host, value, latency, size, overflow) kept as tag_KEY",
     &StatsdCounters::tags_renamed},
};

constexpr CounterField<StatsdScalarsCounters> kStatsdScalars[] = {
    {"trailmap.agent.statsd.set_members_dropped", true, "members/s",
     "statsd set members not counted: the set already held its bound in that second",
     &StatsdScalarsCounters::set_members_dropped},
    {"trailmap.agent.statsd.deltas_dropped", true, "lines/s",
     "statsd gauge deltas dropped: more gauges than the agent remembers",
     &StatsdScalarsCounters::gauge_deltas_dropped},
    {"trailmap.agent.statsd.stale", true, "values/s",
     "statsd counter and set values for a second the agent no longer holds",
     &StatsdScalarsCounters::stale},
};

constexpr CounterField<BucketizerCounters> kBucketizer[] = {
    {"trailmap.agent.events", true, "events/s", "events recorded into histograms (sum of counts)",
     &BucketizerCounters::events},
    {"trailmap.agent.events.overflow", true, "events/s",
     "events that went to a metric's overflow series (over --max-series field sets)",
     &BucketizerCounters::overflow_events},
    {"trailmap.agent.events.late", true, "events/s",
     "events for a second already shipped (sent as a further delta of it)",
     &BucketizerCounters::late_events},
    {"trailmap.agent.scalars", true, "values/s", "scalar values recorded",
     &BucketizerCounters::scalars},
    {"trailmap.agent.scalars.overflow", true, "values/s",
     "scalar values summed into an overflow series", &BucketizerCounters::overflow_scalars},
    {"trailmap.agent.scalars.bad", true, "values/s", "scalar values dropped: NaN or infinite",
     &BucketizerCounters::bad_scalars},
    {"trailmap.agent.stacks.samples", true, "samples/s", "CPU stack samples recorded",
     &BucketizerCounters::stack_samples},
    {"trailmap.agent.stacks.truncated", true, "stacks/s", "stacks cut at the depth bound",
     &BucketizerCounters::truncated_stacks},
    {"trailmap.agent.stacks.truncated_frames", true, "frames/s",
     "frame names cut at the length bound", &BucketizerCounters::truncated_frames},
};

// The shipper's counters.
constexpr CounterField<ShipperCounters> kShipper[] = {
    {"trailmap.agent.items.refused", true, "items/s",
     "items the aggregator left out of applied batches (named in its acks)",
     &ShipperCounters::items_refused},
    {"trailmap.agent.batches.unreadable", true, "acks/s",
     "rejected acks with sequence 0 (a message the aggregator could not read; resent)",
     &ShipperCounters::unreadable},
    {"trailmap.agent.batches.sent", true, "batches/s", "batches sent for the first time",
     &ShipperCounters::sent},
    {"trailmap.agent.batches.acked", true, "batches/s", "batches the aggregator applied",
     &ShipperCounters::acked},
    {"trailmap.agent.batches.duplicate", true, "batches/s",
     "resent batches the aggregator already had", &ShipperCounters::duplicates},
    {"trailmap.agent.batches.rejected", true, "batches/s",
     "batches the aggregator refused (malformed; their data is lost)", &ShipperCounters::rejected},
    {"trailmap.agent.batches.resent", true, "batches/s", "transmissions after a batch's first",
     &ShipperCounters::resent},
    {"trailmap.agent.batches.dropped", true, "batches/s",
     "batches dropped by the spool to make room, or that could not be spooled",
     &ShipperCounters::dropped},
    {"trailmap.agent.batches.out_of_order", true, "acks/s", "outOfOrder acks received",
     &ShipperCounters::out_of_order},
    {"trailmap.agent.batches.need_dictionary", true, "acks/s",
     "needDictionary acks acted on (stack definitions resent)", &ShipperCounters::need_dictionary},
    {"trailmap.agent.batches.retry_later", true, "acks/s",
     "retryLater acks acted on (an aggregator's per-agent limit, or busy): waited, then resent",
     &ShipperCounters::retry_later},
    {"trailmap.agent.batches.unauthorized", true, "acks/s",
     "unauthorized acks: batches refused for this agent's key (clients file), held and resent "
     "with a backoff, never dropped for it",
     &ShipperCounters::unauthorized},
    {"trailmap.agent.reconnects", true, "reconnects/s",
     "ingest sockets reopened (ack timeout, new incarnation)", &ShipperCounters::reconnects},
    {"trailmap.agent.handshake_failures", true, "failures/s",
     "CURVE handshakes an aggregator refused or hung up on (logged once per kind until an ack)",
     &ShipperCounters::handshake_failures},
    {"trailmap.agent.incarnations", true, "ids/s",
     "new agent ids taken because the aggregator lost its state", &ShipperCounters::incarnations},
    {"trailmap.agent.stack_defs.sent", true, "defs/s", "stack definitions sent",
     &ShipperCounters::stack_defs_sent},
    {"trailmap.agent.frame_defs.sent", true, "defs/s", "frame definitions sent",
     &ShipperCounters::frame_defs_sent},
};

// The spool's (ingest/spool.h): gauges of what it holds, counters of what went through it.
constexpr CounterField<SpoolCounters> kSpool[] = {
    {"trailmap.agent.spool.bytes", false, "B", "bytes in the spool", &SpoolCounters::bytes},
    {"trailmap.agent.spool.batches", false, "batches", "unacknowledged batches in the spool",
     &SpoolCounters::batches},
    {"trailmap.agent.spool.appended", true, "batches/s", "batches written to the spool",
     &SpoolCounters::appended},
    {"trailmap.agent.spool.replayed", true, "batches/s",
     "batches found in the spool at start, from an earlier run", &SpoolCounters::replayed},
    {"trailmap.agent.spool.dropped.batches", true, "batches/s",
     "unacknowledged batches deleted from the full spool (oldest first)",
     &SpoolCounters::dropped_batches},
    {"trailmap.agent.spool.dropped.bytes", true, "B/s", "bytes of those dropped batches",
     &SpoolCounters::dropped_bytes},
    {"trailmap.agent.spool.dropped.events", true, "events/s",
     "events and stack samples in those dropped batches: data lost",
     &SpoolCounters::dropped_events},
    {"trailmap.agent.spool.truncated", true, "B/s", "torn or corrupt spool tails cut off at start",
     &SpoolCounters::truncated_bytes},
    {"trailmap.agent.spool.fsyncs", true, "fsyncs/s", "spool fsyncs", &SpoolCounters::fsyncs},
    {"trailmap.agent.spool.held_in_memory", true, "batches/s",
     "batches the spool's disk refused (full, failing), held in memory until acknowledged",
     &SpoolCounters::held_in_memory},
};

constexpr CounterField<ProcCounters> kProc[] = {
    {"trailmap.agent.proc.passes", true, "passes/s", "passes over /proc", &ProcCounters::passes},
    {"trailmap.agent.proc.processes", false, "processes", "processes read in the last pass",
     &ProcCounters::processes},
    {"trailmap.agent.proc.vanished", true, "processes/s",
     "processes that exited between listing and reading", &ProcCounters::vanished},
    {"trailmap.agent.proc.unreadable", true, "files/s",
     "/proc files skipped (not readable, e.g. another user's io)", &ProcCounters::unreadable},
    {"trailmap.agent.proc.parse_errors", true, "files/s", "/proc files that did not parse",
     &ProcCounters::parse_errors},
    {"trailmap.agent.proc.resets", true, "counters/s", "/proc counters that went backwards",
     &ProcCounters::resets},
};

constexpr CounterField<ExecCounters> kExec[] = {
    {"trailmap.agent.exec.starts", true, "starts/s", "times an exec command was started",
     &ExecCounters::starts},
    {"trailmap.agent.exec.exits", true, "exits/s", "times an exec command ended",
     &ExecCounters::exits},
    {"trailmap.agent.exec.lines", true, "lines/s", "exec output lines accepted",
     &ExecCounters::lines_accepted},
    {"trailmap.agent.exec.stderr", true, "lines/s", "exec stderr lines (logged, not data)",
     &ExecCounters::stderr_lines},
};

constexpr CounterField<PerfSourceStats> kPerf[] = {
    {"trailmap.agent.perf.windows", true, "windows/s", "perf windows read",
     &PerfSourceStats::windows},
    {"trailmap.agent.perf.samples", true, "samples/s", "perf samples folded",
     &PerfSourceStats::samples},
    {"trailmap.agent.perf.failures", true, "runs/s", "failed perf runs (record or script)",
     &PerfSourceStats::failures},
    {"trailmap.agent.perf.malformed", true, "lines/s", "perf script lines that did not parse",
     &PerfSourceStats::malformed_lines},
    {"trailmap.agent.perf.untimed", true, "samples/s",
     "perf samples without a usable time (counted at the window's start)",
     &PerfSourceStats::untimed_samples},
};

constexpr CounterField<FoldedSourceStats> kFolded[] = {
    {"trailmap.agent.folded.lines", true, "lines/s", "folded-stack lines read",
     &FoldedSourceStats::lines},
    {"trailmap.agent.folded.malformed", true, "lines/s", "folded-stack lines refused",
     &FoldedSourceStats::malformed},
    {"trailmap.agent.folded.clients", true, "clients/s", "folded-stack socket clients accepted",
     &FoldedSourceStats::clients},
    {"trailmap.agent.folded.clients_refused", true, "clients/s",
     "folded-stack socket clients refused (over max_clients)", &FoldedSourceStats::clients_refused},
};

constexpr CounterField<OtlpCounters> kOtlp[] = {
    {"trailmap.agent.otlp.points", true, "points/s", "OTLP data points taken",
     &OtlpCounters::points_accepted},
    {"trailmap.agent.otlp.no_value", true, "points/s",
     "OTLP data points flagged 'no recorded value' (skipped)", &OtlpCounters::no_value},
    {"trailmap.agent.otlp.baselines", true, "points/s",
     "first points of cumulative OTLP series that began before the agent: only remembered",
     &OtlpCounters::baselines},
    {"trailmap.agent.otlp.resets", true, "points/s", "cumulative OTLP series that started again",
     &OtlpCounters::resets},
    {"trailmap.agent.otlp.evicted", true, "series/s",
     "cumulative OTLP series forgotten at the bound of remembered series",
     &OtlpCounters::evicted_series},
    {"trailmap.agent.otlp.rewritten", true, "attributes/s",
     "OTLP attribute keys or values rewritten to fit a field", &OtlpCounters::attributes_rewritten},
};

constexpr CounterField<OtlpHttpCounters> kOtlpHttp[] = {
    {"trailmap.agent.otlp.requests", true, "requests/s", "POST /v1/metrics requests received",
     &OtlpHttpCounters::requests},
    {"trailmap.agent.otlp.bytes", true, "B/s", "OTLP request bodies received, as sent",
     &OtlpHttpCounters::body_bytes},
    {"trailmap.agent.otlp.trims", true, "trims/s",
     "heap memory given back to the system after an outsized OTLP request",
     &OtlpHttpCounters::trims},
};

}  // namespace

AgentCounters ReadAgentCounters(const AgentParts& parts) {
  AgentCounters c;
  if (parts.statsd != nullptr) c.statsd = parts.statsd->counters();
  if (parts.bucketizer != nullptr) {
    c.bucketizer = parts.bucketizer->counters();
    c.pending_seconds = parts.bucketizer->pending_seconds();
  }
  if (parts.shipper != nullptr) {
    c.shipper = parts.shipper->TotalCounters();
    c.spool = parts.shipper->TotalSpoolCounters();
  }
  if (parts.proc != nullptr) c.proc = parts.proc->counters();
  if (parts.execs != nullptr) {
    for (const auto& e : *parts.execs) c.execs.emplace_back(e->spec().metric, e->counters());
  }
  if (parts.perf != nullptr) c.perf = parts.perf->stats();
  if (parts.folded != nullptr) c.folded = parts.folded->stats();
  if (parts.otlp != nullptr) c.otlp = parts.otlp->counters();
  if (parts.otlp_http != nullptr) c.otlp_http = parts.otlp_http->counters();
  if (parts.prom != nullptr) c.prom = parts.prom->Readings();
  if (Result<ProcessStats> p = ReadProcessStats(); p.ok()) c.process = *p;
  return c;
}

SelfReadings AgentReadings(const AgentCounters& c) {
  SelfReadings out;
  if (c.statsd) {
    AddFields(*c.statsd, kStatsd, "", &out);
    AddFields(c.statsd->scalars, kStatsdScalars, "", &out);
    for (size_t i = 0; i < kStatsdRejectClasses; ++i) {
      AddCounter(&out, "trailmap.agent.statsd.rejected", "lines/s",
                 "statsd lines refused, by reason", c.statsd->rejected_by_reason[i],
                 std::string("reason=") + StatsdRejectName(static_cast<StatsdReject>(i)));
    }
  }
  if (c.bucketizer) {
    AddFields(*c.bucketizer, kBucketizer, "", &out);
    AddGauge(&out, "trailmap.agent.seconds.pending", "seconds",
             "seconds held in the bucketizer, not yet shipped",
             static_cast<double>(c.pending_seconds));
  }
  if (c.shipper) AddFields(*c.shipper, kShipper, "", &out);
  if (c.spool) AddFields(*c.spool, kSpool, "", &out);
  if (c.proc) {
    AddFields(*c.proc, kProc, "", &out);
    AddGauge(&out, "trailmap.agent.proc.pass_time", "ns", "wall time of the last pass over /proc",
             static_cast<double>(c.proc->last_pass_us) * 1000);
  }
  for (const auto& [metric, x] : c.execs) {
    const std::string exec = "exec=" + metric;
    AddFields(x, kExec, exec, &out);
    for (size_t i = 0; i < kExecRejectClasses; ++i) {
      AddCounter(&out, "trailmap.agent.exec.rejected", "lines/s",
                 "exec output lines refused, by reason", x.rejected_by_reason[i],
                 exec + ",reason=" + ExecRejectName(static_cast<ExecReject>(i)));
    }
  }
  if (c.perf) AddFields(*c.perf, kPerf, "", &out);
  if (c.folded) AddFields(*c.folded, kFolded, "", &out);
  if (c.otlp) {
    AddFields(*c.otlp, kOtlp, "", &out);
    for (size_t i = 0; i < kOtlpRejectClasses; ++i) {
      AddCounter(&out, "trailmap.agent.otlp.rejected", "points/s",
                 "OTLP data points refused (named in partial_success), by reason",
                 c.otlp->rejected_by_reason[i],
                 std::string("reason=") + OtlpRejectName(static_cast<OtlpReject>(i)));
    }
  }
  if (c.otlp_http) {
    AddFields(*c.otlp_http, kOtlpHttp, "", &out);
    const std::pair<const char*, uint64_t> refused[] = {
        {"400", c.otlp_http->undecodable}, {"404", c.otlp_http->not_found},
        {"405", c.otlp_http->bad_method},  {"413", c.otlp_http->too_large},
        {"415", c.otlp_http->unsupported}, {"431", c.otlp_http->header_too_large}};
    for (const auto& [status, count] : refused) {
      AddCounter(&out, "trailmap.agent.otlp.refused", "requests/s",
                 "OTLP requests refused whole, by HTTP status", count,
                 std::string("status=") + status);
    }
  }
  out.insert(out.end(), c.prom.begin(), c.prom.end());
  if (c.process) AddProcessReadings("trailmap.agent", *c.process, &out);
  return out;
}

AgentSelfMetrics::AgentSelfMetrics(Bucketizer* into, AgentParts parts)
    : into_(into), parts_(parts) {}

bool AgentSelfMetrics::Tick(int64_t now_second) {
  if (now_second <= last_tick_) return false;
  last_tick_ = now_second;
  Record(now_second - 1, ReadAgentCounters(parts_));
  return true;
}

void AgentSelfMetrics::RecordAtExit(int64_t now_second,
                                    const std::optional<StatsdCounters>& stopped_statsd) {
  AgentParts parts = parts_;
  parts.statsd = nullptr;
  AgentCounters counters = ReadAgentCounters(parts);
  counters.statsd = stopped_statsd;
  Record(now_second, counters);
}

void AgentSelfMetrics::Record(int64_t second, const AgentCounters& counters) {
  const SelfReadings readings = AgentReadings(counters);
  const std::vector<double> values = deltas_.Take(readings);
  for (size_t i = 0; i < readings.size(); ++i)
    into_->SetScalar(second, readings[i].series, values[i]);
}

}  // namespace trailmap
