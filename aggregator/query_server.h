// QueryServer: answers queries (schemas/query.capnp) on a ZeroMQ ROUTER socket from the Store.
//
// One Answer per Query, with the query's id and `shard` set to this aggregator's name. A query
// that does not decode, or that the store cannot answer, gets an Answer whose `error` says why
// (id 0 when the id could not be read); an unknown metric is an empty answer, not an error.
// Queries are answered one at a time on the server thread.
//
// Thread safety: Start/Stop from the owning thread; counters from any thread. The Store and the
// zmq::context_t must outlive the server.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "aggregator/query_latencies.h"
#include "aggregator/router_server.h"
#include "aggregator/store.h"
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
