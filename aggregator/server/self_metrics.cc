#include "aggregator/server/self_metrics.h"

#include "aggregator/store/periodic_thread.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/prometheus_text.h"

namespace trailmap::aggregator {
namespace {

// The counters as metrics (core/self_metrics.h): adding a metric is one line here. Every
// reading gets the shard field at the end (AggregatorReadings).
constexpr CounterField<IngestCounters> kIngest[] = {
    {"trailmap.aggregator.ingest.batches", true, "batches/s", "agent batches applied",
     &IngestCounters::applied},
    {"trailmap.aggregator.ingest.duplicate", true, "batches/s",
     "agent batches already applied (a resend), acked duplicate", &IngestCounters::duplicate},
    {"trailmap.aggregator.ingest.out_of_order", true, "batches/s",
     "agent batches past a gap in their sequence, acked outOfOrder", &IngestCounters::out_of_order},
    {"trailmap.aggregator.ingest.rejected", true, "batches/s",
     "agent batches refused as malformed (their data is lost)", &IngestCounters::rejected},
    {"trailmap.aggregator.ingest.failed", true, "batches/s",
     "agent batches the store could not write (not acked; the agent resends)",
     &IngestCounters::failed},
    {"trailmap.aggregator.ingest.need_dictionary", true, "batches/s",
     "agent batches using a stack the store has no definition of",
     &IngestCounters::need_dictionary},
    {"trailmap.aggregator.ingest.refused_by_key", true, "batches/s",
     "agent batches refused for their CURVE key: a host or agent id not its own, or no ingest "
     "right (nothing moved)",
     &IngestCounters::refused_by_key},
    {"trailmap.aggregator.ingest.rate_limited", true, "batches/s",
     "agent batches answered retryLater: their agent was over one of its [limits] rates (nothing "
     "moved; the agent resends after the wait)",
     &IngestCounters::rate_limited},
    {"trailmap.aggregator.ingest.busy", true, "batches/s",
     "agent batches answered retryLater because [limits] max_pending_bytes of received batches "
     "were waiting to be applied",
     &IngestCounters::busy},
    {"trailmap.aggregator.ingest.new_metrics_refused", true, "series/s",
     "series definitions refused as items: their metric was new to the catalog and their key "
     "past [limits] new_metrics_per_key (the rest of each batch applied)",
     &IngestCounters::new_metrics_refused},
    {"trailmap.aggregator.ingest.bytes", true, "B/s", "batch bytes received",
     &IngestCounters::bytes},
    {"trailmap.aggregator.ingest.histograms", true, "histograms/s",
     "histogram deltas written (host-series-seconds)", &IngestCounters::histogram_seconds},
    {"trailmap.aggregator.ingest.stack_values", true, "values/s",
     "(second, series) stack count lists written", &IngestCounters::stack_values},
};

constexpr CounterField<RocksDbStats> kRocksDb[] = {
    {"trailmap.aggregator.rocksdb.pending_compaction_bytes", false, "B",
     "bytes RocksDB estimates compaction still has to rewrite",
     &RocksDbStats::pending_compaction_bytes},
    {"trailmap.aggregator.rocksdb.running_compactions", false, "compactions",
     "RocksDB compactions running", &RocksDbStats::running_compactions},
    {"trailmap.aggregator.rocksdb.running_flushes", false, "flushes", "RocksDB flushes running",
     &RocksDbStats::running_flushes},
    {"trailmap.aggregator.rocksdb.memtable_bytes", false, "B", "bytes in RocksDB memtables",
     &RocksDbStats::memtable_bytes},
    {"trailmap.aggregator.rocksdb.live_sst_bytes", false, "B",
     "bytes of the SST files the database uses", &RocksDbStats::live_sst_bytes},
    {"trailmap.aggregator.rocksdb.block_cache_bytes", false, "B",
     "bytes held in RocksDB's block cache", &RocksDbStats::block_cache_bytes},
    {"trailmap.aggregator.rocksdb.table_reader_bytes", false, "B",
     "bytes of index and filter blocks RocksDB holds", &RocksDbStats::table_reader_bytes},
    {"trailmap.aggregator.rocksdb.background_errors", true, "errors/s",
     "RocksDB background errors (flush or compaction failed)", &RocksDbStats::background_errors},
};

constexpr const char* kLatencyMetric = "trailmap.aggregator.query.latency";
constexpr const char* kLatencyDescription =
    "time to answer a query, from its arrival to its encoded answer, by kind of query";

// `a` and `b` (canonical field sets without a common key) as one canonical field set.
std::string Joined(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return a.empty() ? b : a;
  Result<FieldSet> fa = ParseFields(a), fb = ParseFields(b);
  if (!fa.ok() || !fb.ok()) return a;
  fa->insert(fa->end(), fb->begin(), fb->end());
  Result<std::string> joined = CanonicalFields(std::move(*fa));
  return joined.ok() ? *joined : a;
}

// "shard=NAME", or "" when NAME is empty or not a valid field value.
std::string ShardFields(const std::string& shard) {
  if (shard.empty()) return "";
  Result<std::string> f = CanonicalFields({{"shard", shard}});
  return f.ok() ? *f : "";
}

}  // namespace

SelfReadings AggregatorReadings(const AggregatorCounters& c, const std::string& fields) {
  SelfReadings out;
  if (c.ingest) AddFields(*c.ingest, kIngest, "", &out);
  if (c.queries_answered) {
    AddCounter(&out, "trailmap.aggregator.query.answered", "queries/s", "queries answered",
               *c.queries_answered);
  }
  if (c.query_errors) {
    AddCounter(&out, "trailmap.aggregator.query.errors", "queries/s",
               "queries answered with an error", *c.query_errors);
  }
  if (c.queries_over_budget) {
    AddCounter(&out, "trailmap.aggregator.query.over_budget", "queries/s",
               "queries stopped past their deadline or a cost limit ([queries]; counted in "
               "query.errors too)",
               *c.queries_over_budget);
  }
  if (c.rocksdb) {
    AddFields(*c.rocksdb, kRocksDb, "", &out);
    AddGauge(&out, "trailmap.aggregator.rollups.pending", "minutes",
             "minutes whose 10 s and 60 s rollups are behind",
             static_cast<double>(c.pending_rollups));
    AddGauge(&out, "trailmap.aggregator.rollups.pending_blocks", "blocks",
             "10-minute blocks whose 600 s rollups are behind",
             static_cast<double>(c.pending_blocks));
    AddGauge(&out, "trailmap.aggregator.aggregates.backfill_pending", "minutes",
             "minutes of hist whose pre-aggregates are still to backfill "
             "(aggregator/store/aggregates_backfill.h)",
             static_cast<double>(c.backfill_pending));
    AddCounter(&out, "trailmap.aggregator.merges.saturated", "merges/s",
               "merges that cut a count at 2^62 instead of failing (core/counts.h)",
               c.saturated_merges);
    AddCounter(&out, "trailmap.aggregator.threads.failed", "exceptions/s",
               "exceptions caught at a thread's boundary (logged; the thread goes on)",
               c.thread_failures);
  }
  if (c.health) {
    AddCounter(&out, "trailmap.aggregator.rollups.failed", "minutes/s",
               "rollup minutes that failed and will be retried", c.health->rollup_failures);
    AddCounter(&out, "trailmap.aggregator.agents.pruned", "agents/s",
               "watermarks of long-idle agents deleted", c.health->agents_pruned);
    AddGauge(&out, "trailmap.aggregator.agents", "agents", "agents with a watermark",
             static_cast<double>(c.health->agents));
    AddGauge(&out, "trailmap.aggregator.store.error", "errors",
             "1 while a RocksDB background error or a full disk stops writes",
             c.health->background_error.empty() ? 0.0 : 1.0);
  }
  if (c.connections) {
    for (auto [socket, count] :
         {std::pair{"ingest", c.connections->ingest}, {"query", c.connections->query}}) {
      AddGauge(&out, "trailmap.aggregator.connections", "connections",
               "CURVE connections admitted now, by socket (at most [limits] max_connections each)",
               static_cast<double>(count), std::string("socket=") + socket);
    }
    for (auto [reason, total] : {std::pair{"cap", c.connections->refused_at_cap},
                                 {"unlisted", c.connections->refused_unlisted},
                                 {"handshake", c.connections->failed_handshakes}}) {
      AddCounter(&out, "trailmap.aggregator.connections.refused", "connections/s",
                 "connections refused: a key not in the clients file (unlisted), a listed one "
                 "past [limits] max_connections (cap), or a handshake that failed: not ZMTP, not "
                 "CURVE, malformed, or silent past [limits] handshake_timeout (handshake)",
                 total, std::string("reason=") + reason);
    }
    AddCounter(&out, "trailmap.aggregator.clients.reloads_refused", "reloads/s",
               "clients files refused on SIGHUP (unreadable, or listing no key without saying so; "
               "the keys were kept)",
               c.connections->reloads_refused);
  }
  if (c.process) AddProcessReadings("trailmap.aggregator", *c.process, &out);
  for (SelfReading& r : out) r.series.fields = Joined(r.series.fields, fields);
  return out;
}

uint32_t AggregatorSelfMetrics::Pending::SeriesOf(const SeriesDef& def) {
  std::string key = def.metric;
  key.push_back('\0');
  key += def.fields;
  auto [it, added] = index.try_emplace(std::move(key), static_cast<uint32_t>(series.size()));
  if (added) series.push_back(def);
  return it->second;
}

AggregatorSelfMetrics::AggregatorSelfMetrics(AggregatorParts parts,
                                             AggregatorSelfMetricsOptions options)
    : parts_(parts),
      options_(std::move(options)),
      agent_id_(options_.host + "/aggregator"),
      fields_(ShardFields(options_.shard)),
      next_sequence_(parts_.store->Watermark(agent_id_) + 1) {}

AggregatorSelfMetrics::~AggregatorSelfMetrics() { Stop(); }

void AggregatorSelfMetrics::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void AggregatorSelfMetrics::Stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AggregatorSelfMetrics::Run() {
  // Wake `offset` after each second begins (by the system clock), publish the second just ended.
  std::unique_lock<std::mutex> lock(stop_mu_);
  while (!stopping_) {
    const auto now = std::chrono::system_clock::now();
    const auto next =
        std::chrono::floor<std::chrono::seconds>(now) + std::chrono::seconds(1) + options_.offset;
    if (stop_cv_.wait_until(lock, next, [this] { return stopping_; })) break;
    lock.unlock();
    const int64_t second = options_.clock ? options_.clock() : UnixSecondsNow();
    // Publish logs its own failures; an exception is caught here, logged and counted.
    RunCaught("self-metrics", &thread_failures_, [this, second] { Publish(second - 1); });
    lock.lock();
  }
}

AggregatorCounters ReadAggregatorCounters(const AggregatorParts& parts) {
  AggregatorCounters c;
  if (parts.ingest != nullptr) c.ingest = parts.ingest->counters();
  if (parts.query != nullptr) {
    c.queries_answered = parts.query->answered();
    c.query_errors = parts.query->errors();
    c.queries_over_budget = parts.query->over_budget();
  }
  c.rocksdb = parts.store->RocksDbProperties();
  c.pending_rollups = parts.store->PendingRollups();
  c.pending_blocks = parts.store->PendingBlocks();
  c.backfill_pending = parts.store->BackfillMinutesLeft();
  c.saturated_merges = parts.store->SaturatedMerges();
  c.thread_failures = parts.store->ThreadFailures();
  if (parts.ingest != nullptr) c.thread_failures += parts.ingest->thread_failures();
  if (parts.query != nullptr) c.thread_failures += parts.query->thread_failures();
  if (parts.zap != nullptr) c.thread_failures += parts.zap->thread_failures();
  c.health = parts.store->Health();
  if (Result<ProcessStats> p = ReadProcessStats(); p.ok()) c.process = *p;
  if (parts.zap != nullptr) {
    const ZapCounters z = parts.zap->counters();
    c.connections = ConnectionCounts{parts.zap->connections("ingest"),
                                     parts.zap->connections("query"), z.refused, z.refused_at_cap,
                                     z.failed_handshakes, z.reloads_refused};
  }
  return c;
}

std::string AggregatorPrometheusText(const AggregatorParts& parts, const std::string& shard) {
  const std::string fields = ShardFields(shard);
  LatencyReadings latencies;
  if (parts.latencies != nullptr) {
    for (auto& [kind, buckets] : parts.latencies->Totals()) {
      latencies.push_back(LatencyReading{kLatencyMetric, Joined("kind=" + kind, fields),
                                         kLatencyDescription, std::move(buckets)});
    }
  }
  return FormatPrometheusText(AggregatorReadings(ReadAggregatorCounters(parts), fields), latencies);
}

Result<ApplyOutcome> AggregatorSelfMetrics::Publish(int64_t second) {
  AggregatorCounters counters = ReadAggregatorCounters(parts_);
  counters.thread_failures += thread_failures_.load(std::memory_order_relaxed);
  return Publish(second, counters);
}

Result<ApplyOutcome> AggregatorSelfMetrics::Publish(int64_t second,
                                                    const AggregatorCounters& counters) {
  const SelfReadings readings = AggregatorReadings(counters, fields_);
  const std::vector<double> values = deltas_.Take(readings);
  SecondDelta& now = pending_.seconds[second];
  now.time = second;
  for (size_t i = 0; i < readings.size(); ++i) {
    now.scalars.push_back(ScalarValue{pending_.SeriesOf(readings[i].series), values[i]});
  }
  if (parts_.latencies != nullptr) {
    for (QueryLatencies::Second& l : parts_.latencies->TakeBefore(second + 1)) {
      const SeriesDef def{kLatencyMetric, MetricKind::kLatency, "ns",
                          Joined("kind=" + l.kind, fields_), kLatencyDescription};
      SecondDelta& s = pending_.seconds[l.time];
      s.time = l.time;
      s.histograms.push_back(HistogramDelta{pending_.SeriesOf(def), l.latencies.Encode()});
    }
  }
  while (pending_.seconds.size() > options_.max_unapplied_seconds) {
    pending_.seconds.erase(pending_.seconds.begin());
    ++dropped_seconds_;
  }

  Batch batch;
  batch.agent = agent_id_;
  batch.host = options_.host;
  if (std::optional<std::string> labels = parts_.store->HostLabels(options_.host)) {
    if (Result<FieldSet> parsed = ParseFields(*labels); parsed.ok()) batch.labels = *parsed;
  }
  batch.series = pending_.series;
  for (const auto& [time, s] : pending_.seconds) batch.seconds.push_back(s);
  batch.sent_at_ms = UnixMillisNow();
  Result<ApplyOutcome> outcome = Status::Unavailable("not applied");
  for (int attempt = 0; attempt < 2; ++attempt) {
    batch.sequence = next_sequence_;
    outcome = parts_.store->ApplyBatch(batch);
    if (!outcome.ok()) break;
    next_sequence_ = outcome->expected;  // after kApplied: the next; else where the store is
    if (outcome->status == Ack::Status::kApplied) break;
  }
  if (outcome.ok() && outcome->status == Ack::Status::kApplied) {
    if (failing_) Log("self-metrics: writing again");
    failing_ = false;
    pending_ = Pending{};
    return outcome;
  }
  if (!failing_) {
    Log("self-metrics: cannot write second " + std::to_string(second) + " (kept for the next " +
        "try, at most " + std::to_string(options_.max_unapplied_seconds) + " s): " +
        (outcome.ok() ? std::string(AckStatusName(outcome->status)) + " " + outcome->reason
                      : outcome.status().ToString()));
  }
  failing_ = true;
  if (outcome.ok())
    return Status::Unavailable(std::string("self-metrics batch ") + AckStatusName(outcome->status));
  return outcome;
}

}  // namespace trailmap::aggregator
