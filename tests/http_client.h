// A small HTTP/1.1 client for the system tests of trailmap-query (Boost.Beast, blocking): one
// GET per connection, the answer waited for at most 20 s.
#pragma once

#include <memory>
#include <string>

namespace trailmap::test {

struct HttpResult {
  int status = -1;  // -1: no connection or no answer
  std::string content_type;
  std::string missing;           // X-Trailmap-Missing-Shards
  std::string www_authenticate;  // WWW-Authenticate (a 401's)
  std::string body;
};

// Send (in the constructor) writes the request, Receive waits for the answer, so a test can have
// a request in flight while it makes another.
class HttpCall {
 public:
  // `authorization`: the Authorization header's value ("" = none), e.g. "Bearer TOKEN".
  HttpCall(int port, const std::string& target, const std::string& authorization = "");
  ~HttpCall();
  HttpCall(const HttpCall&) = delete;
  HttpCall& operator=(const HttpCall&) = delete;
  HttpResult Receive();

 private:
  struct Connection;
  std::unique_ptr<Connection> connection_;
  bool sent_ = false;
};

HttpResult HttpGet(int port, const std::string& target, const std::string& authorization = "");

// Percent-encodes a URL parameter's name or value.
std::string UrlEncode(const std::string& text);

}  // namespace trailmap::test
