#include "query/http/server.h"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "core/log.h"
#include "core/open_files.h"
#include "core/prometheus_text.h"
#include "core/self_metrics.h"
#include "net/accept_loop.h"
#include "query/http/page.h"
#include "query/http/params.h"

namespace trailmap {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct HttpServer::Impl {
  explicit Impl(const HttpServerOptions& o, HttpHandler h)
      : options(o), handler(std::move(h)), pool(static_cast<size_t>(std::max(1, o.workers))) {}
  // The live streams' threads see `stopping` at their next send (within 100 ms while they wait)
  // and end; none may outlive the io_context they post to.
  ~Impl() {
    stopping = true;
    std::unique_lock<std::mutex> lock(streams_mu);
    streams_done.wait(lock, [this] { return streams == 0; });
  }
  HttpServerOptions options;
  HttpHandler handler;
  std::atomic<bool> stopping{false};
  // The tokens admitted now: options.tokens at start, then what ReplaceTokens gave.
  std::shared_ptr<const BearerTokens> Tokens() const {
    std::lock_guard<std::mutex> lock(tokens_mu);
    return tokens;
  }
  mutable std::mutex tokens_mu;
  std::shared_ptr<const BearerTokens> tokens;  // guarded by tokens_mu; null = open API
  std::atomic<uint64_t> unauthorized{0};
  std::atomic<uint64_t> requests{0}, client_errors{0}, server_errors{0};  // replies by status
  std::atomic<uint64_t> queued{0};      // requests waiting for a worker now
  std::atomic<uint64_t> queue_full{0};  // refused 503: max_queue were waiting
  std::atomic<uint64_t> abandoned{0};   // their client left before the reply: skipped or unsent
  const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::mutex streams_mu;
  std::condition_variable streams_done;
  int streams = 0;  // guarded by streams_mu
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  std::unique_ptr<AcceptLoop> accepts;  // destroyed before io (net/accept_loop.h)
  // Declared after io: destroyed (stopped and joined) first, so no worker outlives the sockets.
  asio::thread_pool pool;
};

namespace {

// How long a client may take to send a request or read a reply.
constexpr std::chrono::seconds kIoTimeout{60};
// Live streams at once (each has a thread).
constexpr int kMaxStreams = 64;

// GET /metrics: the counters of /api/self in the Prometheus text format (server.h "Self").
HttpReply MetricsReply(const HttpServer::Impl& server) {
  SelfReadings r;
  const auto counter = [&r](const char* metric, const char* description, uint64_t total) {
    AddCounter(&r, metric, "replies/s", description, total);
  };
  counter("trailmap.query.http.requests", "HTTP replies sent (this one included)",
          server.requests.load() + 1);
  counter("trailmap.query.http.unauthorized",
          "requests refused 401 without an accepted bearer token", server.unauthorized.load());
  counter("trailmap.query.http.client_errors", "replies with a 4xx status (the 401s included)",
          server.client_errors.load());
  counter("trailmap.query.http.server_errors", "replies with a 5xx status",
          server.server_errors.load());
  counter("trailmap.query.http.queue_full",
          "requests refused 503 because max_queue requests were waiting for a worker",
          server.queue_full.load());
  counter("trailmap.query.http.abandoned",
          "requests whose client left before the reply (skipped when a worker took them)",
          server.abandoned.load());
  AddGauge(&r, "trailmap.query.http.queued", "requests", "requests waiting for a worker now",
           static_cast<double>(server.queued.load()));
  const AcceptCounts c = server.accepts->counts();
  AddGauge(&r, "trailmap.query.http.connections", "connections", "connections open now",
           static_cast<double>(c.open));
  AddCounter(&r, "trailmap.query.http.connections_refused", "connections/s",
             "connections closed at once: --max-connections were open", c.refused);
  AddCounter(&r, "trailmap.query.http.accept_failures", "failures/s",
             "accepts that failed (no descriptor left, ...): each retried after a pause", c.failed);
  AddGauge(&r, "trailmap.query.uptime", "s", "seconds since trailmap-query started",
           static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::steady_clock::now() - server.started)
                                   .count()));
  if (Result<ProcessStats> p = ReadProcessStats(); p.ok()) {
    AddProcessReadings("trailmap.query", *p, &r);
  }
  HttpReply reply;
  reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
  reply.body = FormatPrometheusText(r);
  return reply;
}

