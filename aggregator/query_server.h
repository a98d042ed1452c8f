// QueryServer: answers queries (schemas/query.capnp) on a ZeroMQ ROUTER socket from the Store.
//
// One Answer per Query, with the query's id and `shard` set to this aggregator's name. A query
// that does not decode, or that the store cannot answer, gets an Answer whose `error` says why
// (id 0 when the id could not be read); an unknown metric is an empty answer, not an error.
// Queries are answered one at a time on the server thread. With CURVE (options.access), only
// keys listed with the query right are answered; others get an error naming the key.
//
// Thread safety: Start/Stop from the owning thread; counters from any thread. The Store and the
// zmq::context_t must outlive the server.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "aggregator/query_latencies.h"
#include "aggregator/router_server.h"
#include "aggregator/store.h"
#include "aggregator/zap_handler.h"
#include "core/query_wire.h"
#include "core/status.h"

namespace trailmap::aggregator {

struct QueryServerOptions {
  std::string endpoint = "tcp://127.0.0.1:7401";
  std::string
      shard;  // the name put in every Answer; main() defaults it to "<hostname>:<ingest port>"
  // Where each query's latency is recorded (self-metrics); nullptr = nowhere. Not owned; must
  // outlive the server.
  QueryLatencies* latencies = nullptr;
  // With CURVE: the socket's secret key (RouterServer::Options::curve_secret_key) and the ZAP
  // handler whose list says which keys may query; a key without the query right gets an Answer
  // whose error says so. "" / nullptr: plaintext, anyone may query. Not owned.
  std::string curve_secret_key;
  const ZapHandler* access = nullptr;
  // Adds what the store does not know to a status answer (refused batches and connections).
  std::function<void(ShardStatus*)> add_status;
};

class QueryServer {
 public:
  QueryServer(zmq::context_t* context, const Store* store, QueryServerOptions options);
  ~QueryServer();

  Status Start();
  void Stop();
  const std::string& endpoint() const { return router_.endpoint(); }
  uint64_t answered() const { return answered_; }
  uint64_t errors() const { return errors_; }

  // The answer to one encoded query (what the socket sends back); public for tests and tools.
  Answer AnswerQuery(std::string_view bytes) const;

 private:
  const Store* store_;
  const QueryServerOptions options_;
  RouterServer router_;
  mutable std::atomic<uint64_t> answered_{0}, errors_{0};
};

}  // namespace trailmap::aggregator
