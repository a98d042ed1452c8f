#include "aggregator/ingest_server.h"

#include <algorithm>
#include <string>

#include "core/failpoint.h"
#include "core/log.h"

namespace trailmap::aggregator {
namespace {

RouterServer::Options RouterOptions(const IngestServerOptions& o) {
  RouterServer::Options r;
  r.name = "ingest";
  r.endpoint = o.endpoint;
  r.max_message_bytes = static_cast<int64_t>(o.limits.max_bytes) + (1 << 20);
  r.max_group = o.max_group;
  r.curve_secret_key = o.curve_secret_key;
  r.zap_domain = "ingest";
  return r;
}

std::string AckBytes(uint64_t sequence, Ack::Status status, std::string reason = "",
                     uint64_t expected = 0) {
  return EncodeAck(Ack{sequence, status, std::move(reason), expected});
}

}  // namespace

IngestServer::IngestServer(zmq::context_t* context, Store* store, IngestServerOptions options)
    : store_(store),
      options_(std::move(options)),
      router_(context, RouterOptions(options_),
              RouterServer::PeerGroupHandler(
                  [this](const std::vector<Result<std::string_view>>& payloads,
                         const std::vector<RouterServer::Peer>& peers) {
                    return HandleGroup(payloads, peers);
                  }),
              [this] { MaybeLogSummary(); }) {}

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
  return IngestCounters{applied_.load(),           duplicate_.load(),       out_of_order_.load(),
                        rejected_.load(),          failed_.load(),          bytes_.load(),
                        histogram_seconds_.load(), need_dictionary_.load(), stack_values_.load(),
                        refused_items_.load(),     refused_by_key_.load()};
}

std::vector<std::optional<std::string>> IngestServer::HandleGroup(
    const std::vector<Result<std::string_view>>& payloads,
    const std::vector<RouterServer::Peer>& peers) {
  std::vector<std::optional<std::string>> replies;
  replies.reserve(payloads.size());
  std::vector<Decoded> pending;
  for (size_t i = 0; i < payloads.size(); ++i) {
    const Result<std::string_view>& payload = payloads[i];
    if (!payload.ok()) {
      Commit(&pending, &replies);
      replies.push_back(Reject("", 0, payload.status().message()));
      continue;
    }
    bytes_ += payload->size();
    std::string agent;
    uint64_t sequence = 0;
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
          replies.push_back(RefuseForKey(agent, sequence, why));
          continue;
        }
      }
      replies.push_back(Reject(agent, sequence, batch.status().message()));
      continue;
    }
    if (std::string why = Authorize(peers[i], batch->host, &batch->agent, /*bind=*/true);
        !why.empty()) {
      Commit(&pending, &replies);
      replies.push_back(RefuseForKey(batch->agent, batch->sequence, why));
      continue;
    }
    pending.push_back({std::move(batch).value(), std::move(refused)});
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
    const Result<ApplyOutcome>& outcome = outcomes[i];
    if (!outcome.ok()) {
      if (outcome.status().code() == Status::Code::kInvalidArgument) {
        replies->push_back(Reject(batch.agent, batch.sequence, outcome.status().message()));
        continue;
      }
      ++failed_;
      Log("ingest: batch " + std::to_string(batch.sequence) + " of " + batch.agent +
          " not written, not acked: " + outcome.status().ToString());
      replies->push_back(std::nullopt);
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
    replies->push_back(EncodeAck(ack));
  }
  pending->clear();
}

std::string IngestServer::Authorize(const RouterServer::Peer& peer, const std::string& host,
                                    std::string* agent, bool bind) {
  if (options_.access == nullptr) return "";
  const ClientKey* key = options_.access->Find(peer.key_name);
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
  return AckBytes(sequence, Ack::Status::kRejected, reason);
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
  if (reject_logs_left_ > 0) {
    --reject_logs_left_;
    Log(line);
  } else {
    ++reject_logs_suppressed_;
  }
}

void IngestServer::MaybeLogSummary() {
  const auto now = std::chrono::steady_clock::now();
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