// GET /api/self: the server's own counters since it started (server.h "Self").
HttpReply SelfReply(const HttpServer::Impl& server) {
  nlohmann::ordered_json j;
  j["program"] = "trailmap-query";
  j["uptime_seconds"] = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::steady_clock::now() - server.started)
                            .count();
  j["requests"] = server.requests.load() + 1;  // this one too
  j["unauthorized"] = server.unauthorized.load();
  j["client_errors"] = server.client_errors.load();
  j["server_errors"] = server.server_errors.load();
  j["queue_full"] = server.queue_full.load();
  j["abandoned"] = server.abandoned.load();
  const AcceptCounts c = server.accepts->counts();
  j["connections"] = c.open;
  j["connections_refused"] = c.refused;
  j["accept_failures"] = c.failed;
  if (Result<ProcessStats> p = ReadProcessStats(); p.ok()) {
    j["process"] = {{"rss_bytes", p->rss_bytes},
                    {"fds", p->open_fds},
                    {"user_cpu_ns", p->user_cpu_ns},
                    {"system_cpu_ns", p->system_cpu_ns}};
  }
  HttpReply reply;
  reply.body = j.dump(2) + "\n";
  return reply;
}

// The page's files (and any other path outside /api/, a 404): answered from memory on the I/O
// thread, so no request waiting on the shards delays them. nullopt: a request for the workers.
std::optional<HttpReply> PageWithoutWorker(std::string_view method, std::string_view target) {
  Result<Params> params = Params::Parse(target);
  if (!params.ok() || params->path().starts_with("/api/")) return std::nullopt;
  if (method != "GET") return ErrorReply(405, "only GET is served");
  return PageReply(params->path());
}

