// OtlpReceiver: OTLP/HTTP's POST /v1/metrics (the OTLP specification's "OTLP/HTTP" section) as a
// route of the agent's HTTP listener (core/metrics_http.h), feeding an OtlpConverter.
//
//   request body          Content-Type application/x-protobuf (an ExportMetricsServiceRequest)
//                         or application/json (OTLP/JSON: lowerCamelCase keys, int64 as strings,
//                         enums as numbers; unknown fields such as exemplars are skipped);
//                         Content-Encoding gzip or none
//   200                   ExportMetricsServiceResponse, encoded like the request: empty when every
//                         point was taken, else partial_success {rejected_data_points,
//                         error_message naming the first refusals} (agent/otlp_convert.h)
//   400                   a body that does not decode (protobuf, JSON or gzip)
//   405                   a method other than POST
//   413                   a body past max_body_bytes (the listener answers before reading it), or
//                         one that inflates past max_inflated_bytes
//   415                   another Content-Type or Content-Encoding
// A 400 or 413 carries a google.rpc.Status encoded like the request; a 415 plain text, since the
// client's encoding is what was not understood. Every refused request is counted by status.
//
// Thread safety: Handle and counters() may be called from any thread. The converter must
// outlive the receiver, and the receiver the listener its Route() is served by.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "core/metrics_http.h"
#include "agent/otlp_convert.h"

namespace trailmap {

struct OtlpHttpOptions {
  size_t max_body_bytes = 8 << 20;       // as sent (compressed or not)
  size_t max_inflated_bytes = 32 << 20;  // a gzip body once inflated
};

struct OtlpHttpCounters {
  uint64_t requests = 0;     // to /v1/metrics, whatever became of them
  uint64_t undecodable = 0;  // 400
  uint64_t bad_method = 0;   // 405
  uint64_t too_large = 0;    // 413, as sent (answered by the listener) or once inflated
  uint64_t unsupported = 0;  // 415
  uint64_t body_bytes = 0;   // bodies as received
};

class OtlpReceiver {
 public:
  OtlpReceiver(OtlpConverter* converter, OtlpHttpOptions options = {});
  OtlpReceiver(const OtlpReceiver&) = delete;
  OtlpReceiver& operator=(const OtlpReceiver&) = delete;

  HttpRouteAnswer Handle(const HttpRouteRequest& request);
  // The route "/v1/metrics" calling Handle.
  HttpRoute Route();
  OtlpHttpCounters counters() const;

 private:
  OtlpConverter* const converter_;  // not owned
  const OtlpHttpOptions options_;
  std::atomic<uint64_t> requests_{0}, undecodable_{0}, bad_method_{0}, too_large_{0},
      unsupported_{0}, body_bytes_{0};
};

// Inflates a gzip stream (RFC 1952; several members one after another are one stream).
// InvalidArgument for a stream that does not inflate; ResourceExhausted past `max_bytes`.
Result<std::string> Gunzip(std::string_view compressed, size_t max_bytes);
// `text` as one gzip member (what OTLP clients send; tests and benchmarks use it).
std::string Gzip(std::string_view text);

}  // namespace trailmap
