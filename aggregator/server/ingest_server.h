// IngestServer: receives agents' batches on a ZeroMQ ROUTER socket (schemas/ingest.capnp) and
// applies them to the Store exactly once, acking each one after its write.
//
// For every message: DecodeBatch with the limits. A batch that cannot be read is judged by the
// rules of schemas/ingest.capnp ("Rejection", Store::SkipRejected): acked `rejected` with the
// reason (the watermark moving past it when it was the one expected next), or `outOfOrder` when
// it comes past a gap, or `rejected` with sequence 0 when its envelope cannot be read. A batch
// that can be read goes to Store::ApplyBatches without its bad items, and is acked `applied`
// (naming the items refused), `duplicate`, `outOfOrder` (with `expected`), or `needDictionary`
// when it uses a stack the store has no definition of. When the store cannot write, no ack is
// sent: the agent resends after its timeout.
// Rejections and batches applied with refused items are logged one line each (agent and
// reason), at most `max_reject_logs` lines per summary interval; a summary line of the counters
// is logged every interval when they changed.
// Failpoints (test builds): "ingest.unreadable" takes a message as unreadable (sequence 0);
// "ingest.hold" neither applies nor acks the batches it is reached for (a replica behind).
//
// Identity (with CURVE, options.access set): every connection carries its client key's name
// (RouterServer::Peer, from the ZAP handler). A batch is refused — acked `unauthorized` with the
// reason, counted in `refused_by_key`, and NO watermark moves — when its key may not ingest, when
// its host is not one the key may write, or when its agent id is bound to another key. The agent
// holds such a batch and retries it (schemas/ingest.capnp, "Keys"): a clients file reloaded by
// mistake delays data, it never loses it. An agent
// id is bound to the first key that sends under it, and the store keeps its watermark under
// "AGENT@KEY": so a forged agent id can neither move the real agent's watermark nor, after a
// restart, take over its id (the bindings are rebuilt from the watermarks' names at start).
// Plaintext (access nullptr): no checks, agent ids as sent.
//
// Limits (agent_limits.h): a batch is charged to its agent id's buckets (with CURVE the id under
// its connection's key, "AGENT@KEY") in two parts: batches and bytes from its envelope, read
// without decoding it, then, once decoded and past its key's checks, values, definitions and
// series new to the catalog. Over one,
// it is answered `retryLater` with the reason and the wait (schemas/ingest.capnp, "Limits"),
// counted in `rate_limited` and per agent (TopRateLimited), and nothing moves: it never reaches
// the store, so neither its data nor its stack definitions are taken.
//
// Memory (docs/limits.md, "Bounded ingest"): the socket's thread only reads messages and queues them for
// one applying thread (RouterServer workers = 1, so batches are applied in the order they came,
// up to max_group at a time). The bytes of messages received and not yet applied are bounded by
// max_pending_bytes (plus one message): past it a batch is answered at once `retryLater` with
// "busy" and busy_retry_ms, counted in `busy`, and its bytes freed, so senders back off and
// nothing queues without bound. ZeroMQ queues at most receive_hwm messages per connection
// behind that (then TCP holds the sender). Connections are not capped here yet (the file
// descriptor limit is the cap).
//
// Thread safety: Start/Stop from the owning thread; counters() from any thread. The Store and the
// zmq::context_t must outlive the server.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "aggregator/server/agent_limits.h"
#include "aggregator/server/metric_quota.h"
#include "aggregator/server/router_server.h"
#include "aggregator/store/store.h"
#include "aggregator/server/zap_handler.h"
#include "core/batch.h"
#include "core/status.h"

