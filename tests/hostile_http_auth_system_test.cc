// Hostile clients of trailmap-query's HTTP API, against the real node and a real aggregator on
// loopback:
//
// - every spelling of an /api/ or /metrics path an attacker would try (percent escapes in any
//   segment, encoded and double-encoded slashes, "//", "/./", "/x/../", upper case, absolute
//   form, ';', '#', '\', NUL, CR/LF) is refused without a token: 401, counted as unauthorized,
//   or 400/404, and never an answer with data; with a token each is a 400 or 404;
// - the Bearer scheme in any case is accepted;
// - names that do not validate (metric, --by, --hosts) and a timeout over the cap are a 400 at
//   once, before any shard is asked, from the API and the CLI alike;
// - invalid UTF-8 in a parameter's name or value is a 400 naming it (exit 2 from the CLI), never
//   a 500; pictures over the pixel budget are a 400 naming it;
// - `trailmap keygen` needs no key of its own, makes its --dir, and leaves no orphan NAME.key.
//
// While each class of hostile request is sent, a normal authorized request is answered within
// 1 s.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/sha256.h"
#include "tests/cluster.h"
#include "tests/http_client.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kToken = "correct horse battery staple";

// One request written byte for byte as given (the target is not checked or encoded, so a test
// can send what no well-behaved client would), the answer read until the server closes or for
// at most 5 s (a live stream never closes).
HttpResult RawGet(int port, const std::string& target, const std::string& authorization = "") {
  HttpResult result;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return result;
  timeval timeout{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return result;
  }
  std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!authorization.empty()) request += "Authorization: " + authorization + "\r\n";
  request += "Connection: close\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return result;
  }
  std::string answer;
  char buffer[65536];
  const auto deadline = Clock::now() + 5s;
  while (Clock::now() < deadline) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      answer.append(buffer, n);
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      break;
    }
  }
  ::close(fd);
  if (answer.rfind("HTTP/1.", 0) != 0 || answer.size() < 12) return result;
  result.status = std::stoi(answer.substr(9, 3));
  const size_t end = answer.find("\r\n\r\n");
  result.body = end == std::string::npos ? "" : answer.substr(end + 4);
  return result;
}

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

class HostileHttpAuthSystem : public ::testing::Test {
 protected:
  void SetUp() override {
    agg_ =
        std::make_unique<Aggregator>(dir_, "agg-1", std::vector<std::string>{"--no-self-metrics"});
    agg_->Start();
    const int64_t now = UnixNow();
    t0_ = (now - 600) / 60 * 60;
    std::string trace = "time latency\n";
    for (int s = 0; s < 60; ++s) {
      trace += std::to_string((t0_ + s) * 1'000'000) + " " + std::to_string(100 + s) + "\n";
    }
    WriteFile(dir_ / "web-1.trace", trace);
    const CommandResult imported =
        RunProgram({Binary("trailmap"), "import", "--quiet", "--host", "web-1", "--metric",
                    "disk.latency", "--time-unit", "us", "--value-unit", "us", "--ingest",
                    agg_->ingest(), dir_ / "web-1.trace"});
    ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err << agg_->Log();
    WriteFile(dir_ / "tokens.txt", "ops " + Sha256Hex(kToken) + "\n");
    port_ = FreePort();
    node_ = std::make_unique<Process>(
        std::vector<std::string>{Binary("trailmap-query"), "--listen",
                                 "127.0.0.1:" + std::to_string(port_), "--aggregators",
                                 agg_->query(), "--tokens", dir_ / "tokens.txt"},
        dir_.path(), "trailmap-query");
    ASSERT_TRUE(WaitFor([this] { return HttpGet(port_, "/").status == 200; }, 10s))
        << node_->Stderr();
  }

  std::string Range() const {
    return "from=" + std::to_string(t0_) + "&to=" + std::to_string(t0_ + 60);
  }
  std::string StatsTarget() const {
    return "/api/stats?metric=disk.latency&format=json&" + Range();
  }

  nlohmann::json Self() {
    const HttpResult r = HttpGet(port_, "/api/self", std::string("Bearer ") + kToken);
    EXPECT_EQ(r.status, 200) << r.body;
    return nlohmann::json::parse(r.body, nullptr, false);
  }