// True when the peer of `fd` has closed (or shut down its side of) the connection: nobody reads
// the reply any more. Any thread: it only polls.
bool PeerGone(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

// One connection: read a request on the I/O thread, run it on the pool, write the reply on the
// I/O thread, and read the next one when the client keeps the connection alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, ConnectionSlot slot, HttpServer::Impl* server)
      : stream_(std::move(socket)), slot_(std::move(slot)), server_(server) {}

  void Read() {
    parser_.emplace();
    parser_->header_limit(server_->options.max_header_bytes);
    parser_->body_limit(64 * 1024);
    stream_.expires_after(kIoTimeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout) return Close();
    if (ec == http::error::header_limit) {
      keep_alive_ = false;
      return Write(ErrorReply(431, "request header fields too large"));
    }
    if (ec) {
      keep_alive_ = false;
      return Write(ErrorReply(400, "malformed HTTP request: " + ec.message()));
    }
    http::request<http::string_body> request = parser_->release();
    keep_alive_ = request.keep_alive();
    version_ = request.version();
    std::string method(request.method_string());
    std::string target(request.target());
    const std::shared_ptr<const BearerTokens> tokens = server_->Tokens();
    if (tokens != nullptr && NeedsToken(target)) {
      const std::string authorization(request[http::field::authorization]);
      const Result<std::string> who = tokens->Admit(authorization, &target);
      if (!who.ok()) {
        const uint64_t n = ++server_->unauthorized;
        if ((n & (n - 1)) == 0) {  // the 1st, 2nd, 4th, 8th, ...: a flood logs a few lines
          Log("refused " + std::to_string(n) +
              " request(s) without an accepted token, the last: " + who.status().message());
        }
        HttpReply reply = ErrorReply(401, who.status().message());
        reply.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"trailmap\"");
        return Write(std::move(reply));
      }
    }
    // The path as the router reads it (params.h): the one the token check above decided on.
    const Result<std::string> path = RequestPath(target);
    if (!path.ok()) return Write(ErrorReply(400, path.status().message()));
    if (*path == "/api/self") {
      return Write(SelfReply(*server_));  // its own counters: no fan-out, so on this thread
    }
    if (*path == "/metrics") return Write(MetricsReply(*server_));  // the same, for Prometheus
    if (std::optional<HttpReply> page = PageWithoutWorker(method, target)) {
      return Write(std::move(*page));
    }
    Queue(std::move(method), std::move(target));
  }

  // Runs the request on a worker, unless max_queue wait already (503) or its client has left by
  // the time a worker takes it (skipped).
  void Queue(std::string method, std::string target) {
    const HttpServerOptions& options = server_->options;
    if (server_->queued.load() >= static_cast<uint64_t>(options.max_queue)) {
      ++server_->queue_full;
      HttpReply reply = ErrorReply(
          503, "too many requests waiting (" + std::to_string(options.max_queue) + " queued for " +
                   std::to_string(options.workers) +
                   (options.workers == 1 ? " worker" : " workers") + "): try again in a second");
      reply.headers.emplace_back("Retry-After", "1");
      return Write(std::move(reply));
    }
    ++server_->queued;
    stream_.expires_never();  // the work takes as long as its fan-out's timeout
    asio::post(server_->pool, [self = shared_from_this(), method = std::move(method),
                               target = std::move(target),
                               received = std::chrono::steady_clock::now()]() {
      --self->server_->queued;
      HttpReply reply;
      // A raw pointer: a live stream's events keep the function, and must not keep the session
      // (the stream's thread releases it before the server may go); they call it only while
      // that thread holds the session.
      const HttpRequestInfo info{
          [session = self.get()] { return session->server_->stopping || session->ClientGone(); },
          received};
      if (!info.cancelled()) {
        try {
          reply = self->server_->handler(method, target, info);
        } catch (const std::exception& e) {
          reply = ErrorReply(500, std::string("internal error: ") + e.what());
        }
      }
      asio::post(self->stream_.get_executor(), [self, reply = std::move(reply)]() mutable {
        if (self->ClientGone()) {
          ++self->server_->abandoned;
          return self->Close();
        }
        if (reply.stream) return self->StartStream(std::move(reply));
        self->Write(std::move(reply));
      });
    });
  }

  bool ClientGone() { return PeerGone(stream_.socket().native_handle()); }

  void Write(HttpReply reply) {
    ++server_->requests;
    if (reply.status >= 500) {
      ++server_->server_errors;
    } else if (reply.status >= 400) {
      ++server_->client_errors;
    }
    auto response = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(reply.status), version_);
    response->set(http::field::server, "trailmap-query");
    response->set(http::field::content_type, reply.content_type);
    response->set(http::field::cache_control, "no-store");
    for (const auto& [name, value] : reply.headers) response->insert(name, value);
    response->keep_alive(keep_alive_);
    response->body() = std::move(reply.body);
    response->prepare_payload();
    stream_.expires_after(kIoTimeout);
    http::async_write(stream_, *response,
                      [self = shared_from_this(), response](beast::error_code ec, size_t) {
                        if (ec || !self->keep_alive_) return self->Close();
                        self->Read();
                      });
  }

  // A live stream: the header now, no length (the body ends when the connection does), then each
  // event the stream's own thread sends, written in order by the I/O thread.
  void StartStream(HttpReply reply) {
    {
      std::lock_guard<std::mutex> lock(server_->streams_mu);
      if (server_->streams >= kMaxStreams) {
        keep_alive_ = false;
        return Write(ErrorReply(
            503, "too many live streams (" + std::to_string(kMaxStreams) + "): try again later"));
      }
      ++server_->streams;
    }
    auto header = std::make_shared<http::response<http::empty_body>>(http::status::ok, version_);
    header->set(http::field::server, "trailmap-query");
    header->set(http::field::content_type, "text/event-stream");
    header->set(http::field::cache_control, "no-store");
    header->keep_alive(false);
    auto serializer = std::make_shared<http::response_serializer<http::empty_body>>(*header);
    stream_.expires_never();
    http::async_write_header(
        stream_, *serializer,
        [self = shared_from_this(), header, serializer, events = std::move(reply.stream)](
            beast::error_code ec, size_t) {
          if (ec) {
            self->closed_ = true;
            EndStream(self->server_);
            return self->Close();
          }
          std::thread([session = self, events]() mutable {
            try {
              events([&session](const std::string& chunk) { return session->Push(chunk); });
            } catch (const std::exception& e) {
              Log(std::string("live stream failed: ") + e.what());
            }
            session->Push(std::nullopt);  // close once the events before are written
            // The session goes before the count does: the server waits for the count to reach
            // 0 before it destroys the io_context the session's socket belongs to.
            HttpServer::Impl* server = session->server();
            session.reset();
            EndStream(server);
          }).detach();
        });
  }

  // On the stream's thread. An empty chunk (the stream only asks whether to go on) looks at the
  // socket, so a viewer that left is noticed while the stream waits, and sends an SSE comment
  // when nothing was sent for stream_keepalive, which also ends the stream of a viewer that
  // vanished without closing (the write fails).
  bool Push(std::optional<std::string> chunk) {
    if (closed_ || server_->stopping) return false;
    const auto now = std::chrono::steady_clock::now();
    if (chunk && chunk->empty()) {
      if (ClientGone()) {
        closed_ = true;
        return false;
      }
      if (now - last_sent_ < server_->options.stream_keepalive) return true;
      chunk = ": keepalive\n\n";
    }
    last_sent_ = now;
    asio::post(stream_.get_executor(), [self = shared_from_this(), chunk = std::move(chunk)]() {
      self->queue_.push_back(chunk);
      if (self->queue_.size() == 1) self->WriteNext();
    });
    return true;
  }

  void WriteNext() {
    if (!queue_.front()) {
      closed_ = true;
      return Close();
    }
    asio::async_write(stream_.socket(), asio::buffer(*queue_.front()),
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) {
                          self->closed_ = true;
                          return self->Close();
                        }
                        self->queue_.pop_front();
                        if (!self->queue_.empty()) self->WriteNext();
                      });
  }

  HttpServer::Impl* server() const { return server_; }

  static void EndStream(HttpServer::Impl* server) {
    std::lock_guard<std::mutex> lock(server->streams_mu);
    --server->streams;
    server->streams_done.notify_all();
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  ConnectionSlot slot_;  // its place under HttpServerOptions::max_connections
  HttpServer::Impl* server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keep_alive_ = false;
  unsigned version_ = 11;
  std::atomic<bool> closed_{false};  // a stream's client is gone
  std::chrono::steady_clock::time_point last_sent_ = std::chrono::steady_clock::now();  // Push's
  std::deque<std::optional<std::string>> queue_;  // a stream's chunks; nullopt: close (I/O thread)
};

