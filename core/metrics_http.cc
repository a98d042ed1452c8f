#include "core/metrics_http.h"

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <string_view>
#include <thread>

#include "core/accept_loop.h"
#include "core/log.h"
#include "core/open_files.h"
#include "core/prometheus_text.h"

namespace trailmap {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

namespace {

constexpr std::chrono::seconds kIoTimeout{5};
constexpr size_t kMaxRequestBytes = 8 * 1024;  // a header; a body outside any route
constexpr size_t kMaxDrainBytes = 64 << 20;    // read and dropped after a refusal

std::string_view View(beast::string_view text) { return {text.data(), text.size()}; }

// What follows an answer on its connection.
enum class Then {
  kRead,   // the next request (keep-alive)
  kClose,  // close (the client asked to)
  kDrain,  // the request was refused before its end: read and drop the rest, then close
};

Then After(bool keep_alive) { return keep_alive ? Then::kRead : Then::kClose; }

// One connection: read a request, answer it, read the next while the client keeps it alive.
class Connection : public std::enable_shared_from_this<Connection> {
  // A completion handler calling `step`; no exception leaves it.
  auto Guarded(void (Connection::*step)(beast::error_code)) {
    return [self = shared_from_this(), step](beast::error_code ec, size_t bytes) {
      try {
        self->transferred_ = bytes;
        ((*self).*step)(ec);
      } catch (const std::exception& e) {
        Log(std::string("metrics http: unexpected error: ") + e.what());
        self->Close();
      }
    };
  }

 public:
  Connection(tcp::socket socket, ConnectionSlot slot, const MetricsHttpOptions* options,
             const std::function<std::string()>* text)
      : stream_(std::move(socket)), slot_(std::move(slot)), options_(options), text_(text) {
    for (const HttpRoute& route : options_->routes) {
      largest_body_ = std::max(largest_body_, route.max_body_bytes);
    }
  }

  // Reads the header first, so a route's body limit applies before its body is read.
  void Read() {
    parser_.emplace();
    parser_->header_limit(kMaxRequestBytes);
    // Beast compares a Content-Length with the body limit while it reads the header, before the
    // path is known: the largest limit lets every route's bodies through, and OnHeader sets the
    // request's own.
    parser_->body_limit(largest_body_);
    route_ = nullptr;
    stream_.expires_after(kIoTimeout);
    http::async_read_header(stream_, buffer_, *parser_, Guarded(&Connection::OnHeader));
  }

 private:
  // The route of the request's path (once its start line is read), or nullptr.
  void FindRoute() {
    const std::string_view target = View(parser_->get().target());
    const std::string_view path = target.substr(0, target.find('?'));
    route_ = nullptr;
    for (const HttpRoute& route : options_->routes) {
      if (route.path == path) route_ = &route;
    }
  }

  size_t BodyLimit() const { return route_ != nullptr ? route_->max_body_bytes : kMaxRequestBytes; }

  void OnHeader(beast::error_code ec) {
    if (ec) return OnRead(ec);
    FindRoute();
    // Beast bounds the request line and the fields each by the header limit; the header as a
    // whole is held to it here.
    if (transferred_ > kMaxRequestBytes) return HeaderTooLarge();
    parser_->body_limit(BodyLimit());  // what is left of it as a chunked body comes
    if (parser_->content_length() && *parser_->content_length() > BodyLimit()) return TooLarge();
    if (route_ != nullptr && beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      auto go_on = std::make_shared<http::response<http::empty_body>>(http::status::continue_,
                                                                      parser_->get().version());
      return http::async_write(stream_, *go_on,
                               [self = shared_from_this(), go_on](beast::error_code ec, size_t) {
                                 if (ec) return self->Close();
                                 self->ReadBody();
                               });
    }
    ReadBody();
  }

  void ReadBody() {
    stream_.expires_after(kIoTimeout);
    http::async_read(stream_, buffer_, *parser_, Guarded(&Connection::OnRead));
  }

  void TooLarge() {
    Refuse(http::status::payload_too_large,
           "request body too large (at most " + std::to_string(BodyLimit()) + " bytes)");
  }

  void HeaderTooLarge() {
    Refuse(http::status::request_header_fields_too_large,
           "request header too large (at most 8 KiB)");
  }