  // Runs `hostile` on a thread while this one sends normal authorized requests: each must be
  // answered 200 within 1 s. Returns what `hostile` returned.
  template <typename T>
  T WhileNormalRequestsAreServed(std::function<T()> hostile) {
    std::future<T> done = std::async(std::launch::async, std::move(hostile));
    int normal = 0;
    do {
      const auto start = Clock::now();
      const HttpResult r = HttpGet(port_, StatsTarget(), std::string("Bearer ") + kToken);
      const double ms = MsSince(start);
      EXPECT_EQ(r.status, 200) << r.body;
      EXPECT_LT(ms, 1000) << "a normal request waited while hostile ones were sent";
      ++normal;
    } while (done.wait_for(50ms) != std::future_status::ready);
    EXPECT_GE(normal, 1);
    return done.get();
  }

  // (target, the 400's message) pairs.
  using Refusals = std::vector<std::pair<std::string, std::string>>;

  // Sends each target with the token `rounds` times while normal requests are served (above);
  // returns those not refused 400 within 1 s with exactly their message.
  std::vector<std::string> NotRefusedAtOnce(const Refusals& cases, int rounds = 1) {
    return WhileNormalRequestsAreServed<std::vector<std::string>>([this, &cases, rounds] {
      std::vector<std::string> failures;
      for (int round = 0; round < rounds; ++round) {
        for (const auto& [target, message] : cases) {
          const auto start = Clock::now();
          const HttpResult r = RawGet(port_, target, std::string("Bearer ") + kToken);
          const double ms = MsSince(start);
          const nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
          if (r.status != 400 || ms > 1000 || !body.is_object() || body["error"] != message) {
            failures.push_back(target.substr(0, 100) + ": " + std::to_string(r.status) + " after " +
                               std::to_string(static_cast<int>(ms)) +
                               " ms: " + r.body.substr(0, 300));
          }
        }
      }
      return failures;
    });
  }

  TempDir dir_;
  std::unique_ptr<Aggregator> agg_;
  std::unique_ptr<Process> node_;
  int port_ = 0;
  int64_t t0_ = 0;
};

// The spellings of /api/ and /metrics paths a client could send: each must be one path to the
// token check and the router alike.
std::vector<std::string> HostileTargets(const std::string& query) {
  return {
      "/%61pi/heatmap?" + query,
      "/%61pi/stats?" + query,
      "/api%2Fstats?" + query,
      "/api%2fstats?" + query,
      "/%61pi/heatmap/live?" + query,
      "/api/%73tats?" + query,
      "/api/stat%73?" + query,
      "/%2561pi/stats?" + query,
      "/api%252Fstats?" + query,
      "//api/stats?" + query,
      "/./api/stats?" + query,
      "/x/../api/stats?" + query,
      "/api/./stats?" + query,
      "/api//stats?" + query,
      "/api/stats/?" + query,
      "/API/stats?" + query,
      "/Api/Stats?" + query,
      "http://127.0.0.1/api/stats?" + query,
      "HTTP://127.0.0.1:7402/api/stats?" + query,
      "/metrics",
      "/%6detrics",
      "/metric%73",
      "/METRICS",
      "/metrics/",
      "//metrics",
      "/api/self",
      "/api/%73elf",
      "/api/self/",
      "/API/self",
      "/api/stats;x?" + query,
      "/api;/stats?" + query,
      "/api/stats#x?" + query,
      "/api\\stats?" + query,
      "/api%5cstats?" + query,
      "/api/stats%00?" + query,
      "/api%00/stats?" + query,
      "/api/stats%0d%0a?" + query,
      "/%2e/api/stats?" + query,
      "/%2e%2e/api/stats?" + query,
      "/api/stats?access_token=&" + query,
      "/api/stats?" + query + "&access_token",
      "/api/stats?%61ccess_token=x&" + query,
      "*",
  };
}

