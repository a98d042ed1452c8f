#include "aggregator/server/ingest_server.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <unordered_set>

#include "core/failpoint.h"
#include "core/log.h"

namespace trailmap::aggregator {
namespace {

RouterServer::Options RouterOptions(const IngestServerOptions& o) {
  RouterServer::Options r;
  r.name = "ingest";
  r.endpoint = o.endpoint;
  // A message somewhat over the batch limit is read and rejected with the reason (counted); one
  // far over it (an eighth, at least 1 MiB) is dropped by libzmq with its connection unread.
  r.max_message_bytes = static_cast<int64_t>(o.limits.max_bytes + OversizeMargin(o.limits));
  r.max_group = o.max_group;
  r.curve_secret_key = o.curve_secret_key;
  r.zap_domain = "ingest";
  if (o.access != nullptr) r.monitor_endpoint = o.access->MonitorEndpoint(r.zap_domain);
  r.handshake_timeout = o.handshake_timeout;
  // One applying thread: batches apply in the order they came; the socket's thread only reads,
  // so it answers "busy" at once when max_pending_bytes are held (see the header).
  r.workers = 1;
  r.max_queued = SIZE_MAX;  // bounded in bytes, not in messages
  r.max_queued_bytes = std::max<size_t>(o.max_pending_bytes, 1);
  r.receive_hwm = o.receive_hwm;
  return r;
}

std::string AckBytes(uint64_t sequence, Ack::Status status, std::string reason = "",
                     uint64_t expected = 0) {
  return EncodeAck(Ack{sequence, status, std::move(reason), expected});
}

// What `batch`'s content costs its agent's buckets (its envelope, batches and bytes, is charged
// before the decode); series new to the catalog are looked up only when that limit is on.
BatchCost ContentCost(const Batch& batch, const Store& store, const AgentLimits& limits) {
  BatchCost cost;
  for (const SecondDelta& second : batch.seconds) {
    cost.values += static_cast<double>(second.histograms.size() + second.scalars.size() +
                                       second.stacks.size());
  }
  cost.definitions = static_cast<double>(batch.frames.size() + batch.stacks.size());
  if (limits.new_series_per_minute > 0)
    cost.new_series = static_cast<double>(store.NewSeriesIn(batch));
  return cost;
}

}  // namespace

IngestServer::IngestServer(zmq::context_t* context, Store* store, IngestServerOptions options)
    : store_(store),
      options_(std::move(options)),
      router_(
          context,
          [this] {
            RouterServer::Options r = RouterOptions(options_);
            r.busy = [this](std::string_view payload, const RouterServer::Peer&) {
              return Busy(payload);
            };
            return r;
          }(),
          RouterServer::PeerGroupHandler(
              [this](const std::vector<Result<std::string_view>>& payloads,
                     const std::vector<RouterServer::Peer>& peers) {
                return HandleGroup(payloads, peers);
              }),
          [this] { MaybeLogSummary(); }),
      limiter_(options_.agent_limits),
      metric_quota_(options_.metric_quota) {}

IngestServer::~IngestServer() { Stop(); }

Status IngestServer::Start() {
  if (options_.access != nullptr) {
    for (const std::string& stored : store_->Agents()) {
      const size_t at = stored.rfind('@');
      if (at != std::string::npos && IsValidKeyName(stored.substr(at + 1))) {
        bound_.emplace(stored.substr(0, at), stored.substr(at + 1));
      }
    }
  }
  next_summary_ = std::chrono::steady_clock::now() + options_.summary_interval;
  reject_logs_left_ = options_.max_reject_logs;
  return router_.Start();
}

void IngestServer::Stop() { router_.Stop(); }

IngestCounters IngestServer::counters() const {
  return IngestCounters{applied_.load(),
                        duplicate_.load(),
                        out_of_order_.load(),
                        rejected_.load(),
                        failed_.load(),
                        bytes_.load(),
                        histogram_seconds_.load(),
                        need_dictionary_.load(),
                        stack_values_.load(),
                        refused_items_.load(),
                        refused_by_key_.load(),
                        rate_limited_.load(),
                        busy_.load(),
                        new_metrics_refused_.load()};
}

AgentRefusals IngestServer::RateLimited() const {
  std::lock_guard<std::mutex> lock(limiter_mu_);
  return limiter_.total();
}

std::vector<std::pair<std::string, AgentRefusals>> IngestServer::TopRateLimited(size_t n) const {
  std::lock_guard<std::mutex> lock(limiter_mu_);
  return limiter_.TopRefused(n);
}

std::optional<std::string> IngestServer::Busy(std::string_view payload) {
  ++busy_;
  std::string agent;
  uint64_t sequence = 0;
  if (!PeekBatchEnvelope(payload, options_.limits.max_text, &agent, &sequence)) sequence = 0;
  const std::string reason =
      "busy: the aggregator holds " + std::to_string(router_.queued_bytes()) +
      " bytes of received batches not yet applied, at most " +
      std::to_string(options_.max_pending_bytes) + " ([limits] max_pending_bytes); resend after " +
      std::to_string(options_.busy_retry_ms) + " ms";
  LogLimited("ingest: batch " + std::to_string(sequence) + " answered retryLater: " + reason);
  Ack ack{sequence, Ack::Status::kRetryLater, reason, 0};
  ack.retry_after_ms = options_.busy_retry_ms;
  return EncodeAck(ack);
}

std::optional<std::string> IngestServer::Limit(const std::string& agent, uint64_t sequence,
                                               const BatchCost& cost) {
  std::optional<LimitRefusal> refusal;
  {
    std::lock_guard<std::mutex> lock(limiter_mu_);
    refusal = limiter_.Admit(agent, cost, AgentLimiter::Clock::now());
  }
  if (!refusal) return std::nullopt;
  ++rate_limited_;
  LogLimited("ingest: batch " + std::to_string(sequence) +
             " answered retryLater: " + refusal->reason);
  Ack ack{sequence, Ack::Status::kRetryLater, std::move(refusal->reason), 0};
  ack.retry_after_ms = refusal->retry_after_ms;
  return EncodeAck(ack);
}

std::vector<std::optional<std::string>> IngestServer::HandleGroup(
    const std::vector<Result<std::string_view>>& payloads,
    const std::vector<RouterServer::Peer>& peers) {
  // One reply per request, in its place; a batch refused before the store (its key, a limit)
  // does not break the group commit of the batches around it.
  std::vector<std::optional<std::string>> replies(payloads.size());
  std::vector<Decoded> pending;
  for (size_t i = 0; i < payloads.size(); ++i) {
    const Result<std::string_view>& payload = payloads[i];
    if (!payload.ok()) {
      Commit(&pending, &replies);
      replies[i] = Reject("", 0, payload.status().message());
      continue;
    }
    bytes_ += payload->size();
    std::string agent;
    uint64_t sequence = 0;
    // The envelope's rates first, from what a peek reads: a flood costs no decoding.
    const bool limited = options_.agent_limits.any();
    if (limited && PeekBatchEnvelope(*payload, options_.limits.max_text, &agent, &sequence) &&
        sequence != 0) {
      if (options_.access != nullptr) agent += "@" + peers[i].key_name;
      const BatchCost envelope{.batches = 1, .bytes = static_cast<double>(payload->size())};
      if (std::optional<std::string> retry = Limit(agent, sequence, envelope)) {
        replies[i] = std::move(retry);
        continue;
      }
    }
    agent.clear();
    sequence = 0;
    Refusals refused;
    Result<Batch> batch = DecodeBatch(*payload, options_.limits, &agent, &sequence, &refused);
    if (TRAILMAP_FAILPOINT("ingest.unreadable")) {
      batch = Status::InvalidArgument("failpoint ingest.unreadable: taken as unreadable");
      agent.clear();
      sequence = 0;
    }
    if (!batch.ok()) {
      Commit(&pending, &replies);
      // Judged under the sender's own name for the agent id, so it moves no one else's watermark.
      if (!agent.empty() && sequence != 0) {
        if (std::string why = Authorize(peers[i], "", &agent, /*bind=*/false); !why.empty()) {
          replies[i] = RefuseForKey(agent, sequence, why);
          continue;
        }
      }
      replies[i] = Reject(agent, sequence, batch.status().message());
      continue;
    }
    if (std::string why = Authorize(peers[i], batch->host, &batch->agent, /*bind=*/true);
        !why.empty()) {
      replies[i] = RefuseForKey(batch->agent, batch->sequence, why);
      continue;
    }
    if (limited) {
      const BatchCost content = ContentCost(*batch, *store_, options_.agent_limits);
      if (std::optional<std::string> retry = Limit(batch->agent, batch->sequence, content)) {
        replies[i] = std::move(retry);
        continue;
      }
    }
    ChargeNewMetrics(peers[i], &*batch, &refused);
    pending.push_back({std::move(batch).value(), std::move(refused), i});
  }
  Commit(&pending, &replies);
  return replies;
}

void IngestServer::Commit(std::vector<Decoded>* pending,
                          std::vector<std::optional<std::string>>* replies) {
  if (pending->empty()) return;
  // Fault tests: a replica that falls behind (its batches neither applied nor acked, as when it
  // cannot write), so the agents keep them and the query must take its peer's answer.
  if (TRAILMAP_FAILPOINT("ingest.hold")) {
    for (size_t i = 0; i < pending->size(); ++i) replies->push_back(std::nullopt);
    pending->clear();
    return;
  }
  std::vector<const Batch*> group;
  group.reserve(pending->size());
  for (const Decoded& d : *pending) group.push_back(&d.batch);
  std::vector<Result<ApplyOutcome>> outcomes = store_->ApplyBatches(group);
  // Fault tests: written, not yet acked. A kill here must make the agent resend, and the
  // watermark must turn the resend into `duplicate` (counted once).
  if (TRAILMAP_FAILPOINT("ingest.after_write")) Log("ingest: failpoint ingest.after_write");
  for (size_t i = 0; i < pending->size(); ++i) {
    const Batch& batch = (*pending)[i].batch;
    const Refusals& refused = (*pending)[i].refused;
    std::optional<std::string>& reply = (*replies)[(*pending)[i].index];
    const Result<ApplyOutcome>& outcome = outcomes[i];
    if (!outcome.ok()) {
      if (outcome.status().code() == Status::Code::kInvalidArgument) {
        reply = Reject(batch.agent, batch.sequence, outcome.status().message());
        continue;
      }
      ++failed_;
      Log("ingest: batch " + std::to_string(batch.sequence) + " of " + batch.agent +
          " not written, not acked: " + outcome.status().ToString());
      reply = std::nullopt;
      continue;
    }
    Ack ack{batch.sequence, outcome->status};
    switch (outcome->status) {
      case Ack::Status::kApplied:
        ++applied_;
        histogram_seconds_ += outcome->histograms;
        stack_values_ += outcome->stack_values;
        ack.refused = refused;
        if (!refused.empty()) LogRefused(batch, refused);
        break;
      case Ack::Status::kDuplicate:
        ++duplicate_;
        ack.refused = refused;  // the same items as when it was applied: the agent may not know
        break;
      case Ack::Status::kNeedDictionary:
        ++need_dictionary_;
        ack.reason = outcome->reason;
        ack.expected = outcome->expected;
        break;
      case Ack::Status::kOutOfOrder:
      default:
        ++out_of_order_;
        ack.status = Ack::Status::kOutOfOrder;
        ack.reason = "expected sequence " + std::to_string(outcome->expected);
        ack.expected = outcome->expected;
        break;
    }
    reply = EncodeAck(ack);
  }
  pending->clear();
}

std::string IngestServer::Authorize(const RouterServer::Peer& peer, const std::string& host,
                                    std::string* agent, bool bind) {
  if (options_.access == nullptr) return "";
  std::shared_ptr<const ClientKey> key = options_.access->Find(peer.key_name);
  if (key == nullptr || !key->ingest) {
    return "key " + peer.key_name + " may not ingest: list it in the aggregator's clients file " +
           "with the ingest right";
  }
  if (!host.empty() && !key->MayWrite(host)) {
    std::string hosts;
    for (const std::string& h : key->hosts) hosts += (hosts.empty() ? "" : " ") + h;
    return "key " + key->name + " may not write host " + host + " (it may write: " + hosts + ")";
  }
  auto it = bound_.find(*agent);
  if (it != bound_.end() && it->second != key->name) {
    return "agent id " + *agent + " belongs to key " + it->second + "; key " + key->name +
           " may not send under it";
  }
  if (it == bound_.end() && bind) bound_.emplace(*agent, key->name);
  *agent += "@" + key->name;
  return "";
}

std::string IngestServer::RefuseForKey(const std::string& agent, uint64_t sequence,
                                       const std::string& reason) {
  ++refused_by_key_;
  LogLimited("ingest: refused batch " + std::to_string(sequence) + " of agent " + agent + ": " +
             reason);
  // Never `rejected`: the agent would drop it, and a key is the clients file's to fix.
  return AckBytes(sequence, Ack::Status::kUnauthorized, reason);
}

std::optional<std::string> IngestServer::Reject(const std::string& agent, uint64_t sequence,
                                                const std::string& reason) {
  // Without an agent id and sequence nothing can be judged: sequence 0, nothing moves.
  if (agent.empty() || sequence == 0) {
    ++rejected_;
    LogLimited("ingest: rejected batch 0 from an unreadable envelope: " + reason);
    return AckBytes(0, Ack::Status::kRejected, reason);
  }
  Result<ApplyOutcome> judged = store_->SkipRejected(agent, sequence);
  if (!judged.ok()) {
    ++failed_;
    Log("ingest: rejected batch " + std::to_string(sequence) + " of " + agent +
        " not judged, not acked: " + judged.status().ToString());
    return std::nullopt;
  }
  if (judged->status == Ack::Status::kOutOfOrder) {
    ++out_of_order_;
    return AckBytes(sequence, Ack::Status::kOutOfOrder,
                    "expected sequence " + std::to_string(judged->expected), judged->expected);
  }
  ++rejected_;
  LogLimited("ingest: rejected batch " + std::to_string(sequence) + " from agent " + agent + ": " +
             reason);
  return AckBytes(sequence, Ack::Status::kRejected, reason);
}

void IngestServer::ChargeNewMetrics(const RouterServer::Peer& peer, Batch* batch,
                                    Refusals* refused) {
  if (metric_quota_.options().new_metrics_per_day <= 0) return;
  std::vector<std::string> fresh;
  std::unordered_set<std::string_view> seen;
  for (const SeriesDef& def : batch->series) {
    if (!seen.insert(def.metric).second || store_->HasMetric(def.metric)) continue;
    fresh.push_back(def.metric);
  }
  if (fresh.empty()) return;
  const std::string key =
      options_.access != nullptr ? "key " + peer.key_name : "host " + batch->host;
  const std::vector<std::string> over = metric_quota_.Take(key, fresh, MetricQuota::Clock::now());
  if (over.empty()) return;
  const std::string quota =
      std::to_string(std::llround(metric_quota_.options().new_metrics_per_day));
  new_metrics_refused_ += DropMetrics(
      batch, over,
      [&](std::string_view metric) {
        return "metric " + std::string(metric) + " is new to the catalog and " + key +
               " created its " + quota +
               " new metrics of the last day ([limits] new_metrics_per_key)";
      },
      refused);
}

void IngestServer::LogRefused(const Batch& batch, const Refusals& refused) {
  refused_items_ += refused.total;
  std::string line = "ingest: batch " + std::to_string(batch.sequence) + " of " + batch.agent +
                     " applied without " + std::to_string(refused.total) + " refused item(s)";
  const size_t named = std::min<size_t>(refused.named.size(), 3);
  for (size_t i = 0; i < named; ++i) line += (i == 0 ? ": " : "; ") + refused.named[i].reason;
  if (refused.total > named) line += "; ...";
  LogLimited(line);
}

void IngestServer::LogLimited(const std::string& line) {
  std::lock_guard<std::mutex> lock(log_mu_);
  if (reject_logs_left_ > 0) {
    --reject_logs_left_;
    Log(line);
  } else {
    ++reject_logs_suppressed_;
  }
}

void IngestServer::MaybeLogSummary() {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(log_mu_);
  if (now < next_summary_) return;
  next_summary_ = now + options_.summary_interval;
  reject_logs_left_ = options_.max_reject_logs;
  const IngestCounters c = counters();
  if (c == last_summary_) return;
  const IngestCounters& p = last_summary_;
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(options_.summary_interval).count();
  std::string line =
      "ingest, last " + std::to_string(seconds) + " s: " + std::to_string(c.applied - p.applied) +
      " applied, " + std::to_string(c.duplicate - p.duplicate) + " duplicate, " +
      std::to_string(c.out_of_order - p.out_of_order) + " out of order, " +
      std::to_string(c.rejected - p.rejected) + " rejected, " +
      std::to_string(c.failed - p.failed) + " failed; " + std::to_string(c.bytes - p.bytes) +
      " bytes, " + std::to_string(c.histogram_seconds - p.histogram_seconds) +
      " histogram-seconds written";
  if (c.refused_by_key != p.refused_by_key) {
    line += ", " + std::to_string(c.refused_by_key - p.refused_by_key) +
            " batches refused for their key";
  }
  if (c.busy != p.busy) {
    line +=
        ", " + std::to_string(c.busy - p.busy) + " batches answered busy (max_pending_bytes held)";
  }
  if (c.rate_limited != p.rate_limited) {
    line += ", " + std::to_string(c.rate_limited - p.rate_limited) +
            " batches answered retryLater (agents over their [limits])";
  }
  if (c.refused_items != p.refused_items) {
    line += ", " + std::to_string(c.refused_items - p.refused_items) + " items refused";
  }
  if (c.stack_values != p.stack_values || c.need_dictionary != p.need_dictionary) {
    line += ", " + std::to_string(c.stack_values - p.stack_values) + " stack lists written, " +
            std::to_string(c.need_dictionary - p.need_dictionary) +
            " batches asked for stack definitions";
  }
  if (reject_logs_suppressed_ > 0) {
    line += "; " + std::to_string(reject_logs_suppressed_) + " rejections and refusals not logged";
    reject_logs_suppressed_ = 0;
  }
  Log(line);
  last_summary_ = c;
}

}  // namespace trailmap::aggregator