  // A refusal the listener makes before the request's end: the route's answer when it makes
  // one, else a line of text; counted either way.
  void Refuse(http::status status, const std::string& message) {
    const http::request<http::string_body>& header = parser_->get();
    if (route_ != nullptr && route_->refuse) {
      HttpRouteAnswer answer =
          route_->refuse(static_cast<unsigned>(status), message,
                         HttpRouteRequest{View(header.method_string()),
                                          View(header[http::field::content_type]),
                                          View(header[http::field::content_encoding]),
                                          {}});
      return Write(static_cast<http::status>(answer.status), Then::kDrain, answer.content_type,
                   std::move(answer.body), header.version());
    }
    if (options_->refused) options_->refused(static_cast<unsigned>(status));
    Write(status, Then::kDrain, "text/plain", message + "\n", header.version());
  }

  // A text answer outside any route that is no success: counted as a refusal.
  void Answer(http::status status, bool keep_alive, std::string body, unsigned version) {
    if (options_->refused) options_->refused(static_cast<unsigned>(status));
    Write(status, After(keep_alive), "text/plain", std::move(body), version);
  }

  void OnRead(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == http::error::partial_message) {
      return Close();
    }
    if (ec == http::error::header_limit) {
      FindRoute();  // known when the request line was within the limit
      return HeaderTooLarge();
    }
    if (ec == http::error::body_limit) {
      FindRoute();  // Beast may have refused a Content-Length before OnHeader
      return TooLarge();
    }
    if (ec.category() == http::make_error_code(http::error::bad_target).category()) {
      return Refuse(http::status::bad_request, "not an HTTP/1.1 request: " + ec.message());
    }
    if (ec) return Close();
    const http::request<http::string_body> request = parser_->release();
    const bool keep_alive = request.keep_alive();
    if (route_ != nullptr) {
      const HttpRouteAnswer answer = route_->handle(
          HttpRouteRequest{View(request.method_string()), View(request[http::field::content_type]),
                           View(request[http::field::content_encoding]), request.body(),
                           View(request[http::field::authorization])});
      return Write(static_cast<http::status>(answer.status), After(keep_alive), answer.content_type,
                   answer.body, request.version());
    }
    if (!*text_) {
      return Answer(http::status::not_found, keep_alive, "not found\n", request.version());
    }
    if (request.target() != "/metrics" && !request.target().starts_with("/metrics?")) {
      return Answer(http::status::not_found, keep_alive, "not found: the metrics are at /metrics\n",
                    request.version());
    }
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      return Answer(http::status::method_not_allowed, keep_alive,
                    "method not allowed: GET /metrics\n", request.version());
    }
    Write(http::status::ok, After(keep_alive), "text/plain; version=0.0.4; charset=utf-8",
          (*text_)(), request.version());
  }

  void Write(http::status status, Then then, std::string_view content_type, std::string body,
             unsigned version) {
    auto response = std::make_shared<http::response<http::string_body>>(status, version);
    response->set(http::field::server, options_->server);
    response->set(http::field::content_type,
                  beast::string_view(content_type.data(), content_type.size()));
    response->keep_alive(then == Then::kRead);
    response->body() = std::move(body);
    response->prepare_payload();
    stream_.expires_after(kIoTimeout);
    http::async_write(stream_, *response,
                      [self = shared_from_this(), response, then](beast::error_code ec, size_t) {
                        if (ec) return self->Close();
                        if (then == Then::kRead) return self->Read();
                        if (then == Then::kDrain) return self->Drain();
                        self->Close();
                      });
  }

  // After a refusal the client may still be sending its body: closing with unread bytes would
  // reset the connection, and the client could lose the answer. So the sending side is shut,
  // and what comes is read and dropped (at most kMaxDrainBytes, until kIoTimeout) before closing.
  void Drain() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kIoTimeout);
    buffer_.clear();
    DrainSome(0);
  }

  void DrainSome(size_t drained) {
    stream_.async_read_some(buffer_.prepare(64 * 1024),
                            [self = shared_from_this(), drained](beast::error_code ec, size_t n) {
                              if (ec || drained + n > kMaxDrainBytes) return self->Close();
                              self->DrainSome(drained + n);
                            });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  ConnectionSlot slot_;  // its place under MetricsHttpOptions::max_connections
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  const MetricsHttpOptions* options_;         // owned by the server, which outlives this
  const std::function<std::string()>* text_;  // the same; empty: no /metrics
  const HttpRoute* route_ = nullptr;           // the current request's, if any
  size_t largest_body_ = kMaxRequestBytes;     // of any route's limits and kMaxRequestBytes
  size_t transferred_ = 0;                     // by the last read (a header's: its size)
};

}  // namespace

