// OtlpReceiver: OTLP/HTTP's POST /v1/metrics (the OTLP specification's "OTLP/HTTP" section) as a
// route of the agent's HTTP listener (net/metrics_http.h), feeding an OtlpConverter.
//
//   request body          Content-Type application/x-protobuf (an ExportMetricsServiceRequest)
//                         or application/json (OTLP/JSON: lowerCamelCase keys, int64 as strings,
//                         enums as numbers; unknown fields such as exemplars are skipped);
//                         Content-Encoding gzip or none
//   200                   ExportMetricsServiceResponse, encoded like the request: empty when every
//                         point was taken, else partial_success {rejected_data_points,
//                         error_message naming the first refusals} (agent/otlp_convert.h)
//   400                   a body that does not decode (protobuf, JSON or gzip), or a string in it
//                         that is not UTF-8 (the specification requires it)
//   404, 431              the listener's: another path; a header past 8 KiB (net/metrics_http.h)
//   405                   a method other than POST
//   413                   a body past max_body_bytes as sent, with a Content-Length or chunked
//                         (the listener answers before reading it); one that inflates past
//                         max_inflated_bytes; one holding more than max_points data points or
//                         that would take more than max_decoded_bytes decoded (both counted on the
//                         wire before anything is built): the client should send smaller batches.
//                         No 413 is retried by an OTLP client (only 429, 502, 503, 504).
//   415                   another Content-Type or Content-Encoding
// Every 4xx but 415 carries a google.rpc.Status encoded like the request, as the specification
// asks; a 415 plain text, since the client's encoding is what was not understood. Messages are
// UTF-8 (bytes that are not become U+FFFD). Every refused request is counted by status.
//
// Memory: a request is decoded on a protobuf arena, freed whole; after one past kTrimAfterBytes
// (body, inflated or decoded) the heap's free memory is given back to the system (malloc_trim),
// so one outsized export does not keep the agent large.
//
// Thread safety: Handle and counters() may be called from any thread. The converter must
// outlive the receiver, and the receiver the listener its Route() is served by.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "agent/otlp_convert.h"
#include "net/metrics_http.h"

namespace trailmap {

struct OtlpHttpOptions {
  size_t max_body_bytes = 8 << 20;       // as sent (compressed or not)
  size_t max_inflated_bytes = 32 << 20;  // a gzip body once inflated
  // Data points in one request (of every metric type, whatever becomes of them).
  size_t max_points = 1'000'000;
  // The memory a request would take decoded (its messages, strings, repeated values and unknown
  // fields), estimated on the wire before anything is built. An empty point is 2 bytes of
  // protobuf and ~80 decoded: without these bounds a 32 MiB body decodes to 16 M of them.
  size_t max_decoded_bytes = 128 << 20;
};

// A request whose body, inflated body or decoded elements pass this is followed by malloc_trim.
inline constexpr size_t kTrimAfterBytes = 4 << 20;

struct OtlpHttpCounters {
  uint64_t requests = 0;          // to the listener, whatever became of them
  uint64_t undecodable = 0;       // 400: not protobuf, JSON or gzip; not UTF-8; not HTTP
  uint64_t not_found = 0;         // 404: another path
  uint64_t bad_method = 0;        // 405
  uint64_t too_large = 0;         // 413: as sent, once inflated, too many points or elements
  uint64_t unsupported = 0;       // 415
  uint64_t header_too_large = 0;  // 431
  uint64_t body_bytes = 0;        // bodies as received
  uint64_t trims = 0;             // malloc_trim calls after outsized requests
};

class OtlpReceiver {
 public:
  OtlpReceiver(OtlpConverter* converter, OtlpHttpOptions options = {});
  OtlpReceiver(const OtlpReceiver&) = delete;
  OtlpReceiver& operator=(const OtlpReceiver&) = delete;

  HttpRouteAnswer Handle(const HttpRouteRequest& request);
  // The route "/v1/metrics" calling Handle, whose listener refusals are counted and answered as
  // the specification asks.
  HttpRoute Route();
  // Counts a refusal the listener answered outside the route (MetricsHttpOptions::refused).
  void CountRefused(unsigned status);
  OtlpHttpCounters counters() const;

 private:
  // Handle's work; `held` grows to the most memory the request took (body, inflated, decoded).
  HttpRouteAnswer Take(const HttpRouteRequest& request, size_t* held);
  std::atomic<uint64_t>* CounterOf(unsigned status);

  OtlpConverter* const converter_;  // not owned
  const OtlpHttpOptions options_;
  std::atomic<uint64_t> requests_{0}, undecodable_{0}, not_found_{0}, bad_method_{0}, too_large_{0},
      unsupported_{0}, header_too_large_{0}, body_bytes_{0}, trims_{0};
};

// What decoding a protobuf ExportMetricsServiceRequest would build, counted on the wire without
// building it. The walk stops once past max_points or max_bytes, or at a string that is not UTF-8.
struct OtlpWireCount {
  bool ok = true;       // false: the bytes are not protobuf (libprotobuf would refuse them too)
  uint64_t points = 0;  // data points of every type
  // An estimate of the decoded message's memory, from above: each message's size and its slot
  // in a repeated field, strings, repeated values (with the room a growing array keeps), and
  // unknown fields.
  uint64_t bytes = 0;
  std::string bad_string;  // the full name of a string field that is not UTF-8, if any
};
OtlpWireCount CountOtlpWire(std::string_view body, size_t max_points, size_t max_bytes);

// Inflates a gzip stream (RFC 1952; several members one after another are one stream).
// InvalidArgument for a stream that does not inflate; ResourceExhausted past `max_bytes`.
Result<std::string> Gunzip(std::string_view compressed, size_t max_bytes);
// `text` as one gzip member (what OTLP clients send; tests and benchmarks use it), at zlib's
// `level` (-1 its default; 0 stores the text, so the size follows from the text's alone).
std::string Gzip(std::string_view text, int level = -1);

}  // namespace trailmap
