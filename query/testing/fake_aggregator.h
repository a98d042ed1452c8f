// A fake aggregator for the fan-out and CLI tests: a ROUTER socket on a free loopback port that
// answers each query with a canned answer (or, when `silent`, never answers); a completeness
// query (a replicated query's first question) with no host behind.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "core/query_wire.h"

namespace trailmap::testing {

class FakeAggregator {
 public:
  // `answer` is sent back with the query's id; `silent` receives queries and drops them.
  FakeAggregator(zmq::context_t& context, Answer answer, bool silent = false)
      : FakeAggregator(
            context, [answer = std::move(answer)](const Query&) { return answer; }, silent) {}
  // Answers each query with respond(query) (runs on the fake's own thread).
  FakeAggregator(zmq::context_t& context, std::function<Answer(const Query&)> respond,
                 bool silent = false)
      : socket_(context, zmq::socket_type::router), respond_(std::move(respond)), silent_(silent) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind("tcp://127.0.0.1:*");
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
    thread_ = std::thread([this] { Run(); });
  }
  ~FakeAggregator() {
    stop_ = true;
    thread_.join();
  }
  FakeAggregator(const FakeAggregator&) = delete;
  FakeAggregator& operator=(const FakeAggregator&) = delete;

  const std::string& endpoint() const { return endpoint_; }  // "tcp://127.0.0.1:PORT"
  // Answers with the canned answer's own id instead of the query's (an aggregator that could not
  // read the query answers with id 0). Call before the first query.
  void KeepAnswerId() { keep_id_ = true; }
  int queries() const { return queries_; }
  const Query& last_query() const { return last_; }  // read after queries() > 0 and join
  // The last histogram query: a view may send its catalog query beside it, in either order.
  const Query& last_histogram_query() const { return last_histograms_; }

 private:
  void Run() {
    while (!stop_) {
      zmq::pollitem_t item{static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(20));
      if (!(item.revents & ZMQ_POLLIN)) continue;
      zmq::message_t identity, payload;
      (void)socket_.recv(identity);
      (void)socket_.recv(payload);
      Result<Query> query = DecodeQuery(payload.to_string_view());
      if (!query.ok()) continue;
      last_ = *query;
      if (query->kind == Query::Kind::kHistograms) last_histograms_ = *query;
      ++queries_;
      if (silent_) continue;
      Answer answer = respond_(*query);
      if (query->kind == Query::Kind::kCompleteness) {  // every host through: nothing to name
        const std::string shard = answer.shard;
        answer = Answer{};
        answer.shard = shard;
        answer.kind = Query::Kind::kCompleteness;
      }
      if (!keep_id_) answer.id = query->id;
      socket_.send(identity, zmq::send_flags::sndmore);
      socket_.send(zmq::buffer(EncodeAnswer(answer)));
    }
  }

  zmq::socket_t socket_;
  std::function<Answer(const Query&)> respond_;
  bool silent_;
  std::string endpoint_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> keep_id_{false};
  std::atomic<int> queries_{0};
  Query last_, last_histograms_;
  std::thread thread_;
};

// An answer from `shard` holding `count` events of `value` in column 0 of group `group`.
inline Answer CannedAnswer(std::string shard, std::string group, uint64_t value, uint64_t count) {
  Answer a;
  a.shard = std::move(shard);
  a.histograms.unit = "ns";
  a.histograms.groups = {std::move(group)};
  QueryCell cell;
  cell.histogram.Record(value, count);
  a.histograms.cells.push_back(cell);
  return a;
}

}  // namespace trailmap::testing