namespace trailmap::aggregator {

// How far over BatchLimits::max_bytes a message is still read (and rejected with the reason):
// an eighth of it, at least 1 MiB (36 MiB of a 32 MiB limit).
inline size_t OversizeMargin(const BatchLimits& limits) {
  return std::max<size_t>(size_t{1} << 20, limits.max_bytes / 8);
}

struct IngestServerOptions {
  std::string endpoint = "tcp://127.0.0.1:7400";
  // Checked on every batch. A message over limits.max_bytes is rejected with the reason, or,
  // past OversizeMargin more, its connection is dropped unread (ZMQ_MAXMSGSIZE).
  BatchLimits limits;
  std::chrono::milliseconds summary_interval{10'000};
  int max_reject_logs = 10;  // rejection and refusal lines per summary interval; the rest counted
  // Batches already waiting that are written together, with one WAL fsync (group commit).
  // 1 writes (and fsyncs) every batch alone; 64 took ingest on a 2-core box from 57k to over
  // 100k acknowledged histogram-seconds/s (docs/BENCHMARKS.md).
  size_t max_group = 64;
  // CURVE: the socket's secret key (Z85) and the ZAP handler whose clients list says what each
  // key may write. ""/nullptr: plaintext, no identity checks. Not owned; must outlive the server.
  std::string curve_secret_key;
  const ZapHandler* access = nullptr;
  AgentLimits agent_limits;  // per agent id (agent_limits.h); AgentLimits{} has the defaults
  // Received, unapplied message bytes held at most (plus one message); then "busy".
  size_t max_pending_bytes = size_t{256} << 20;
  uint32_t busy_retry_ms = 200;  // the wait a "busy" retryLater asks for
  int receive_hwm = 64;          // messages ZeroMQ queues per connection before TCP holds back
  // [limits] handshake_timeout (RouterServer::Options::handshake_timeout).
  std::chrono::milliseconds handshake_timeout{10'000};
  // Metric names new to the catalog each key may create (metric_quota.h): past the quota a batch
  // applies without the series of its further new names, refused as items.
  MetricQuotaOptions metric_quota;
};

// Totals since Start.
struct IngestCounters {
  uint64_t applied = 0;
  uint64_t duplicate = 0;
  uint64_t out_of_order = 0;
  uint64_t rejected = 0;
  uint64_t failed = 0;             // store write errors (not acked)
  uint64_t bytes = 0;              // payload bytes received
  uint64_t histogram_seconds = 0;  // histogram deltas written
  uint64_t need_dictionary = 0;    // batches answered needDictionary (stack definitions missing)
  uint64_t stack_values = 0;       // (second, series) stack count lists written
  uint64_t refused_items = 0;      // items left out of applied batches (schemas/ingest.capnp)
  uint64_t refused_by_key = 0;     // batches refused for their key: host, agent id or right
  uint64_t rate_limited = 0;       // batches answered retryLater: their agent was over a limit
  uint64_t busy = 0;               // batches answered retryLater: max_pending_bytes were held
  uint64_t new_metrics_refused = 0;  // series definitions refused: their key's metric quota
  bool operator==(const IngestCounters&) const = default;
};

class IngestServer {
 public:
  IngestServer(zmq::context_t* context, Store* store, IngestServerOptions options = {});
  ~IngestServer();

  Status Start();
  void Stop();
  const std::string& endpoint() const { return router_.endpoint(); }
  IngestCounters counters() const;
  // Batches answered retryLater for a per-agent limit: by limit in total, and the `n` agents
  // refused most. Any thread.
  AgentRefusals RateLimited() const;
  std::vector<std::pair<std::string, AgentRefusals>> TopRateLimited(size_t n) const;
  // Received, unapplied bytes held now. Any thread.
  size_t pending_bytes() const { return router_.queued_bytes(); }
  // Exceptions its socket's and applying threads caught and logged (RouterServer). Any thread.
  uint64_t thread_failures() const { return router_.thread_failures(); }

 private:
  // The messages that were waiting, in order: decoded, then the good ones applied with one
  // write (group commit); a rejected one in between first commits the group before it, so the
  // watermark it may move is the one those batches left.
  std::vector<std::optional<std::string>> HandleGroup(
      const std::vector<Result<std::string_view>>& payloads,
      const std::vector<RouterServer::Peer>& peers);
  // With CURVE: "" when `peer` may send this batch (then *agent is the id the store keeps it
  // under, "AGENT@KEY", and the id is bound to the key), else why not. `host` "" skips the host
  // check (a batch that could not be read).
  std::string Authorize(const RouterServer::Peer& peer, const std::string& host, std::string* agent,
                        bool bind);
  struct Decoded {
    Batch batch;       // without its bad items
    Refusals refused;  // the items left out
    size_t index = 0;  // its request's place in the group
  };
  // nullopt when `cost` is within `agent`'s limits (then charged), else the retryLater ack of
  // batch `sequence`.
  std::optional<std::string> Limit(const std::string& agent, uint64_t sequence,
                                   const BatchCost& cost);
  // Applies the pending group and appends its acks to `replies`.
  void Commit(std::vector<Decoded>* pending, std::vector<std::optional<std::string>>* replies);
  // The answer to a batch that cannot be read (nullopt: the watermark could not be written).
  std::optional<std::string> Reject(const std::string& agent, uint64_t sequence,
                                    const std::string& reason);
  // The ack of a batch refused for its key (counted, logged, nothing moves).
  std::string RefuseForKey(const std::string& agent, uint64_t sequence, const std::string& reason);
  // Leaves out of `batch` the series of metric names new to the catalog past the quota of its
  // key (metric_quota.h), adding them and their items to `refused`. Applying thread.
  void ChargeNewMetrics(const RouterServer::Peer& peer, Batch* batch, Refusals* refused);
  // Counts an applied batch's refused items and logs them (rate-limited).
  void LogRefused(const Batch& batch, const Refusals& refused);
  // The retryLater of a batch that finds max_pending_bytes held (socket thread).
  std::optional<std::string> Busy(std::string_view payload);
  // Logs `line` unless this interval's max_reject_logs are spent (then only counts it).
  void LogLimited(const std::string& line);
  void MaybeLogSummary();

  Store* store_;
  const IngestServerOptions options_;
  RouterServer router_;

  std::atomic<uint64_t> applied_{0}, duplicate_{0}, out_of_order_{0}, rejected_{0}, failed_{0};
  std::atomic<uint64_t> bytes_{0}, histogram_seconds_{0}, need_dictionary_{0}, stack_values_{0};
  std::atomic<uint64_t> refused_items_{0}, refused_by_key_{0}, rate_limited_{0}, busy_{0};
  std::atomic<uint64_t> new_metrics_refused_{0};
  mutable std::mutex limiter_mu_;  // the limiter is charged on the server thread, read by any
  AgentLimiter limiter_;           // guarded by limiter_mu_
  MetricQuota metric_quota_;       // the applying thread only
  // The applying thread only.
  std::unordered_map<std::string, std::string> bound_;  // agent id -> key name (with CURVE)
  // The log budget and summary: the applying thread, the socket's (busy, tick).
  std::mutex log_mu_;
  IngestCounters last_summary_;
  std::chrono::steady_clock::time_point next_summary_;
  int reject_logs_left_ = 0;
  uint64_t reject_logs_suppressed_ = 0;
};

}  // namespace trailmap::aggregator
