#include "tests/http_client.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <utility>  // before Boost 1.74's asio, which uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>

namespace trailmap::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

struct HttpCall::Connection {
  asio::io_context io;
  asio::ip::tcp::socket socket{io};
};

HttpCall::HttpCall(int port, const std::string& target, const std::string& authorization)
    : connection_(std::make_unique<Connection>()) {
  beast::error_code ec;
  connection_->socket.connect({asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)},
                              ec);
  if (ec) return;
  timeval timeout{20, 0};
  setsockopt(connection_->socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout,
             sizeof timeout);
  http::request<http::empty_body> request{http::verb::get, target, 11};
  request.set(http::field::host, "127.0.0.1");
  if (!authorization.empty()) request.set(http::field::authorization, authorization);
  request.keep_alive(false);
  http::write(connection_->socket, request, ec);
  sent_ = !ec;
}

HttpCall::~HttpCall() = default;

HttpResult HttpCall::Receive() {
  HttpResult result;
  if (!sent_) return result;
  beast::error_code ec;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(connection_->socket, buffer, parser, ec);
  if (ec) return result;
  const auto& response = parser.get();
  result.status = static_cast<int>(response.result_int());
  result.content_type = std::string(response[http::field::content_type]);
  result.missing = std::string(response["X-Trailmap-Missing-Shards"]);
  result.www_authenticate = std::string(response[http::field::www_authenticate]);
  result.body = response.body();
  return result;
}

HttpResult HttpGet(int port, const std::string& target, const std::string& authorization) {
  return HttpCall(port, target, authorization).Receive();
}

std::string UrlEncode(const std::string& text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

}  // namespace trailmap::test
