// HttpServer: trailmap-query's HTTP/1.1 server (Boost.Beast on Asio).
//
// Threads: one I/O thread runs every socket (accept, read, write: all asynchronous); the work of
// each request — a blocking ZeroMQ fan-out, assembly, rendering — runs on a pool of `workers`
// threads, so one slow request (a shard that waits out its timeout) never holds up the others,
// and the I/O thread keeps accepting and reading meanwhile. A connection is kept alive as HTTP/1.1
// asks, one request at a time. What needs no shard is answered on the I/O thread, so it is fast
// even while every worker waits: the page's files (any path outside /api/), /api/self, /metrics.
//
// Bounds, each counted in /api/self and /metrics:
// - connections: at most max_connections open (net/accept_loop.h); past it a new one is closed
//   at once. A failing accept (no descriptor left) pauses 10 ms, doubling to 1 s, and is logged
//   once per episode.
// - the queue: at most max_queue requests wait for a worker; past it 503 with Retry-After: 1.
// - abandoned requests: a request whose client has closed its connection (or shut down its
//   sending side) by the time a worker takes it is skipped, and its reply is not sent.
// - live streams: at most 64 (503 past it); a stream that waits sends an SSE comment
//   (": keepalive") every stream_keepalive and watches its socket, so a viewer that left frees
//   its slot at once.
// Stop() ends the live streams and starts no queued request; the requests running finish with
// their fan-out, which main() cancels (query_main.cc).
//
// Errors: a broken connection closes that connection only; an exception from the handler is a
// 500 reply, never the end of the server.
//
// Access: with `tokens`, every request but one for the page's files (/api/, /metrics, and any
// path not in the router's one form) needs a bearer token (query/http/tokens.h NeedsToken,
// decided on the path the router reads); one without a token it accepts gets 401 with a body
// saying what to send, and is counted (unauthorized(), and GET /api/self). The page's files are
// served to anyone: they hold no data, and the page asks for the token. Without `tokens` the API is
// open, so Listen refuses an address that is not loopback unless `insecure_no_auth`.
//
// Self: GET /api/self answers the server's own counters as JSON (behind the token like the rest
// of /api/): {"program": "trailmap-query", "uptime_seconds", "requests" (replies sent, this one
// included), "unauthorized" (401s), "client_errors" (4xx, the 401s included), "server_errors"
// (5xx), "queue_full", "abandoned", "connections" (open now), "connections_refused",
// "accept_failures", "process": {"rss_bytes", "fds", "user_cpu_ns", "system_cpu_ns"}}. Chosen over
// publishing trailmap.query.* into the store as the aggregators and agents do: that would need
// an ingest key on the query node, which should hold no more than the query right.
//
// Prometheus: GET /metrics answers the same counters in the text exposition format 0.0.4
// (core/prometheus_text.h): trailmap_query_http_{requests,unauthorized,client_errors,
// server_errors,queue_full,abandoned,connections_refused,accept_failures}_total,
// trailmap_query_http_{queued,connections}, trailmap_query_uptime_seconds,
// trailmap_query_process_{rss_bytes,fds,cpu_seconds_total{mode}}. On this listener, not a port of
// its own, and behind the token when there are tokens, like /api/self: it tells the same things,
// and Prometheus sends a bearer token itself (`authorization: {credentials_file: ...}` in a scrape
// config, README "Prometheus"). Without tokens (loopback, or --insecure-no-auth) it is open like
// the rest.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "query/http/api.h"
#include "query/http/tokens.h"

namespace trailmap {

inline constexpr uint16_t kDefaultHttpPort = 7402;
inline constexpr size_t kDefaultMaxConnections = 512;

struct HttpServerOptions {
  // HOST:PORT to listen on; a HOST alone takes kDefaultHttpPort, port 0 any free port. HOST is an
  // IP address or a name ("localhost": its first IPv4 address).
  std::string listen = "127.0.0.1:7402";
  // Threads that run requests. Default 8: each mostly waits on the aggregators.
  int workers = 8;
  // Connections open at once; past it a new one is closed at once and counted. 0 (the default):
  // kDefaultMaxConnections, or fewer to leave descriptors for the fan-out within the open-file
  // limit (net/accept_loop.h ConnectionsWithin; logged when lowered).
  size_t max_connections = 0;
  // Requests waiting for a worker; past it 503 with Retry-After: 1, counted. Default 64.
  int max_queue = 64;
  // A live stream that has sent nothing for this long sends an SSE comment. Default 10 s.
  std::chrono::milliseconds stream_keepalive{10'000};
  // A request line and headers larger than this are refused (431); GET has no body. Default 16 KiB.
  uint32_t max_header_bytes = 16 * 1024;
  // Set: /api/ requests need one of these bearer tokens. Not owned; outlives the server.
  const BearerTokens* tokens = nullptr;
  // Without tokens, listen on an address that is not loopback anyway (the lab's choice).
  bool insecure_no_auth = false;
};

// What the server tells a handler about its request.
struct HttpRequestInfo {
  // True once nobody will read the reply: its client closed the connection, or the server stops.
  // Any thread; cheap (a poll of the socket).
  std::function<bool()> cancelled;
  std::chrono::steady_clock::time_point received;  // when its request was read
};

// Runs on a worker thread for every request: the method ("GET") and the target ("/api/...?...").
using HttpHandler = std::function<HttpReply(std::string_view method, std::string_view target,
                                            const HttpRequestInfo& info)>;

class HttpServer {
 public:
  // Binds and listens; InvalidArgument for a malformed address, IOError when it cannot bind.
  static Result<std::unique_ptr<HttpServer>> Listen(const HttpServerOptions& options,
                                                    HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port it listens on (the chosen one when asked for 0).
  uint16_t port() const;
  // Requests refused with 401 since Listen.
  uint64_t unauthorized() const;
  // From the next request on, admits these tokens instead (SIGHUP's reread of the token file).
  // Only for a server listening with `tokens`; any thread.
  void ReplaceTokens(BearerTokens tokens);
  // Serves until Stop() (from any thread, or a signal handler's Asio completion).
  void Run();
  void Stop();

  struct Impl;  // server.cc: the sockets, the workers and the live streams

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace trailmap
