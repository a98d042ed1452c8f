// Prometheus remote write (protocol 1.0) into the agent: PromReceiver answers Prometheus'
// POST /api/v1/write on a listener of its own (core/metrics_http.h), PromConverter
// (agent/prom_convert.h) turns a whole request into histograms and scalars, and PromHosts holds
// them per host until the agent's loop ships them, each batch under its own host.
//
//   request      Content-Type application/x-protobuf, Content-Encoding snappy (block format):
//                a prometheus.WriteRequest (schemas/prometheus/remote.proto)
//   204          every series converted and held for shipping
//   400          a body that is not snappy or not a WriteRequest, or a series the converter
//                refuses (the message names it); nothing of the request is applied
//   401          no bearer token, or not a writer's (when a writers file is given)
//   403          a series of a host the writer may not write (agent/prom_writers.h); nothing
//                applied
//   405, 415     a method other than POST; another Content-Type or Content-Encoding
//   413          a body past max_body_bytes as sent, or past max_uncompressed_bytes once
//                decompressed (told by snappy's header, before decompressing)
//   503          the agent cannot keep up: its batches not yet acknowledged by the aggregators
//                pass max_backlog_batches (a stalled aggregator), or a new host past max_hosts.
//                Prometheus retries a 5xx with backoff and keeps the samples in its WAL
//                meanwhile, so nothing is lost; a 4xx it drops.
// Every refusal is counted by status (trailmap.agent.prom.refused{status}).
//
// Thread safety: Handle, counters() and the PromHosts methods may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/prom_convert.h"
#include "agent/prom_write_config.h"
#include "agent/prom_writers.h"
#include "core/metrics_http.h"
#include "core/self_metrics.h"
#include "ingest/bucketizer.h"

namespace trailmap {

// What the listener's route counts.
struct PromWriteCounters {
  uint64_t requests = 0;      // to the route, whatever became of them
  uint64_t accepted = 0;      // 204
  uint64_t body_bytes = 0;    // as sent
  uint64_t bad_request = 0;   // 400
  uint64_t unauthorized = 0;  // 401
  uint64_t forbidden = 0;     // 403
  uint64_t bad_method = 0;    // 405 (and the listener's 404)
  uint64_t too_large = 0;     // 413 (and the listener's 431)
  uint64_t unsupported = 0;   // 415
  uint64_t busy = 0;          // 503
};

// One bucketizer per host with data held (the agent's own sources use another), at most
// `max_hosts`; a host is forgotten once everything it held is taken.
class PromHosts {
 public:
  explicit PromHosts(size_t max_hosts) : max_hosts_(max_hosts) {}
  // Whether `fresh` hosts not held yet still fit (checked before a request converts; requests
  // converting at once may together pass the bound by what each brings).
  bool Fits(size_t fresh) const;
  bool Holds(std::string_view host) const;
  void Apply(const PromWrites& writes);
  // Every host's seconds before `second`, cut into batches of that host (no labels).
  std::vector<Batch> TakeBatchesBefore(int64_t second);
  size_t hosts() const;
  BucketizerCounters counters() const;  // summed over the hosts

 private:
  const size_t max_hosts_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Bucketizer>, std::less<>> hosts_;  // guarded by mu_
};

class PromReceiver {
 public:
  // `writers` nullptr: no token needed. `backlogged` says whether the agent is behind (503).
  PromReceiver(PromConverter* converter, PromHosts* hosts, const PromWriters* writers,
               std::function<bool()> backlogged, const PromWriteConfig& config);
  PromReceiver(const PromReceiver&) = delete;
  PromReceiver& operator=(const PromReceiver&) = delete;

  HttpRouteAnswer Handle(const HttpRouteRequest& request);
  // "/api/v1/write" calling Handle; the listener's own refusals counted.
  HttpRoute Route();
  void CountRefused(unsigned status);
  PromWriteCounters counters() const;

 private:
  HttpRouteAnswer Refuse(unsigned status, std::string message);

  PromConverter* const converter_;  // not owned
  PromHosts* const hosts_;          // not owned
  const PromWriters* const writers_;
  const std::function<bool()> backlogged_;
  const size_t max_body_bytes_, max_uncompressed_bytes_;
  std::atomic<uint64_t> requests_{0}, accepted_{0}, body_bytes_{0}, bad_request_{0},
      unauthorized_{0}, forbidden_{0}, bad_method_{0}, too_large_{0}, unsupported_{0}, busy_{0};
};

// The whole input as the agent runs it: converter, hosts, receiver and listener.
class PromWriteInput {
 public:
  // Binds config.listen; IOError naming the endpoint when it cannot, InvalidArgument for a bad
  // address or writers file. `backlogged` as PromReceiver's.
  static Result<std::unique_ptr<PromWriteInput>> Start(const PromWriteConfig& config,
                                                       std::function<bool()> backlogged);
  ~PromWriteInput();

  // Hands every held second before `second` to `send`, each batch under its host.
  void ShipSecondsBefore(int64_t second, const std::function<void(Batch)>& send);
  // Stops the listener: no request converts any more (held seconds stay, to ship).
  void StopListening();
  std::string url() const;  // "http://127.0.0.1:9201/api/v1/write"
  // trailmap.agent.prom.* readings (docs/self-metrics.md).
  SelfReadings Readings() const;

 private:
  PromWriteInput() = default;
  std::optional<PromWriters> writers_;
  std::unique_ptr<PromConverter> converter_;
  std::unique_ptr<PromHosts> hosts_;
  std::unique_ptr<PromReceiver> receiver_;
  std::unique_ptr<MetricsHttpServer> http_;
  std::string url_;
};

// A snappy block (what remote write sends) of `bytes`, for tests and benchmarks.
std::string SnappyCompress(std::string_view bytes);

}  // namespace trailmap