struct MetricsHttpServer::Impl {
  Impl(MetricsHttpOptions o, std::function<std::string()> t)
      : options(std::move(o)), text(std::move(t)), acceptor(io) {}

  // Bounded and paced by AcceptLoop (core/accept_loop.h); `this` outlives every connection: the
  // destructor stops io first.
  void Accept(const std::string& where) {
    accepts = std::make_unique<AcceptLoop>(
        acceptor,
        AcceptLoopOptions{
            .name = "http " + where,
            .max_connections = ConnectionsWithin(options.max_connections, OpenFileLimit())},
        [this](tcp::socket socket, ConnectionSlot slot) {
          std::make_shared<Connection>(std::move(socket), std::move(slot), &options, &text)->Read();
        });
    accepts->Start();
  }

  MetricsHttpOptions options;
  std::function<std::string()> text;
  asio::io_context io;
  tcp::acceptor acceptor;
  std::unique_ptr<AcceptLoop> accepts;  // destroyed before io
  std::thread thread;
};

namespace {

// The listener's connection counters in the text format (metrics_http.h connections()).
std::string ListenerText(const std::string& server, const AcceptLoop& accepts) {
  std::string prefix = server;
  std::replace(prefix.begin(), prefix.end(), '-', '.');
  const AcceptCounts c = accepts.counts();
  SelfReadings r;
  AddGauge(&r, prefix + ".http.connections", "connections", "connections open to this listener",
           static_cast<double>(c.open));
  AddCounter(&r, prefix + ".http.connections_refused", "connections/s",
             "connections closed at once: the listener's max_connections were open", c.refused);
  AddCounter(&r, prefix + ".http.accept_failures", "failures/s",
             "accepts that failed (no descriptor left, ...): each retried after a pause", c.failed);
  return FormatPrometheusText(r);
}

}  // namespace

Result<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    MetricsHttpOptions options, std::function<SelfReadings()> read) {
  std::function<std::string()> text;  // empty: no /metrics, only the routes
  if (read) text = [read = std::move(read)] { return FormatPrometheusText(read()); };
  return StartText(std::move(options), std::move(text));
}

Result<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::StartText(
    MetricsHttpOptions options, std::function<std::string()> text) {
  const std::string where = options.address + ":" + std::to_string(options.port);
  auto impl = std::make_unique<Impl>(std::move(options), std::move(text));
  beast::error_code error;
  const asio::ip::address address = asio::ip::make_address(impl->options.address, error);
  if (error) {
    return Status::InvalidArgument("metrics address '" + where + "': not an IP address");
  }
  const tcp::endpoint endpoint(address, impl->options.port);
  impl->acceptor.open(endpoint.protocol(), error);
  if (!error) impl->acceptor.set_option(asio::socket_base::reuse_address(true), error);
  if (!error) impl->acceptor.bind(endpoint, error);
  if (!error) impl->acceptor.listen(asio::socket_base::max_listen_connections, error);
  if (error)
    return Status::IOError("cannot listen on metrics TCP " + where + ": " + error.message());
  impl->Accept(where);
  Impl* raw = impl.get();
  if (raw->text) {  // the listener's own counters after the daemon's
    raw->text = [raw, daemon = std::move(raw->text)] {
      return daemon() + ListenerText(raw->options.server, *raw->accepts);
    };
  }
  impl->thread = std::thread([raw] {
    while (true) {
      try {
        raw->io.run();
        return;
      } catch (const std::exception& e) {
        Log(std::string("metrics http: unexpected error: ") + e.what());
      }
    }
  });
  return std::unique_ptr<MetricsHttpServer>(new MetricsHttpServer(std::move(impl)));
}

MetricsHttpServer::MetricsHttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsHttpServer::~MetricsHttpServer() {
  impl_->io.stop();
  impl_->thread.join();
}

AcceptCounts MetricsHttpServer::connections() const { return impl_->accepts->counts(); }

uint16_t MetricsHttpServer::port() const {
  beast::error_code error;
  return impl_->acceptor.local_endpoint(error).port();
}

std::string MetricsHttpServer::url() const {
  const std::string& host = impl_->options.address;
  return "http://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(port()) + "/metrics";
}

}  // namespace trailmap
