#include "aggregator/query_server.h"

#include <chrono>

#include "core/log.h"

namespace trailmap::aggregator {
namespace {

RouterServer::Options RouterOptions(const QueryServerOptions& o) {
  RouterServer::Options r;
  r.name = "query";
  r.endpoint = o.endpoint;
  // A query is a few hundred bytes, but a weighted stack query (region -> code) carries 16 bytes
  // per host-second: up to kMaxStackWeights of them, 64 MiB. Larger messages drop the connection.
  r.max_message_bytes = 64 << 20;
  r.curve_secret_key = o.curve_secret_key;
  r.zap_domain = "query";
  return r;
}

}  // namespace

QueryServer::QueryServer(zmq::context_t* context, const Store* store, QueryServerOptions options)
    : store_(store),
      options_(std::move(options)),
      router_(context, RouterOptions(options_),
              [this](const Result<std::string_view>& payload,
                     const RouterServer::Peer& peer) -> std::optional<std::string> {
                std::string refusal;
                if (options_.access != nullptr) {
                  const ClientKey* key = options_.access->Find(peer.key_name);
                  if (key == nullptr || !key->query) {
                    refusal = "key " + peer.key_name +
                              " may not query this aggregator: list it in its clients file with "
                              "the query right";
                  }
                }
                if (!payload.ok() || !refusal.empty()) {
                  Answer answer;
                  answer.shard = options_.shard;
                  answer.error = refusal.empty() ? payload.status().message() : refusal;
                  if (!refusal.empty() && payload.ok()) {
                    // The id, so the client takes the refusal as its answer.
                    if (Result<Query> q = DecodeQuery(*payload); q.ok()) answer.id = q->id;
                  }
                  ++errors_;
                  if (options_.latencies != nullptr) {
                    options_.latencies->Record("invalid", std::chrono::nanoseconds(0));
                  }
                  return EncodeAnswer(answer);
                }
                const auto start = std::chrono::steady_clock::now();
                const Answer answer = AnswerQuery(*payload);
                std::string bytes = EncodeAnswer(answer);
                if (options_.latencies != nullptr) {
                  options_.latencies->Record(QueryLatencies::KindOf(answer),
                                             std::chrono::steady_clock::now() - start);
                }
                return bytes;
              }) {}

QueryServer::~QueryServer() { Stop(); }

Status QueryServer::Start() { return router_.Start(); }

void QueryServer::Stop() { router_.Stop(); }

Answer QueryServer::AnswerQuery(std::string_view bytes) const {
  Answer answer;
  answer.shard = options_.shard;
  Result<Query> query = DecodeQuery(bytes);
  if (!query.ok()) {
    answer.error = "bad query: " + query.status().message();
    ++errors_;
    return answer;
  }
  answer.id = query->id;
  answer.kind = query->kind;
  if (query->kind == Query::Kind::kMetrics) {
    answer.metrics = store_->Metrics();
    ++answered_;
    return answer;
  }
  if (query->kind == Query::Kind::kStatus) {
    answer.status = store_->Health();
    if (options_.add_status) options_.add_status(&answer.status);
    ++answered_;
    return answer;
  }
  if (query->kind == Query::Kind::kStacks) {
    Result<StackAnswer> stacks = store_->QueryStacks(query->stacks);
    if (!stacks.ok()) {
      answer.error = stacks.status().ToString();
      ++errors_;
      Log("query: stacks of " + query->stacks.metric + ": " + answer.error);
      return answer;
    }
    answer.stacks = std::move(stacks).value();
    ++answered_;
    return answer;
  }
  const auto start = std::chrono::steady_clock::now();
  Result<HistogramAnswer> histograms = store_->QueryHistograms(query->histograms);
  if (!histograms.ok()) {
    answer.error = histograms.status().ToString();
    ++errors_;
    Log("query: " + query->histograms.metric + ": " + answer.error);
    return answer;
  }
  answer.histograms = std::move(histograms).value();
  // A summaries query on a histogram metric: the scalar scan answers in summaries itself.
  if (query->histograms.summaries && !answer.histograms.cells.empty()) {
    SummarizeCells(&answer.histograms);
  }
  ++answered_;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  if (ms >= 1000) {
    Log("query: slow: " + query->histograms.metric + " over " +
        std::to_string(query->histograms.to - query->histograms.from) + " s by '" +
        query->histograms.group_by + "': " + std::to_string(ms) + " ms, " +
        std::to_string(answer.histograms.cells.size()) + " cells");
  }
  return answer;
}

}  // namespace trailmap::aggregator
