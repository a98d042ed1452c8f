#include "cli/query_node.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cluster_command.h"

namespace trailmap {
namespace {

constexpr char kSelf[] = R"({
  "program": "trailmap-query",
  "uptime_seconds": 3723,
  "requests": 152,
  "unauthorized": 3,
  "client_errors": 4,
  "server_errors": 1,
  "process": {"rss_bytes": 22439526, "fds": 12, "user_cpu_ns": 1, "system_cpu_ns": 2}
})";

TEST(QueryNode, UrlsAreHttpHostAndPort) {
  Result<HttpAddress> a = ParseQueryNodeUrl("http://query-1:7500/");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->host, "query-1");
  EXPECT_EQ(a->port, 7500);
  a = ParseQueryNodeUrl("127.0.0.1");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->port, 7402);
  EXPECT_EQ(ParseQueryNodeUrl("https://q:7402").status().message(),
            "--query-node https://q:7402: HTTPS is not spoken; give http://HOST[:PORT], e.g. "
            "http://127.0.0.1:7402");
  EXPECT_EQ(ParseQueryNodeUrl("http://q:70000").status().message().substr(0, 36),
            "--query-node http://q:70000: bad por");
  EXPECT_FALSE(ParseQueryNodeUrl("http://q/api/self").ok());
  EXPECT_FALSE(ParseQueryNodeUrl("http://:80").ok());
}

TEST(QueryNode, SelfCountersAreReadAndPrinted) {
  Result<QueryNodeSelf> self = ParseQueryNodeSelf(kSelf, "http://q:7402");
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  EXPECT_EQ(FormatQueryNodeLine(*self),
            "query node http://q:7402: up 1h 2m, 152 requests, 3 unauthorized (401), 4 client "
            "errors (4xx), 1 server errors (5xx), RSS 21.4MiB\n");
  EXPECT_EQ(
      ParseQueryNodeSelf(R"({"program": "trailmap-aggregator"})", "http://q").status().message(),
      "query node http://q: /api/self did not answer trailmap-query's counters: is this "
      "the URL of a trailmap-query?");
  EXPECT_EQ(ParseQueryNodeSelf(R"({"program": "trailmap-query", "uptime_seconds": 1})", "http://q")
                .status()
                .message(),
            "query node http://q: /api/self has no counter \"requests\"");
}

TEST(QueryNode, TheClusterDocumentGetsTheNodeInTextAndJson) {
  const Result<QueryNodeSelf> self = ParseQueryNodeSelf(kSelf, "http://q:7402");
  ViewDocument json{"{\n  \"view\": \"cluster\",\n  \"missing_shards\": []\n}\n", "json", {}, {}};
  AddQueryNode("http://q:7402", self, &json);
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(json.bytes);
  EXPECT_EQ(j["query_node"].dump(),
            R"({"url":"http://q:7402","state":"up","uptime_seconds":3723,"requests":152,)"
            R"("unauthorized":3,"client_errors":4,"server_errors":1,"rss_bytes":22439526})");
  EXPECT_EQ(j.items().begin().key(), "view");
  EXPECT_EQ(std::prev(j.end()).key(), "missing_shards");
  EXPECT_TRUE(json.missing.empty());

  ViewDocument text{"table\n", "table", {}, {}};
  const Result<QueryNodeSelf> down =
      Status::Unavailable("query node http://q:7402: cannot connect");
  AddQueryNode("http://q:7402", down, &text);
  EXPECT_EQ(text.bytes, "table\nquery node http://q:7402: cannot connect\n");
  EXPECT_EQ(text.missing, std::vector<std::string>{"query node http://q:7402: cannot connect"});
}

// A one-request HTTP server on loopback: answers `reply` and records the request.
class OneReply {
 public:
  explicit OneReply(std::string reply) : reply_(std::move(reply)) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t size = sizeof a;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &size);
    port_ = ntohs(a.sin_port);
    listen(listener_, 1);
    thread_ = std::thread([this] {
      const int c = accept(listener_, nullptr, nullptr);
      char buffer[4096];
      while (request_.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = recv(c, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        request_.append(buffer, static_cast<size_t>(n));
      }
      (void)send(c, reply_.data(), reply_.size(), MSG_NOSIGNAL);
      close(c);
    });
  }
  ~OneReply() {
    if (thread_.joinable()) thread_.join();
    close(listener_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // After the answer was read: what came.
  const std::string& request() {
    if (thread_.joinable()) thread_.join();
    return request_;
  }

 private:
  std::string reply_;
  int listener_ = -1;
  int port_ = 0;
  std::string request_;
  std::thread thread_;
};

TEST(QueryNode, FetchSendsTheBearerTokenAndReadsTheAnswer) {
  OneReply ok(std::string("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n") + kSelf);
  Result<QueryNodeSelf> self = FetchQueryNodeSelf(ok.url(), "s3cret", std::chrono::seconds(10));
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  EXPECT_EQ(self->requests, 152u);
  EXPECT_EQ(ok.request(),
            "GET /api/self HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            "s3cret\r\n\r\n");
  OneReply refused("HTTP/1.1 401 Unauthorized\r\n\r\n{}");
  EXPECT_EQ(FetchQueryNodeSelf(refused.url(), "", std::chrono::seconds(10)).status().message(),
            "query node " + refused.url() +
                ": 401: it needs a bearer token: give --token-file FILE (the token itself)");
}

}  // namespace
}  // namespace trailmap