TEST_F(HostileHttpAuthSystem, NoSpellingOfAnApiPathGetsPastTheToken) {
  const uint64_t unauthorized_before = Self()["unauthorized"].get<uint64_t>();
  struct Outcome {
    std::vector<std::string> failures;
    uint64_t refused_401 = 0;
  };
  const std::vector<std::string> targets =
      HostileTargets("metric=disk.latency&format=json&" + Range());
  const Outcome outcome = WhileNormalRequestsAreServed<Outcome>([this, &targets] {
    Outcome o;
    for (const std::string& target : targets) {
      const HttpResult r = RawGet(port_, target);
      if (r.status == 401) {
        ++o.refused_401;
      } else if (r.status != 400 && r.status != 404) {
        o.failures.push_back(target + " without a token: " + std::to_string(r.status) + " " +
                             r.body.substr(0, 200));
      }
      // Whatever the status, nothing of the data or the counters.
      if (r.body.find("web-1") != std::string::npos ||
          r.body.find("\"rows\"") != std::string::npos ||
          r.body.find("trailmap_query") != std::string::npos ||
          r.body.find("\"unauthorized\"") != std::string::npos) {
        o.failures.push_back(target + " without a token told: " + r.body.substr(0, 200));
      }
    }
    return o;
  });
  EXPECT_TRUE(outcome.failures.empty()) << ::testing::PrintToString(outcome.failures);
  std::printf("%zu spellings without a token: %llu refused 401, the rest 400 or 404\n",
              targets.size(), static_cast<unsigned long long>(outcome.refused_401));
  // Every 401 counted; the URLs that reach the token check at all are most of them.
  EXPECT_GE(outcome.refused_401, targets.size() - 8);
  EXPECT_EQ(Self()["unauthorized"].get<uint64_t>() - unauthorized_before, outcome.refused_401);

  // With the token, each is still refused (not answered under another name): 400 or 404.
  for (const std::string& target : targets) {
    if (target == "/metrics" || target == "/api/self" ||
        target.find("access_token") != std::string::npos) {
      continue;  // the canonical ones, answered with a token
    }
    const HttpResult r = RawGet(port_, target, std::string("Bearer ") + kToken);
    EXPECT_TRUE(r.status == 400 || r.status == 404) << target << ": " << r.status << " " << r.body;
  }
  // The canonical paths with the token: answered; the page's files: open to anyone.
  EXPECT_EQ(RawGet(port_, StatsTarget(), std::string("Bearer ") + kToken).status, 200);
  EXPECT_EQ(RawGet(port_, "/metrics", std::string("Bearer ") + kToken).status, 200);
  EXPECT_EQ(RawGet(port_, "/app.js").status, 200);
  EXPECT_EQ(RawGet(port_, "/").status, 200);
  EXPECT_EQ(Self()["server_errors"], 0);
}

TEST_F(HostileHttpAuthSystem, TheBearerSchemeIsCaseInsensitive) {
  for (const std::string scheme : {"Bearer ", "bearer ", "BEARER ", "bEaReR ", "Bearer   "}) {
    const HttpResult r = RawGet(port_, StatsTarget(), scheme + kToken + "  ");
    EXPECT_EQ(r.status, 200) << "[" << scheme << "] " << r.body;
  }
  EXPECT_EQ(RawGet(port_, StatsTarget(), std::string("Bearers ") + kToken).status, 401);
  EXPECT_EQ(RawGet(port_, StatsTarget(), std::string("Basic ") + kToken).status, 401);
}

