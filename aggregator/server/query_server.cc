#include "aggregator/server/query_server.h"

#include <chrono>
#include <thread>

#include "aggregator/scan/store_query.h"
#include "core/failpoint.h"
#include "core/log.h"

namespace trailmap::aggregator {
namespace {

RouterServer::Options RouterOptions(const QueryServerOptions& o) {
  RouterServer::Options r;
  r.name = "query";
  r.endpoint = o.endpoint;
  // A query is a few hundred bytes; its host list (--hosts) is the most it can carry: 4 MiB
  // holds ~100,000 names. Larger messages drop the connection. (Region -> code's queries carried
  // 16 bytes per selected host-second and needed 64 MiB until the aggregators found the
  // host-seconds themselves.)
  r.max_message_bytes = 4 << 20;
  r.workers = std::max<size_t>(o.workers, 1);
  r.curve_secret_key = o.curve_secret_key;
  r.zap_domain = "query";
  if (o.access != nullptr) r.monitor_endpoint = o.access->MonitorEndpoint(r.zap_domain);
  r.handshake_timeout = o.handshake_timeout;
  return r;
}

std::string_view MetricOf(const Query& query) {
  return query.kind == Query::Kind::kStacks ? query.stacks.metric : query.histograms.metric;
}

}  // namespace

QueryServer::QueryServer(zmq::context_t* context, const Store* store, QueryServerOptions options)
    : store_(store),
      options_(std::move(options)),
      router_(context, RouterOptions(options_),
              [this](const Result<std::string_view>& payload,
                     const RouterServer::Peer& peer) -> std::optional<std::string> {
                if (options_.access != nullptr) {
                  std::shared_ptr<const ClientKey> key = options_.access->Find(peer.key_name);
                  if (key == nullptr || !key->query) return Refuse(payload, peer, key.get());
                }
                return Reply(payload);
              }) {}

QueryServer::~QueryServer() { Stop(); }

Status QueryServer::Start() {
  stopping_ = false;
  return router_.Start();
}

void QueryServer::Stop() {
  stopping_ = true;  // before the router waits for its workers: their scans stop now
  router_.Stop();
}

std::string QueryServer::Refuse(const Result<std::string_view>& payload,
                                const RouterServer::Peer& peer, const ClientKey* key) const {
  Answer answer;
  answer.shard = options_.shard;
  answer.key_refused = true;
  answer.error = "key " + peer.key_name +
                 (key != nullptr ? " may only ingest, not query: give it the query right"
                                 : " is no longer listed: list it with the query right") +
                 " in the clients file of aggregator " + options_.shard;
  // The id, so the client takes the refusal as its answer.
  if (payload.ok()) answer.id = QueryIdOf(*payload);
  ++errors_;
  if (options_.latencies != nullptr) {
    options_.latencies->Record("invalid", std::chrono::nanoseconds(0));
  }
  return EncodeAnswer(answer);
}

std::string QueryServer::Reply(const Result<std::string_view>& payload) const {
  const auto arrived = std::chrono::steady_clock::now();
  if (!payload.ok()) {
    Answer answer;
    answer.shard = options_.shard;
    answer.error = payload.status().message();
    ++errors_;
    if (options_.latencies != nullptr) {
      options_.latencies->Record("invalid", std::chrono::nanoseconds(0));
    }
    return EncodeAnswer(answer);
  }
  QueryLimits limits = options_.limits;
  Answer answer = AnswerUnder(*payload, arrived, &limits);
  std::string bytes = EncodeAnswer(answer);
  if (answer.error.empty()) {
    // The answer's size is known only now; the limit is the one the query was answered under.
    const QueryBudget budget(limits, arrived);
    if (Status s = budget.CheckAnswerBytes(bytes.size()); !s.ok()) {
      Answer refused;
      refused.id = answer.id;
      refused.shard = answer.shard;
      refused.kind = answer.kind;
      refused.error = s.message();
      refused.over_budget = true;
      --answered_;
      ++errors_;
      ++over_budget_;
      Log("query: " + refused.error);
      bytes = EncodeAnswer(refused);
    }
  }
  if (options_.latencies != nullptr) {
    options_.latencies->Record(QueryLatencies::KindOf(answer),
                               std::chrono::steady_clock::now() - arrived);
  }
  return bytes;
}

Answer QueryServer::AnswerQuery(std::string_view bytes,
                                std::chrono::steady_clock::time_point arrived) const {
  QueryLimits limits;
  return AnswerUnder(bytes, arrived, &limits);
}

Answer QueryServer::AnswerUnder(std::string_view bytes, std::chrono::steady_clock::time_point arrived,
                                QueryLimits* limits) const {
  Answer answer;
  answer.shard = options_.shard;
  Result<Query> query = DecodeQuery(bytes);
  if (!query.ok()) {
    // With its id when one reads (0 otherwise): a fan-out takes only answers to its own query,
    // so an answer without the id would leave it waiting out its whole deadline.
    answer.id = QueryIdOf(bytes);
    answer.error = std::string(kBadQuery) + query.status().message();
    ++errors_;
    return answer;
  }
  *limits = query->limits.Within(options_.limits);
  QueryBudget budget(*limits, arrived, &stopping_);
  if (query->kind == Query::Kind::kStacks) budget.set_stack_query();
  answer = Run(*query, &budget);
  answer.shard = options_.shard;
  answer.id = query->id;
  answer.kind = query->kind;
  if (answer.error.empty()) {
    ++answered_;
    return answer;
  }
  ++errors_;
  answer.over_budget = answer.error.starts_with(kOverBudget);
  if (answer.over_budget) ++over_budget_;
  Log("query: " + std::string(MetricOf(*query)) + ": " + answer.error);
  return answer;
}

Answer QueryServer::Run(const Query& query, QueryBudget* budget) const {
  Answer answer;
  if (query.kind == Query::Kind::kMetrics) {
    answer.metrics = store_->Metrics();
    return answer;
  }
  if (query.kind == Query::Kind::kCompleteness) {
    answer.completeness = store_->HostsThrough(query.completeness);
    return answer;
  }
  if (query.kind == Query::Kind::kStatus) {
    answer.status = store_->Health();
    if (options_.add_status) options_.add_status(&answer.status);
    return answer;
  }
  // The system tests' slow query: held here as a long scan would be, watching its budget.
#ifdef TRAILMAP_FAILPOINTS
  const std::string hold = "query.hold." + std::string(MetricOf(query));
  if (FailpointFires(hold)) Log("query: failpoint " + hold + " holds a query");
  while (FailpointFires(hold)) {
    if (Status s = budget->Check(); !s.ok()) {
      answer.error = s.message();
      return answer;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
#endif
  if (query.kind == Query::Kind::kStacks) {
    Result<StackAnswer> stacks = QueryStacks(*store_, query.stacks, budget);
    if (!stacks.ok()) {
      answer.error = stacks.status().code() == Status::Code::kResourceExhausted
                         ? stacks.status().message()
                         : stacks.status().ToString();
      return answer;
    }
    answer.stacks = std::move(stacks).value();
    if (Status s = budget->CheckGroups(0); !s.ok()) answer.error = s.message();
    return answer;
  }
  const auto start = std::chrono::steady_clock::now();
  Result<HistogramAnswer> histograms = QueryHistograms(
      *store_, query.histograms, QueryPlan::kCoarsest, budget,
      /*pass_through=*/!query.histograms.summaries);  // summaries are read here, not sent
  if (!histograms.ok()) {
    answer.error = histograms.status().code() == Status::Code::kResourceExhausted
                       ? histograms.status().message()
                       : histograms.status().ToString();
    return answer;
  }
  answer.histograms = std::move(histograms).value();
  // The slices of a scan each checked their own groups; the answer joins them.
  if (Status s = budget->CheckGroups(answer.histograms.groups.size()); !s.ok()) {
    answer.histograms = {};
    answer.error = s.message();
    return answer;
  }
  // A summaries query on a histogram metric: the scalar scan answers in summaries itself.
  if (query.histograms.summaries && !answer.histograms.cells.empty()) {
    SummarizeCells(&answer.histograms);
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  if (ms >= 1000) {
    Log("query: slow: " + query.histograms.metric + " over " +
        std::to_string(query.histograms.to - query.histograms.from) + " s by '" +
        query.histograms.group_by + "': " + std::to_string(ms) + " ms, " +
        std::to_string(answer.histograms.cells.size()) + " cells");
  }
  return answer;
}

}  // namespace trailmap::aggregator
