#include "core/metrics_http.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <optional>
#include <thread>

#include "core/log.h"
#include "core/prometheus_text.h"

namespace trailmap {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

namespace {

constexpr std::chrono::seconds kIoTimeout{5};
constexpr size_t kMaxRequestBytes = 8 * 1024;

// One connection: read a request, answer it, read the next while the client keeps it alive.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, const MetricsHttpOptions* options,
             const std::function<std::string()>* text)
      : stream_(std::move(socket)), options_(options), text_(text) {}

  void Read() {
    parser_.emplace();
    parser_->header_limit(kMaxRequestBytes);
    parser_->body_limit(kMaxRequestBytes);
    stream_.expires_after(kIoTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       try {
                         self->OnRead(ec);
                       } catch (const std::exception& e) {
                         Log(std::string("metrics http: unexpected error: ") + e.what());
                         self->Close();
                       }
                     });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout) return Close();
    if (ec == http::error::header_limit || ec == http::error::body_limit) {
      return Write(http::status::request_header_fields_too_large, false, "text/plain",
                   "request too large (at most 8 KiB)\n", 11);
    }
    if (ec) return Close();
    const http::request<http::string_body> request = parser_->release();
    const bool keep_alive = request.keep_alive();
    if (request.target() != "/metrics" && !request.target().starts_with("/metrics?")) {
      return Write(http::status::not_found, keep_alive, "text/plain",
                   "not found: the metrics are at /metrics\n", request.version());
    }
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      return Write(http::status::method_not_allowed, keep_alive, "text/plain",
                   "method not allowed: GET /metrics\n", request.version());
    }
    Write(http::status::ok, keep_alive, "text/plain; version=0.0.4; charset=utf-8", (*text_)(),
          request.version());
  }

  void Write(http::status status, bool keep_alive, const char* content_type, std::string body,
             unsigned version) {
    auto response = std::make_shared<http::response<http::string_body>>(status, version);
    response->set(http::field::server, options_->server);
    response->set(http::field::content_type, content_type);
    response->keep_alive(keep_alive);
    response->body() = std::move(body);
    response->prepare_payload();
    stream_.expires_after(kIoTimeout);
    http::async_write(
        stream_, *response,
        [self = shared_from_this(), response, keep_alive](beast::error_code ec, size_t) {
          if (ec || !keep_alive) return self->Close();
          self->Read();
        });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  const MetricsHttpOptions* options_;         // owned by the server, which outlives this
  const std::function<std::string()>* text_;  // the same
};

}  // namespace

struct MetricsHttpServer::Impl {
  Impl(MetricsHttpOptions o, std::function<std::string()> t)
      : options(std::move(o)), text(std::move(t)), acceptor(io) {}

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      // `this` outlives the acceptor: the destructor stops io first.
      if (ec == asio::error::operation_aborted) return;
      if (!ec) std::make_shared<Connection>(std::move(socket), &options, &text)->Read();
      Accept();
    });
  }

  MetricsHttpOptions options;
  std::function<std::string()> text;
  asio::io_context io;
  tcp::acceptor acceptor;
  std::thread thread;
};

Result<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    MetricsHttpOptions options, std::function<SelfReadings()> read) {
  return StartText(std::move(options),
                   [read = std::move(read)] { return FormatPrometheusText(read()); });
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
  impl->Accept();
  Impl* raw = impl.get();
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
