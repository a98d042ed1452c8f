// MetricsHttpServer: a daemon's self-metrics for a Prometheus scrape: the agent's
// `--metrics` and the aggregator's. (trailmap-query answers GET /metrics on its own HTTP server,
// query/http/server.h.)
//
//   GET /metrics   200, "text/plain; version=0.0.4", FormatPrometheusText (core/prometheus_text.h)
//                  of the readings `read` returns at the time of the request
//   a route's path what its handler answers (MetricsHttpOptions::routes, below)
//   anything else  404 (another path) or 405 (another method), a one-line text body
//
// One thread runs every connection (Boost.Asio, Beast), each with a 5 s deadline per read and
// write, so a client that connects and sends nothing holds its own connection only; at most
// max_connections are open, and a failing accept pauses rather than spins (core/accept_loop.h).
// Refused, and counted (MetricsHttpOptions::refused, HttpRoute::refuse):
//   431  a header (request line to blank line) past 8 KiB
//   413  a body past its limit (8 KiB, or the route's), as soon as its Content-Length says so or,
//        chunked, once that much has come
//   400  a request that is not HTTP/1.1
// After such a refusal the connection is closed once what the client still sends is read and
// dropped (at most 64 MiB, 5 s), so the client reads the answer rather than a reset.
// Start() binds and starts the thread; the destructor stops and joins it. `read` is called on
// that thread: it must be thread-safe against the daemon's other threads (the agent's and the
// aggregator's parts all are: they read their counters under their locks or atomically).
// No exception leaves a handler: an unexpected one closes that connection and is logged.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/accept_loop.h"
#include "core/self_metrics.h"
#include "core/status.h"

namespace trailmap {

// Another path on the same kind of listener (the agent's OTLP/HTTP receiver, agent/otlp_http.h).
// `handle` is called on the server's thread for every request to exactly `path` (any method: it
// answers a wrong one itself) and must be thread-safe like `read`. A body past max_body_bytes is
// answered 413 without calling it, as soon as its Content-Length says so or, chunked, once that
// much has come; an "Expect: 100-continue" within the limit gets its 100 first.
struct HttpRouteRequest {
  std::string_view method;            // "POST"
  std::string_view content_type;      // the header as sent, "" when absent
  std::string_view content_encoding;  // the header as sent, "" when absent
  std::string_view body;
  std::string_view authorization;  // the header as sent, "" when absent (set for `handle` only)
};
struct HttpRouteAnswer {
  unsigned status = 200;
  std::string content_type = "text/plain";
  std::string body;
};
struct HttpRoute {
  std::string path;
  size_t max_body_bytes = 8 * 1024;
  std::function<HttpRouteAnswer(const HttpRouteRequest&)> handle;
  // If set, makes (and counts) the answer to each refusal the listener makes itself on this path:
  // 413 (`message` names the limit) and 431 (a header past 8 KiB, once the path was read).
  // `request` has the headers read so far and no body. Unset: a one-line text.
  std::function<HttpRouteAnswer(unsigned status, const std::string& message,
                                const HttpRouteRequest& request)>
      refuse;
};

struct MetricsHttpOptions {
  std::string address = "127.0.0.1";  // an IP literal
  uint16_t port = 9125;               // 0 = any free port (see port())
  std::string server = "trailmap";    // the Server header: the daemon's program name
  std::vector<HttpRoute> routes;      // served besides /metrics
  // Connections open at once (core/accept_loop.h): past it a new one is closed at once and
  // counted; lowered to fit the descriptor limit (ConnectionsWithin). Default 256.
  size_t max_connections = 256;
  // If set, called for each refusal answered outside any route (a 431 before the path was read,
  // a 400 for a request that is not HTTP, 404, 405, 413), so a listener's refusals can be counted.
  std::function<void(unsigned status)> refused;
};

class MetricsHttpServer {
 public:
  // IOError naming the endpoint when it cannot bind; InvalidArgument for a bad address. An empty
  // `read` serves no /metrics (404), only the routes.
  static Result<std::unique_ptr<MetricsHttpServer>> Start(MetricsHttpOptions options,
                                                          std::function<SelfReadings()> read);
  // The same, serving the exposition text `text` returns (readings with latency histograms:
  // FormatPrometheusText's second argument). Called like `read`; empty like an empty `read`.
  static Result<std::unique_ptr<MetricsHttpServer>> StartText(MetricsHttpOptions options,
                                                              std::function<std::string()> text);
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  uint16_t port() const;  // the bound port
  // The listener's connections: open, served, refused past max_connections, failed accepts. Its
  // /metrics also tells them, after the daemon's readings: PREFIX_http_connections,
  // PREFIX_http_connections_refused_total, PREFIX_http_accept_failures_total (PREFIX: `server`
  // with '_' for '-').
  AcceptCounts connections() const;
  // "http://127.0.0.1:9125/metrics" ("http://[::1]:9125/metrics"), with the bound port.
  std::string url() const;

 private:
  struct Impl;
  explicit MetricsHttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace trailmap