// An IP literal, or a host name's address ("localhost": its first IPv4 address, else its first).
Result<asio::ip::address> ListenAddress(asio::io_context& io, const std::string& host) {
  beast::error_code ec;
  const asio::ip::address literal = asio::ip::make_address(host, ec);
  if (!ec) return literal;
  tcp::resolver resolver(io);
  const tcp::resolver::results_type found = resolver.resolve(host, "", ec);
  if (ec || found.empty()) {
    return Status::InvalidArgument("cannot resolve " + host + ": " +
                                   (ec ? ec.message() : std::string("no address")) +
                                   " (give a host name or an IP address, and a port: "
                                   "127.0.0.1:7402)");
  }
  for (const auto& entry : found) {
    if (entry.endpoint().address().is_v4()) return entry.endpoint().address();
  }
  return found.begin()->endpoint().address();
}

}  // namespace

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;

Result<std::unique_ptr<HttpServer>> HttpServer::Listen(const HttpServerOptions& options,
                                                       HttpHandler handler) {
  // HOST:PORT, or HOST alone; "[::1]:7402" for IPv6.
  std::string host = options.listen;
  uint16_t port = kDefaultHttpPort;
  const size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.find(']', colon) == std::string::npos &&
      (host[0] == '[' || host.find(':') == colon)) {
    const std::string digits = host.substr(colon + 1);
    char* end = nullptr;
    const unsigned long p = std::strtoul(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0' || p > 65535) {
      return Status::InvalidArgument("--listen " + options.listen +
                                     ": the port must be a number from 0 to 65535");
    }
    port = static_cast<uint16_t>(p);
    host.resize(colon);
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  auto impl = std::make_unique<Impl>(options, std::move(handler));
  if (options.tokens != nullptr) {
    impl->tokens = std::make_shared<const BearerTokens>(*options.tokens);
  }
  Result<asio::ip::address> address = ListenAddress(impl->io, host.empty() ? "0.0.0.0" : host);
  if (!address.ok()) {
    return Status::InvalidArgument("--listen " + options.listen + ": " +
                                   address.status().message());
  }
  if (!address->is_loopback() && options.tokens == nullptr && !options.insecure_no_auth) {
    return Status::InvalidArgument(
        "--listen " + options.listen +
        ": not a loopback address, and the API would be open to anyone who reaches it: give "
        "--tokens FILE (bearer tokens), or --insecure-no-auth to serve it without");
  }
  const tcp::endpoint endpoint(*address, port);
  beast::error_code ec;
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::IOError("cannot listen on " + options.listen + ": " + ec.message());
  AcceptLoopOptions accepting{.name = "http " + options.listen,
                              .max_connections = options.max_connections};
  if (options.max_connections == 0) {
    const uint64_t files = OpenFileLimit();
    accepting.max_connections = ConnectionsWithin(kDefaultMaxConnections, files);
    if (accepting.max_connections < kDefaultMaxConnections) {
      Log("at most " + std::to_string(accepting.max_connections) +
          " connections at once (fits the open-file limit of " + std::to_string(files) + ")");
    }
  }
  HttpServer::Impl* server = impl.get();
  impl->accepts = std::make_unique<AcceptLoop>(
      impl->acceptor, std::move(accepting), [server](tcp::socket socket, ConnectionSlot slot) {
        std::make_shared<Session>(std::move(socket), std::move(slot), server)->Read();
      });
  impl->accepts->Start();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

uint16_t HttpServer::port() const { return impl_->acceptor.local_endpoint().port(); }

uint64_t HttpServer::unauthorized() const { return impl_->unauthorized.load(); }

void HttpServer::ReplaceTokens(BearerTokens tokens) {
  auto next = std::make_shared<const BearerTokens>(std::move(tokens));
  std::lock_guard<std::mutex> lock(impl_->tokens_mu);
  impl_->tokens = std::move(next);
}

void HttpServer::Run() { impl_->io.run(); }

void HttpServer::Stop() {
  impl_->stopping = true;  // live streams end, and queued requests are not started
  asio::post(impl_->io, [impl = impl_.get()]() {
    beast::error_code ignored;
    impl->acceptor.close(ignored);
    impl->io.stop();
  });
}

}  // namespace trailmap
