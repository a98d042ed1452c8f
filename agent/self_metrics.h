// AgentSelfMetrics: the agent measures itself. Once a second it reads the counters of every part
// that runs (statsd server, bucketizer, shipper, proc, exec, perf and folded sources) and of its
// own process, and records them as scalar metrics of its own host into its own bucketizer, so
// they ship in the same batches as everything else and trailmap draws them like any metric.
//
// Counters store what they gained since the previous reading (per second, the rate), gauges
// their value (core/self_metrics.h). The metrics, named trailmap.agent.* (the full list with
// units is in docs/ and in the tables of agent/self_metrics.cc):
//   statsd.packets, statsd.lines, statsd.values, statsd.unsupported, statsd.rejected{reason},
//   statsd.set_members_dropped, statsd.deltas_dropped, statsd.stale   the statsd port
//   events, events.overflow, events.late, scalars, scalars.overflow, scalars.bad,
//   stacks.samples, stacks.truncated, stacks.truncated_frames, seconds.pending   the bucketizer
//   batches.{sent,acked,duplicate,rejected,resent,dropped,out_of_order,need_dictionary,
//   retry_later},
//   reconnects, incarnations, stack_defs.sent, frame_defs.sent,
//   items.refused, batches.unreadable          the shippers (summed over the host's owners)
//   spool.{bytes,batches,appended,replayed,dropped.batches,dropped.bytes,
//   dropped.events,truncated_bytes,fsyncs}           the spool (summed over its segments)
//   proc.*, exec.*{exec}, perf.*, folded.*                                       each source
//   otlp.{requests,points,rejected{reason},no_value,baselines,resets,evicted,
//   refused{status},bytes,trims}                                                  OTLP/HTTP
//   prom.*                                       Prometheus remote write (prom_remote_write.cc)
//   process.rss, process.fds, process.cpu{mode}                                  the process
// A part that does not run publishes nothing.
//
// Timing: Tick(now) is called on every flush tick, before the caller ships the seconds before
// `now`; the first Tick of each new second records the readings into the second before it (the
// one just ended, which that same tick then ships). At exit, once every batch is acknowledged,
// RecordAtExit records the counters since the last tick (acks included) for one last batch.
//
// Thread safety: one thread calls Tick and RecordNow (the agent's main thread); the parts are
// read through their own thread-safe counters(). The bucketizer and the parts must outlive this.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ingest/bucketizer.h"
#include "agent/exec_source.h"
#include "agent/folded_source.h"
#include "agent/otlp_http.h"
#include "agent/perf_source.h"
#include "agent/proc_source.h"
#include "agent/prom_remote_write.h"
#include "ingest/replicated_shipper.h"
#include "agent/statsd_server.h"
#include "core/self_metrics.h"

namespace trailmap {

// The parts whose counters are read; nullptr = the part does not run. Not owned.
struct AgentParts {
  const Bucketizer* bucketizer = nullptr;
  const ReplicatedShipper* shipper = nullptr;  // summed over the owners it ships to
  const StatsdServer* statsd = nullptr;
  const ProcSource* proc = nullptr;
  const std::vector<std::unique_ptr<ExecSource>>* execs = nullptr;
  const PerfSource* perf = nullptr;
  const FoldedSource* folded = nullptr;
  const OtlpConverter* otlp = nullptr;
  const OtlpReceiver* otlp_http = nullptr;
  const PromWriteInput* prom = nullptr;
};

// One reading of every part's counters.
struct AgentCounters {
  std::optional<StatsdCounters> statsd;
  std::optional<BucketizerCounters> bucketizer;
  size_t pending_seconds = 0;  // the bucketizer's held seconds
  std::optional<ShipperCounters> shipper;
  std::optional<SpoolCounters> spool;
  std::optional<ProcCounters> proc;
  std::vector<std::pair<std::string, ExecCounters>> execs;  // by the exec's metric name
  std::optional<PerfSourceStats> perf;
  std::optional<FoldedSourceStats> folded;
  std::optional<OtlpCounters> otlp;
  std::optional<OtlpHttpCounters> otlp_http;
  SelfReadings prom;  // trailmap.agent.prom.* (agent/prom_remote_write.h); empty when off
  std::optional<ProcessStats> process;  // nullopt when /proc/self could not be read
};

AgentCounters ReadAgentCounters(const AgentParts& parts);
// Every trailmap.agent.* reading of `counters` (pure).
SelfReadings AgentReadings(const AgentCounters& counters);

class AgentSelfMetrics {
 public:
  // Records into `into` (the agent's own bucketizer) what it reads from `parts`.
  AgentSelfMetrics(Bucketizer* into, AgentParts parts);
  AgentSelfMetrics(const AgentSelfMetrics&) = delete;
  AgentSelfMetrics& operator=(const AgentSelfMetrics&) = delete;

  // See the header; returns whether it recorded.
  bool Tick(int64_t now_second);
  // Records the readings now into `now_second`, the statsd server's from `stopped_statsd` (at
  // exit the server is gone: main() keeps its final counters).
  void RecordAtExit(int64_t now_second, const std::optional<StatsdCounters>& stopped_statsd);
  // Records `counters` into `second` (the part of Tick and RecordAtExit that tests drive).
  void Record(int64_t second, const AgentCounters& counters);

 private:
  Bucketizer* const into_;
  const AgentParts parts_;
  CounterDeltas deltas_;
  int64_t last_tick_ = std::numeric_limits<int64_t>::min();
};

}  // namespace trailmap
