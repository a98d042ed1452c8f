#include "cli/query_node.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/units.h"

namespace trailmap {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint16_t kDefaultQueryNodePort = 7402;

// Closes a file descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Milliseconds left until `deadline`, at least 0.
int Left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

// Waits for `events` on `fd` until `deadline`; false on timeout or error.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int n = poll(&p, 1, Left(deadline));
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

// "1h 2m", "3m 4s", "5 s".
std::string Uptime(uint64_t s) {
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600) return std::to_string(s / 60) + "m " + std::to_string(s % 60) + "s";
  return std::to_string(s / 3600) + "h " + std::to_string(s / 60 % 60) + "m";
}

}  // namespace

Result<HttpAddress> ParseQueryNodeUrl(std::string_view url) {
  const auto bad = [url](const std::string& what) {
    return Status::InvalidArgument("--query-node " + std::string(url) + ": " + what +
                                   "; give http://HOST[:PORT], e.g. http://127.0.0.1:7402");
  };
  std::string_view rest = url;
  if (rest.starts_with("https://")) return bad("HTTPS is not spoken");
  if (rest.starts_with("http://")) rest.remove_prefix(7);
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    if (rest.substr(slash) != "/") return bad("a path is not taken (/api/self is asked)");
    rest = rest.substr(0, slash);
  }
  HttpAddress address;
  address.port = kDefaultQueryNodePort;
  if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    const std::string_view port = rest.substr(colon + 1);
    uint32_t value = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || value > 65535) return bad("bad port");
      value = value * 10 + static_cast<uint32_t>(c - '0');
    }
    if (port.empty() || value == 0 || value > 65535) return bad("bad port");
    address.port = static_cast<uint16_t>(value);
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return bad("no host");
  address.host = std::string(rest);
  return address;
}

Result<QueryNodeSelf> ParseQueryNodeSelf(std::string_view body, std::string_view url) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  const std::string where = "query node " + std::string(url);
  if (!j.is_object() || j.value("program", "") != "trailmap-query") {
    return Status::Corruption(where +
                              ": /api/self did not answer trailmap-query's counters: is "
                              "this the URL of a trailmap-query?");
  }
  QueryNodeSelf self;
  self.url = std::string(url);
  const std::pair<const char*, uint64_t*> fields[] = {{"uptime_seconds", &self.uptime_seconds},
                                                      {"requests", &self.requests},
                                                      {"unauthorized", &self.unauthorized},
                                                      {"client_errors", &self.client_errors},
                                                      {"server_errors", &self.server_errors}};
  for (const auto& [name, out] : fields) {
    if (!j.contains(name) || !j[name].is_number_unsigned()) {
      return Status::Corruption(where + ": /api/self has no counter \"" + name + "\"");
    }
    *out = j[name].get<uint64_t>();
  }
  if (j.contains("process") && j["process"].is_object()) {
    const nlohmann::json& process = j["process"];
    if (process.contains("rss_bytes") && process["rss_bytes"].is_number_unsigned()) {
      self.rss_bytes = process["rss_bytes"].get<uint64_t>();
    }
  }
  return self;
}

Result<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("--token-file " + path + ": cannot read it");
  std::stringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  const size_t begin = token.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) {
    return Status::InvalidArgument("--token-file " + path +
                                   ": empty (it holds the bearer token itself, not its hash)");
  }
  token = token.substr(begin, token.find_last_not_of(" \t\r\n") - begin + 1);
  return token;
}

Result<QueryNodeSelf> FetchQueryNodeSelf(const std::string& url, const std::string& token,
                                         std::chrono::milliseconds timeout) {
  Result<HttpAddress> address = ParseQueryNodeUrl(url);
  if (!address.ok()) return address.status();
  const std::string where = "query node " + url;
  const auto deadline = Clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int e =
          getaddrinfo(address->host.c_str(), std::to_string(address->port).c_str(), &hints, &found);
      e != 0) {
    return Status::Unavailable(where + ": cannot resolve " + address->host + ": " +
                               gai_strerror(e));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(found, freeaddrinfo);
  Fd fd(socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return Status::IOError(where + ": socket: " + std::strerror(errno));
  if (connect(fd.get(), found->ai_addr, found->ai_addrlen) != 0 && errno != EINPROGRESS) {
    return Status::Unavailable(where + ": cannot connect: " + std::strerror(errno));
  }
  int error = 0;
  socklen_t size = sizeof error;
  if (!WaitFor(fd.get(), POLLOUT, deadline) ||
      getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size) != 0 || error != 0) {
    return Status::Unavailable(
        where + ": cannot connect: " + (error != 0 ? std::strerror(error) : "timed out") +
        " (is trailmap-query listening there?)");
  }
  std::string request = "GET /api/self HTTP/1.0\r\nHost: " + address->host + "\r\n";
  if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
  request += "\r\n";
  for (size_t sent = 0; sent < request.size();) {
    if (!WaitFor(fd.get(), POLLOUT, deadline)) {
      return Status::Unavailable(where + ": timed out sending the request");
    }
    const ssize_t n = send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return Status::Unavailable(where + ": send: " + std::strerror(errno));
    }
    if (n > 0) sent += static_cast<size_t>(n);
  }
  std::string reply;
  for (;;) {  // HTTP/1.0: the reply ends when the node closes the connection
    if (!WaitFor(fd.get(), POLLIN, deadline)) {
      return Status::Unavailable(where + ": no whole answer within " +
                                 std::to_string(timeout.count()) + " ms");
    }
    char buffer[4096];
    const ssize_t n = recv(fd.get(), buffer, sizeof buffer, 0);
    if (n == 0) break;
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return Status::Unavailable(where + ": recv: " + std::strerror(errno));
    }
    if (n > 0) reply.append(buffer, static_cast<size_t>(n));
    if (reply.size() > (1 << 20)) return Status::Corruption(where + ": answer over 1 MiB");
  }
  const size_t head_end = reply.find("\r\n\r\n");
  int status = 0;
  if (head_end == std::string::npos ||
      std::sscanf(reply.c_str(), "HTTP/%*d.%*d %d", &status) != 1) {
    return Status::Corruption(where + ": the answer is not HTTP");
  }
  const std::string body = reply.substr(head_end + 4);
  if (status == 401) {
    return Status::InvalidArgument(
        where + ": 401: " +
        (token.empty() ? "it needs a bearer token: give --token-file FILE (the token itself)"
                       : "it does not accept the token in --token-file"));
  }
  if (status != 200) {
    return Status::Unavailable(where + ": HTTP " + std::to_string(status) + ": " +
                               body.substr(0, 200));
  }
  return ParseQueryNodeSelf(body, url);
}

std::string FormatQueryNodeLine(const QueryNodeSelf& self) {
  return "query node " + self.url + ": up " + Uptime(self.uptime_seconds) + ", " +
         std::to_string(self.requests) + " requests, " + std::to_string(self.unauthorized) +
         " unauthorized (401), " + std::to_string(self.client_errors) + " client errors (4xx), " +
         std::to_string(self.server_errors) + " server errors (5xx), RSS " +
         (self.rss_bytes == 0 ? std::string("-")
                              : FormatBytes(static_cast<double>(self.rss_bytes))) +
         "\n";
}

}  // namespace trailmap
