#include "net/metrics_http.h"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <stdexcept>

#include "core/prometheus_text.h"

namespace trailmap {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// Sends `request` to 127.0.0.1:port and returns everything the server says until it closes.
std::string Exchange(uint16_t port, const std::string& request) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  asio::write(socket, asio::buffer(request));
  std::string reply;
  boost::system::error_code ec;
  asio::read(socket, asio::dynamic_buffer(reply), ec);  // until EOF
  return reply;
}

// The lines a "trailmap-test" listener adds to its /metrics.
std::string ListenerLines(int open, uint64_t refused, uint64_t failed,
                          uint64_t thread_failures = 0) {
  const auto family = [](const std::string& name, const std::string& help, const char* type,
                         uint64_t value) {
    return "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " +
           std::to_string(value) + "\n";
  };
  return family("trailmap_test_http_connections", "connections open to this listener (connections)",
                "gauge", open) +
         family("trailmap_test_http_connections_refused_total",
                "connections closed at once: the listener's max_connections were open "
                "(connections)",
                "counter", refused) +
         family("trailmap_test_http_accept_failures_total",
                "accepts that failed (no descriptor left, ...): each retried after a pause "
                "(failures)",
                "counter", failed) +
         family("trailmap_test_http_thread_failures_total",
                "unexpected errors the listener caught in its handlers (logged; it serves on) "
                "(failures)",
                "counter", thread_failures);
}

std::string Body(const std::string& reply) {
  const size_t at = reply.find("\r\n\r\n");
  return at == std::string::npos ? "" : reply.substr(at + 4);
}

TEST(MetricsHttp, ServesTheReadingsAtEachRequest) {
  int calls = 0;
  Result<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::Start(MetricsHttpOptions{"127.0.0.1", 0, "trailmap-test"}, [&calls] {
        SelfReadings r;
        AddCounter(&r, "trailmap.agent.statsd.lines", "lines/s", "statsd lines accepted",
                   static_cast<uint64_t>(++calls));
        return r;
      });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->port();
  EXPECT_EQ((*server)->url(), "http://127.0.0.1:" + std::to_string(port) + "/metrics");
  const std::string get = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  std::string reply = Exchange(port, get);
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 200 OK\r\n")) << reply;
  EXPECT_NE(reply.find("Server: trailmap-test\r\n"), std::string::npos) << reply;
  EXPECT_NE(reply.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos)
      << reply;
  // The daemon's readings, then the listener's own (this connection is open).
  EXPECT_EQ(Body(reply),
            "# HELP trailmap_agent_statsd_lines_total statsd lines accepted (lines)\n"
            "# TYPE trailmap_agent_statsd_lines_total counter\n"
            "trailmap_agent_statsd_lines_total 1\n" +
                ListenerLines(1, 0, 0));
  EXPECT_NE(Body(Exchange(port, get)).find("trailmap_agent_statsd_lines_total 2\n"),
            std::string::npos);

  // A client that connects and says nothing holds only its own connection.
  asio::io_context io;
  tcp::socket idle(io);
  idle.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  EXPECT_TRUE(Exchange(port, "GET /other HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                  .starts_with("HTTP/1.1 404 Not Found\r\n"));
  EXPECT_TRUE(Exchange(port,
                       "POST /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                       "Content-Length: 0\r\n\r\n")
                  .starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
  EXPECT_TRUE(Exchange(port, "GET /metrics HTTP/1.1\r\nX: " + std::string(9000, 'a') + "\r\n\r\n")
                  .starts_with("HTTP/1.1 431 "));
  EXPECT_EQ(calls, 2);
}

// Past max_connections a connection is closed at once and counted; the one open is served.
TEST(MetricsHttp, ClosesConnectionsPastItsCap) {
  MetricsHttpOptions options{"127.0.0.1", 0, "trailmap-test"};
  options.max_connections = 1;
  Result<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::Start(options, [] { return SelfReadings{}; });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->port();
  asio::io_context io;
  tcp::socket idle(io);
  idle.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), "");
  }
  EXPECT_EQ((*server)->connections().refused, 3u);
  idle.close();
  std::string reply;
  for (int i = 0; i < 100 && reply.empty(); ++i) {  // until the server has seen it close
    reply = Exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  }
  EXPECT_EQ(Body(reply), ListenerLines(1, (*server)->connections().refused, 0));
}

TEST(MetricsHttp, SaysWhyItCannotListen) {
  auto read = [] { return SelfReadings{}; };
  Result<std::unique_ptr<MetricsHttpServer>> first =
      MetricsHttpServer::Start(MetricsHttpOptions{"127.0.0.1", 0}, read);
  ASSERT_TRUE(first.ok());
  const uint16_t port = (*first)->port();
  Result<std::unique_ptr<MetricsHttpServer>> second =
      MetricsHttpServer::Start(MetricsHttpOptions{"127.0.0.1", port}, read);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().message().rfind(
                "cannot listen on metrics TCP 127.0.0.1:" + std::to_string(port) + ": ", 0),
            0u)
      << second.status().message();
  EXPECT_EQ(MetricsHttpServer::Start(MetricsHttpOptions{"localhost", 0}, read).status().message(),
            "metrics address 'localhost:0': not an IP address");
}

// A route whose handler throws (a bug below it): the connection is closed, the error logged and
// counted in the listener's own thread_failures, and the listener serves the next request.
TEST(MetricsHttp, AnUnexpectedErrorInAHandlerIsCountedAndTheListenerServesOn) {
  MetricsHttpOptions options{"127.0.0.1", 0, "trailmap-test"};
  HttpRoute boom;
  boom.path = "/boom";
  boom.handle = [](const HttpRouteRequest&) -> HttpRouteAnswer {
    throw std::runtime_error("handler failed");
  };
  options.routes.push_back(boom);
  Result<std::unique_ptr<MetricsHttpServer>> server =
      MetricsHttpServer::Start(std::move(options), [] { return SelfReadings{}; });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->port();
  testing::internal::CaptureStderr();
  const std::string reply = Exchange(port,
                                     "POST /boom HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                                     "Content-Length: 2\r\n\r\nhi");
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(reply, "") << "closed without an answer";
  EXPECT_NE(log.find("metrics http: unexpected error: handler failed"), std::string::npos) << log;
  const std::string get = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  EXPECT_EQ(Body(Exchange(port, get)), ListenerLines(1, 0, 0, 1));
}

}  // namespace
}  // namespace trailmap