// A name the aggregator cannot read would cost a shard's answer and hold a worker until the
// timeout: refused here at once. The timeout asked for is 3 s, so a request that reached the
// fan-out would take that long (waiting for an answer that does not come).
TEST_F(HostileHttpAuthSystem, NamesThatDoNotValidateAreRefusedAtOnce) {
  const std::string tail = "&timeout=3s&" + Range();
  const Refusals cases = {
      {"/api/heatmap?metric=%ff" + tail, "--metric \"\\xff\": not valid UTF-8"},
      {"/api/heatmap?metric=disk%00x" + tail,
       "--metric \"disk\\x00x\": a metric name is 1 to 128 bytes of A-Z a-z 0-9 _ . -"},
      {"/api/stats?metric=disk%0d%0ax" + tail,
       "--metric \"disk\\x0d\\x0ax\": a metric name is 1 to 128 bytes of A-Z a-z 0-9 _ . -"},
      {"/api/trails?metric=" + std::string(10'000, 'm') + tail,
       "--metric \"" + std::string(64, 'm') +
           "...\": a metric name is 1 to 128 bytes of A-Z a-z 0-9 _ . - (this one is 10000)"},
      {"/api/heatmap/live?metric=%c3%a9" + tail,
       "--metric \"\\xc3\\xa9\": a metric name is 1 to 128 bytes of A-Z a-z 0-9 _ . -"},
      {"/api/stats?metric=disk.latency&by=op%00" + tail,
       "--by \"op\\x00\": give host or a field key: 1 to 128 bytes of A-Z a-z 0-9 _ . -"},
      {"/api/stats?metric=disk.latency&by=" + std::string(129, 'k') + tail,
       "--by \"" + std::string(64, 'k') +
           "...\": give host or a field key: 1 to 128 bytes of A-Z a-z 0-9 _ . -"},
      {"/api/stats?metric=disk.latency&hosts=web-1,a%0a" + tail,
       "--hosts \"a\\x0a\": a host name is 1 to 256 bytes of UTF-8 text without control "
       "characters"},
      {"/api/fields?metric=disk%20latency" + tail,
       "--metric \"disk latency\": a metric name is 1 to 128 bytes of A-Z a-z 0-9 _ . -"},
      {"/api/stats?metric=disk.latency&timeout=1h&" + Range(),
       "--timeout 1h: at most 60s (a query waits at most that long for its shards)"},
      {"/api/metrics?timeout=61s",
       "--timeout 61s: at most 60s (a query waits at most that long for its shards)"},
  };
  const std::vector<std::string> failures = NotRefusedAtOnce(cases);
  EXPECT_TRUE(failures.empty()) << ::testing::PrintToString(failures);

  // The CLI runs the same check: exit 2 at once, naming the flag.
  const auto cli = [this](std::vector<std::string> args) {
    args.insert(args.end(), {"--from", std::to_string(t0_), "--to", std::to_string(t0_ + 60)});
    const auto start = Clock::now();
    const CommandResult r = Cli(args, agg_->query());
    EXPECT_LT(MsSince(start), 5000) << ::testing::PrintToString(args);
    return r;
  };
  CommandResult r = cli({"heatmap", "--metric", "disk\xff", "--timeout", "3s"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "trailmap heatmap: --metric \"disk\\xff\": not valid UTF-8\n");
  r = cli({"stats", "--metric", std::string(10'000, 'm'), "--timeout", "3s"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("a metric name is 1 to 128 bytes"), std::string::npos) << r.err;
  r = cli({"stats", "--metric", "disk.latency", "--by", "a\r\nb", "--timeout", "3s"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err,
            "trailmap stats: --by \"a\\x0d\\x0ab\": give host or a field key: 1 to 128 "
            "bytes of A-Z a-z 0-9 _ . -\n");
  r = cli({"stats", "--metric", "disk.latency", "--timeout", "1h"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err,
            "trailmap stats: --timeout 1h: at most 60s (a query waits at most that long "
            "for its shards)\n");
  EXPECT_EQ(Self()["server_errors"], 0);
}

// Invalid UTF-8 in a parameter is the client's mistake, named: 400 (not 500, not counted as a
// server error), and the CLI's exit 2 with the same words.
TEST_F(HostileHttpAuthSystem, ParametersThatAreNotUtf8Are400NamingThem) {
  const std::string head = "/api/heatmap?metric=disk.latency&" + Range();
  const Refusals cases = {
      {head + "&by=%ff", "--by \"\\xff\": not valid UTF-8"},
      {head + "&palette=%ff", "--palette \"\\xff\": not valid UTF-8"},
      {head + "&%ff=1", "the parameter name \"\\xff\" is not valid UTF-8"},
      {head + "&where=%ff", "--where \"\\xff\": not valid UTF-8"},
      {head + "&select=%c0%af&by=host", "--select \"\\xc0\\xaf\": not valid UTF-8"},
      {head + "&overlay=p9%ed%a0%80", "--overlay \"p9\\xed\\xa0\\x80\": not valid UTF-8"},
      {"/api/flame?title=%fe%ff&" + Range(), "--title \"\\xfe\\xff\": not valid UTF-8"},
      {"/api/stats?metric=disk.latency&sort=%ff&" + Range(), "--sort \"\\xff\": not valid UTF-8"},
  };
  const std::vector<std::string> failures = NotRefusedAtOnce(cases);
  EXPECT_TRUE(failures.empty()) << ::testing::PrintToString(failures);
  EXPECT_EQ(Self()["server_errors"], 0);

  // The CLI: the same words, exit 2 (--select has no set of values; --by, --where are names).
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--by", "\xff"}, {"--where", "\xff"}, {"--select", "\xc0\xaf"}}) {
    std::vector<std::string> args = {"heatmap",
                                     "--metric",
                                     "disk.latency",
                                     "--from",
                                     std::to_string(t0_),
                                     "--to",
                                     std::to_string(t0_ + 60),
                                     "--format",
                                     "json",
                                     flag,
                                     value};
    if (flag == "--select") args.insert(args.end(), {"--by", "host"});
    const CommandResult r = Cli(args, agg_->query());
    EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.err;
    EXPECT_EQ(r.err, "trailmap heatmap: " + flag + " \"" +
                         (value == "\xff" ? std::string("\\xff") : std::string("\\xc0\\xaf")) +
                         "\": not valid UTF-8\n");
  }
  // An option with a set of values is refused by its table while CLI11 parses, naming it.
  const CommandResult palette =
      Cli({"heatmap", "--metric", "disk.latency", "--palette", "\xff"}, agg_->query());
  EXPECT_EQ(palette.exit_code, 2) << palette.err;
  EXPECT_EQ(palette.err, "trailmap heatmap: --palette \\xff: give heat or false\n");
}

// A picture is at most 16 Mi pixels: named in a 400 at once, from the API and the CLI.
TEST_F(HostileHttpAuthSystem, PicturesOverThePixelBudgetAreRefused) {
  const std::string bearer = std::string("Bearer ") + kToken;
  const std::string budget = " pixels, at most 16,777,216 (16 Mi): ask for a smaller picture";
  const Refusals cases = {
      {"/api/heatmap?metric=disk.latency&format=png&width=20000&height=10000&" + Range(),
       "--width 20000 × --height 10000 is 200,000,000" + budget},
      {"/api/heatmap?metric=disk.latency&format=svg&width=20000&height=20000&" + Range(),
       "--width 20000 × --height 20000 is 400,000,000" + budget},
      {"/api/trails?metric=disk.latency&format=png&height=100000&" + Range(),
       "--height 100000 × the trails' width 1024 is 102,400,000" + budget},
  };
  const std::vector<std::string> failures = NotRefusedAtOnce(cases, /*rounds=*/4);
  EXPECT_TRUE(failures.empty()) << ::testing::PrintToString(failures);
  // Within the budget it is drawn.
  EXPECT_EQ(
      RawGet(port_, "/api/heatmap?metric=disk.latency&format=png&width=4096&height=1024&" + Range(),
             bearer)
          .status,
      200);
  const CommandResult r = Cli({"heatmap", "--metric", "disk.latency", "--from", std::to_string(t0_),
                               "--to", std::to_string(t0_ + 60), "--format", "png", "--width",
                               "20000", "--height", "10000", "-o", dir_ / "big.png"},
                              agg_->query());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err,
            "trailmap heatmap: --width 20000 × --height 10000 is 200,000,000" + budget + "\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "big.png"));
}

mode_t Mode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

// keygen makes keys, so it needs none: it runs with TRAILMAP_SERVER_KEY set and TRAILMAP_KEY not
// (an operator's shell set up for queries), makes a missing --dir 0700, and never writes half a
// pair.
TEST_F(HostileHttpAuthSystem, KeygenNeedsNoKeyMakesItsDirAndLeavesNoOrphan) {
  const std::string saved_key = std::getenv("TRAILMAP_KEY");
  unsetenv("TRAILMAP_KEY");
  const std::string keys = dir_ / "new/keys";
  CommandResult r = RunProgram({Binary("trailmap"), "keygen", "web-9", "--dir", keys});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Mode(dir_ / "new"), 0700u);
  EXPECT_EQ(Mode(keys), 0700u);
  EXPECT_EQ(Mode(keys + "/web-9.key"), 0600u);
  EXPECT_TRUE(std::filesystem::exists(keys + "/web-9.pub"));

  WriteFile(keys + "/ops.pub", "someone else's\n");
  r = RunProgram({Binary("trailmap"), "keygen", "ops", "--dir", keys});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "trailmap keygen: " + keys +
                       "/ops.pub exists; keygen never overwrites a key (move it away, or pick "
                       "another NAME)\n");
  EXPECT_FALSE(std::filesystem::exists(keys + "/ops.key"));
  EXPECT_EQ(ReadFile(keys + "/ops.pub"), "someone else's\n");
  setenv("TRAILMAP_KEY", saved_key.c_str(), 1);
}

}  // namespace
}  // namespace trailmap::test
