#include "core/metrics_http.h"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

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
  EXPECT_EQ(Body(reply),
            "# HELP trailmap_agent_statsd_lines_total statsd lines accepted (lines)\n"
            "# TYPE trailmap_agent_statsd_lines_total counter\n"
            "trailmap_agent_statsd_lines_total 1\n");
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

}  // namespace
}  // namespace trailmap
