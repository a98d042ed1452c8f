// QueryServer: answers queries (schemas/query.capnp) on a ZeroMQ ROUTER socket from the Store.
//
// One Answer per Query, with the query's id and `shard` set to this aggregator's name. A query
// that does not decode, or that the store cannot answer, gets an Answer whose `error` says why
// (id 0 when the id could not be read); an unknown metric is an empty answer, not an error.
// With CURVE (options.access), only keys listed with the query right are answered; others get
// an error naming the key.
//
// Bounded work. Queries run on a pool of `workers` threads (RouterServer workers), so
// a slow query holds up neither another query nor ingest (its own server). Each runs within a
// QueryBudget (aggregator/scan/query_budget.h): the limits the query asks for within `limits`, the
// deadline counted from its arrival. Past one the scan stops and the Answer carries `error`
// naming the limit and how to narrow the query, with `over_budget` set. Stop() sets a stop flag
// every running scan watches, so it returns within a few milliseconds however busy the pool is
// (the queries running get an "aggregator is stopping" error, which their clients may not see).
//
// Failpoint query.hold.METRIC (core/failpoint.h, action "error"): a query of METRIC holds before
// its scan, as a long scan would, until its deadline or the stop flag — the system tests' slow
// query.
//
// Thread safety: Start/Stop from the owning thread; counters and AnswerQuery from any thread.
// The Store and the zmq::context_t must outlive the server.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "aggregator/scan/query_budget.h"
#include "aggregator/server/query_latencies.h"
#include "aggregator/server/router_server.h"
#include "aggregator/store/store.h"
#include "aggregator/server/zap_handler.h"
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
  // Threads that answer queries; at least 1.
  size_t workers = kDefaultQueryWorkers;
  // The most any query may cost here (0 = no limit); a query may ask for less.
  QueryLimits limits = kDefaultQueryLimits;
  // With CURVE: the socket's secret key (RouterServer::Options::curve_secret_key) and the ZAP
  // handler whose list says which keys may query; a key without the query right gets an Answer
  // whose error says so. "" / nullptr: plaintext, anyone may query. Not owned.
  std::string curve_secret_key;
  const ZapHandler* access = nullptr;
  // [limits] handshake_timeout (RouterServer::Options::handshake_timeout).
  std::chrono::milliseconds handshake_timeout{10'000};
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
  // Exceptions its socket's and workers' threads caught and logged (RouterServer). Any thread.
  uint64_t thread_failures() const { return router_.thread_failures(); }
  uint64_t answered() const { return answered_; }
  uint64_t errors() const { return errors_; }

  uint64_t over_budget() const { return over_budget_; }

  // The answer to one encoded query that arrived at `arrived` (its deadline counts from there);
  // public for tests and tools.
  Answer AnswerQuery(std::string_view bytes,
                     std::chrono::steady_clock::time_point arrived =
                         std::chrono::steady_clock::now()) const;

 private:
  // What the socket sends back: the encoded answer, or an over-budget error if it is too big.
  std::string Reply(const Result<std::string_view>& payload) const;
  // The answer to a peer whose key may not query (`key`: as listed now, nullptr when it is no
  // longer listed): an error naming the key and what to change, marked key_refused.
  std::string Refuse(const Result<std::string_view>& payload, const RouterServer::Peer& peer,
                     const ClientKey* key) const;
  // AnswerQuery, and the limits it ran under.
  Answer AnswerUnder(std::string_view bytes, std::chrono::steady_clock::time_point arrived,
                     QueryLimits* limits) const;
  Answer Run(const Query& query, QueryBudget* budget) const;

  const Store* store_;
  const QueryServerOptions options_;
  std::atomic<bool> stopping_{false};  // set first by Stop: running scans give up
  RouterServer router_;
  mutable std::atomic<uint64_t> answered_{0}, errors_{0}, over_budget_{0};
};

}  // namespace trailmap::aggregator
