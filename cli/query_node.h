// The query node in `trailmap cluster --query-node URL`: trailmap-query's own counters, read from
// its GET /api/self (query/http/server.h "Self") with the bearer token of --token-file.
//
// The URL is http://HOST[:PORT][/] (default port 7402; HOST a name or an address); HTTPS is not
// spoken (put trailmap-query behind a proxy that terminates TLS and give its plain address). A
// node that cannot be reached, refuses the token or answers something that is not its counters
// is an error naming the URL and what to do. Pure but for ReadTokenFile, which reads one file,
// and FetchQueryNodeSelf, which opens one TCP connection and sends one HTTP/1.0 GET.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace trailmap {

struct QueryNodeSelf {
  std::string url;  // as given
  uint64_t uptime_seconds = 0;
  uint64_t requests = 0;       // replies sent, the one to this GET included
  uint64_t unauthorized = 0;   // 401s
  uint64_t client_errors = 0;  // 4xx, the 401s included
  uint64_t server_errors = 0;  // 5xx
  uint64_t rss_bytes = 0;      // 0 when the node could not read its own /proc
};

// The host and port of `url` ("http://h:7402/"); InvalidArgument saying the accepted form.
struct HttpAddress {
  std::string host;
  uint16_t port = 0;
};
Result<HttpAddress> ParseQueryNodeUrl(std::string_view url);

// The body of GET /api/self; Corruption naming what is missing.
Result<QueryNodeSelf> ParseQueryNodeSelf(std::string_view body, std::string_view url);

// The token in a --token-file: its text without surrounding whitespace; InvalidArgument when the
// file cannot be read or is empty.
Result<std::string> ReadTokenFile(const std::string& path);

// GET /api/self of the node at `url` with `token` ("" = none), waiting at most `timeout`.
Result<QueryNodeSelf> FetchQueryNodeSelf(const std::string& url, const std::string& token,
                                         std::chrono::milliseconds timeout);

// "query node http://h:7402: up 1h 2m, 152 requests, 3 unauthorized (401), 4 client errors
// (4xx), 0 server errors (5xx), RSS 21.4MiB\n"
std::string FormatQueryNodeLine(const QueryNodeSelf& self);

}  // namespace trailmap
