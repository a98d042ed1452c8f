// Hostile and careless load on trailmap-query, against the real program on loopback: slow
// requests that hold every worker, descriptor and connection exhaustion, live viewers that
// leave, abandoned requests, a full queue. Under each, a normal request sent meanwhile is
// answered within a second.
//
// The slow shard is a ZeroMQ ROUTER that takes queries and never answers: to the fan-out the
// same as a SIGSTOPped aggregator (its port accepts, then nothing).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "tests/cluster.h"
#include "tests/harness.h"
#include "tests/http_client.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A query port that takes queries and never answers.
class SilentShard {
 public:
  SilentShard() : port_(FreePort()) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind("tcp://127.0.0.1:" + std::to_string(port_));
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  // True once `n` queries in all have come, within `timeout`.
  bool WaitQueries(size_t n, std::chrono::milliseconds timeout) {
    const auto end = Clock::now() + timeout;
    while (queries_ < n && Clock::now() < end) {
      zmq::pollitem_t item{static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(50));
      zmq::message_t frame;
      while (socket_.recv(frame, zmq::recv_flags::dontwait)) {
        if (!frame.more()) ++queries_;
      }
    }
    return queries_ >= n;
  }

 private:
  int port_;
  zmq::context_t context_;
  zmq::socket_t socket_{context_, zmq::socket_type::router};
  size_t queries_ = 0;
};

// A connection to 127.0.0.1:port (-1 when it fails), reads timing out after `timeout`.
int Connect(int port, std::chrono::milliseconds timeout = 5s) { return ConnectTcp(port, timeout); }

void SendGet(int fd, const std::string& target) {
  const std::string request =
      "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
}

// Reads until `until` has come (or, when empty, the end), the connection ends or a read times out.
std::string ReadUntil(int fd, const std::string& until = "") {
  std::string text;
  char buffer[4096];
  while (until.empty() || text.find(until) == std::string::npos) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

// GET target, the whole answer with its headers ("" when there was none within `timeout`).
std::string Exchange(int port, const std::string& target, std::chrono::milliseconds timeout = 5s) {
  const int fd = Connect(port, timeout);
  if (fd < 0) return "";
  SendGet(fd, target);
  std::string text = ReadUntil(fd);
  close(fd);
  return text;
}

int StatusOf(const std::string& answer) {
  return answer.rfind("HTTP/1.1 ", 0) == 0 ? std::stoi(answer.substr(9, 3)) : -1;
}

// The value of `name` in a Prometheus text, -1 when it is not there.
double MetricValue(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  }
  return -1;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// CPU time (user + system) of process `pid`, in clock ticks.
long CpuTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // state is field 3
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return utime + stime;
}

// Descriptors process `pid` has open.
size_t OpenFds(pid_t pid) {
  size_t n = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    (void)entry;
    ++n;
  }
  return n;
}

// trailmap-query on a free port, asking `aggregators` (a SilentShard: in plaintext; an Aggregator:
// with the test keys); `nofile` > 0 starts it with that many descriptors at most (soft and hard,
// as `ulimit -n`).
class QueryNode {
 public:
  QueryNode(const TempDir& dir, const std::string& name, const std::string& aggregators,
            std::vector<std::string> extra = {}, int nofile = 0, bool plaintext = true)
      : port_(FreePort()) {
    std::vector<std::string> argv;
    if (nofile > 0) {
      argv = {"/usr/bin/prlimit",
              "--nofile=" + std::to_string(nofile) + ":" + std::to_string(nofile), "--"};
    }
    argv.insert(argv.end(), {Binary("trailmap-query"), "--listen",
                             "127.0.0.1:" + std::to_string(port_), "--aggregators", aggregators});
    if (plaintext) argv.push_back("--insecure-plaintext");
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = std::make_unique<Process>(argv, dir.path(), name);
  }
  int port() const { return port_; }
  Process& process() { return *process_; }
  std::string Log() const { return process_->Stderr(); }
  bool Ready() {
    return WaitFor([this] { return StatusOf(Exchange(port_, "/", 2s)) == 200; }, 15s);
  }
  std::string Metrics() { return Exchange(port_, "/metrics"); }

 private:
  int port_;
  std::unique_ptr<Process> process_;
};

// Imports 60 seconds of disk.latency of host web-1 from `t0` into `agg`: `per_second` events a
// second, of 100 us, 200 us, 400 us, ...
void ImportLatencies(const TempDir& dir, Aggregator& agg, int64_t t0, int per_second) {
  std::string trace = "time latency\n";
  for (int s = 0; s < 60; ++s) {
    for (int i = 0; i < per_second; ++i) {
      trace += std::to_string((t0 + s) * 1'000'000 + i) + " " + std::to_string(100 << i) + "\n";
    }
  }
  WriteFile(dir / "web-1.trace", trace);
  const CommandResult imported = RunProgram(
      {Binary("trailmap"), "import", "--quiet", "--host", "web-1", "--metric", "disk.latency",
       "--time-unit", "us", "--value-unit", "us", "--ingest", agg.ingest(), dir / "web-1.trace"});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
}

class HostileHttpLoad : public ::testing::Test {
 protected:
  TempDir dir_;
};

// Requests that wait out a long timeout on a shard that never answers hold every worker (and
// two more wait in the queue); the page, /metrics and /api/self are still answered at once, and
// SIGTERM ends the server without waiting for them.
TEST_F(HostileHttpLoad, SlowRequestsHoldNeitherThePageNorShutdown) {
  SilentShard shard;
  QueryNode node(dir_, "slow", shard.endpoint(), {"--workers", "2", "--timeout", "30s"});
  ASSERT_TRUE(node.Ready()) << node.Log();
  std::vector<std::unique_ptr<HttpCall>> slow;
  for (int i = 0; i < 4; ++i) {
    slow.push_back(std::make_unique<HttpCall>(node.port(), "/api/metrics"));
  }
  ASSERT_TRUE(shard.WaitQueries(2, 10s)) << "both workers ask the shard\n" << node.Log();
  for (const std::string target :
       {"/", "/app.js", "/style.css", "/index.html", "/metrics", "/api/self", "/no-such-file"}) {
    const auto start = Clock::now();
    const std::string answer = Exchange(node.port(), target);
    const double ms = MsSince(start);
    EXPECT_EQ(StatusOf(answer), target == "/no-such-file" ? 404 : 200) << target << "\n" << answer;
    EXPECT_LT(ms, 1000) << target;
  }
  const auto start = Clock::now();
  node.process().Kill(SIGTERM);
  const int code = node.process().Wait(10s);
  const double ms = MsSince(start);
  EXPECT_EQ(code, 0) << node.Log();
  EXPECT_LT(ms, 3000) << "SIGTERM to exit with 2 requests in flight and 2 queued\n" << node.Log();
  std::printf("SIGTERM to exit with 2 requests in flight and 2 queued: %.0f ms\n", ms);
}

// SIGINT too, and while the slow requests' clients are still there.
TEST_F(HostileHttpLoad, SigintDoesNotWaitForInFlightRequests) {
  SilentShard shard;
  QueryNode node(dir_, "sigint", shard.endpoint(), {"--workers", "1", "--timeout", "30s"});
  ASSERT_TRUE(node.Ready()) << node.Log();
  HttpCall held(node.port(), "/api/stats?metric=disk.latency");
  ASSERT_TRUE(shard.WaitQueries(1, 10s)) << node.Log();
  const auto start = Clock::now();
  node.process().Kill(SIGINT);
  EXPECT_EQ(node.process().Wait(10s), 0) << node.Log();
  EXPECT_LT(MsSince(start), 3000) << node.Log();
}

// With --max-connections above what 64 descriptors allow, idle connections exhaust them: the
// failing accept pauses (no spinning), logs once and once more when it accepts again, and a
// request sent once they close is answered at once.
TEST_F(HostileHttpLoad, RunningOutOfDescriptorsNeitherSpinsNorFloodsTheLog) {
  SilentShard shard;
  QueryNode node(dir_, "nofile", shard.endpoint(), {"--max-connections", "1000"}, 64);
  ASSERT_TRUE(node.Ready()) << node.Log();
  std::vector<int> idle;
  for (int i = 0; i < 80; ++i) idle.push_back(Connect(node.port()));
  for (int fd : idle) ASSERT_GE(fd, 0);
  ASSERT_TRUE(WaitFor([&] { return node.Log().find("accept failed") != std::string::npos; }, 5s))
      << node.Log();
  const long before = CpuTicks(node.process().pid());
  std::this_thread::sleep_for(1s);
  const long ticks = CpuTicks(node.process().pid()) - before;
  EXPECT_LT(ticks, sysconf(_SC_CLK_TCK) / 5) << "CPU ticks in one second of exhaustion";
  const std::string log = node.Log();
  EXPECT_EQ(Count(log, "accept failed"), 1u) << log.substr(0, 4000);
  EXPECT_NE(log.find("accept failed: Too many open files; retrying after 10 ms, doubling up to "
                     "1000 ms, or when a connection closes (logged again when it accepts)"),
            std::string::npos)
      << log.substr(0, 4000);
  EXPECT_LT(log.size(), 4096u);
  for (int fd : idle) close(fd);
  const auto start = Clock::now();
  const std::string answer = Exchange(node.port(), "/");
  EXPECT_EQ(StatusOf(answer), 200) << node.Log();
  EXPECT_LT(MsSince(start), 1000);
  EXPECT_TRUE(
      WaitFor([&] { return node.Log().find(": accepting again after ") != std::string::npos; }, 2s))
      << node.Log();
  const std::string metrics = node.Metrics();
  EXPECT_GT(MetricValue(metrics, "trailmap_query_http_accept_failures_total"), 0) << metrics;
  EXPECT_EQ(MetricValue(metrics, "trailmap_query_http_connections_refused_total"), 0) << metrics;
}

// By default the connection cap fits the descriptor limit (64: 32 connections). Under it, a
// normal request is answered while idle connections are open; past it, new connections are
// closed at once and counted, the server does not spin, and once they close it serves again.
TEST_F(HostileHttpLoad, ConnectionsPastTheCapAreClosedAtOnceAndCounted) {
  SilentShard shard;
  QueryNode node(dir_, "cap", shard.endpoint(), {}, 64);
  ASSERT_TRUE(node.Ready()) << node.Log();
  EXPECT_NE(node.Log().find("at most 32 connections at once (fits the open-file limit of 64)"),
            std::string::npos)
      << node.Log();
  const size_t fds = OpenFds(node.process().pid());
  std::vector<int> idle;
  for (int i = 0; i < 20; ++i) idle.push_back(Connect(node.port()));
  auto start = Clock::now();
  EXPECT_EQ(StatusOf(Exchange(node.port(), "/")), 200) << node.Log();
  EXPECT_LT(MsSince(start), 1000);
  for (int i = 0; i < 60; ++i) idle.push_back(Connect(node.port(), 2s));
  // The 12 more under the cap wait for a request; the other 48 are closed at once.
  start = Clock::now();
  char byte;
  EXPECT_EQ(recv(idle.back(), &byte, 1, 0), 0) << "closed at once";
  EXPECT_LT(MsSince(start), 1000);
  const long before = CpuTicks(node.process().pid());
  std::this_thread::sleep_for(1s);
  EXPECT_LT(CpuTicks(node.process().pid()) - before, sysconf(_SC_CLK_TCK) / 5);
  for (int fd : idle) close(fd);
  // Once the server has closed its side of them (else the next might still find 32 open).
  ASSERT_TRUE(WaitFor([&] { return OpenFds(node.process().pid()) <= fds; }, 5s));
  start = Clock::now();
  const std::string metrics = node.Metrics();
  EXPECT_LT(MsSince(start), 1000);
  EXPECT_EQ(MetricValue(metrics, "trailmap_query_http_connections_refused_total"), 48) << metrics;
  EXPECT_EQ(MetricValue(metrics, "trailmap_query_http_accept_failures_total"), 0) << metrics;
  const std::string log = node.Log();
  EXPECT_EQ(Count(log,
                  "32 connections open, the most it takes: closing new ones at once until "
                  "one closes"),
            1u)
      << log;
  EXPECT_EQ(Count(log, "below 32 connections again; refused 48 meanwhile"), 1u) << log;
}

// The agent's --metrics listener (net/metrics_http.h, also the OTLP receiver's and the
// aggregator's) under 128 descriptors: the same cap fitted to the limit (64), no spinning,
// counted in its own /metrics, and served again once the connections close. (Its /proc source
// reads an empty directory: it keeps descriptors open per process.)
TEST_F(HostileHttpLoad, AgentMetricsListenerCapsItsConnections) {
  SilentShard shard;
  const int port = FreePort();
  std::filesystem::create_directory(dir_ / "proc");
  Process agent({"/usr/bin/prlimit", "--nofile=128:128", "--", Binary("trailmap-agent"), "--host",
                 "web-1", "--statsd", "127.0.0.1:" + std::to_string(FreePort()), "--spool",
                 dir_ / "spool", "--aggregators", shard.endpoint(), "--otlp", "off", "--proc-root",
                 dir_ / "proc", "--metrics", "127.0.0.1:" + std::to_string(port)},
                dir_.path(), "agent");
  ASSERT_TRUE(WaitFor([port] { return StatusOf(Exchange(port, "/metrics", 2s)) == 200; }, 15s))
      << agent.Stderr();
  const size_t fds = OpenFds(agent.pid());
  std::vector<int> idle;
  for (int i = 0; i < 80; ++i) idle.push_back(Connect(port, 2s));
  char byte;
  auto start = Clock::now();
  EXPECT_EQ(recv(idle.back(), &byte, 1, 0), 0) << "closed at once";
  EXPECT_LT(MsSince(start), 1000);
  const long before = CpuTicks(agent.pid());
  std::this_thread::sleep_for(1s);
  EXPECT_LT(CpuTicks(agent.pid()) - before, sysconf(_SC_CLK_TCK) / 5);
  for (int fd : idle) close(fd);
  ASSERT_TRUE(WaitFor([&] { return OpenFds(agent.pid()) <= fds; }, 10s));
  start = Clock::now();
  const std::string metrics = Exchange(port, "/metrics");
  EXPECT_LT(MsSince(start), 1000);
  EXPECT_EQ(MetricValue(metrics, "trailmap_agent_http_connections_refused_total"), 16)
      << metrics << agent.Stderr();
  EXPECT_EQ(MetricValue(metrics, "trailmap_agent_http_accept_failures_total"), 0) << metrics;
  EXPECT_EQ(Count(agent.Stderr(), "64 connections open, the most it takes"), 1u) << agent.Stderr();
  EXPECT_EQ(agent.Stderr().find("Too many open files"), std::string::npos) << agent.Stderr();
}

// Live viewers that close while their stream waits for its first column (the longest lag, or
// a range that ends in an hour) give their slots back: a new viewer is served at once, and an
// idle stream sends a keepalive comment.
TEST_F(HostileHttpLoad, ClosedLiveViewersFreeTheirSlots) {
  Aggregator agg(dir_, "agg-1", {"--no-self-metrics"});
  agg.Start();
  ImportLatencies(dir_, agg, UnixNow() - 120, 1);
  QueryNode node(dir_, "live", agg.query(), {"--stream-keepalive", "300ms"}, 0, false);
  ASSERT_TRUE(node.Ready()) << node.Log();
  const std::string waits_lag = "/api/heatmap/live?metric=disk.latency&from=-2m&lag=60";
  const std::string waits_to =
      "/api/heatmap/live?metric=disk.latency&from=-2m&to=" + std::to_string(UnixNow() + 3600);
  std::vector<int> viewers;
  for (int i = 0; i < 64; ++i) {
    const int fd = Connect(node.port(), 20s);
    ASSERT_GE(fd, 0);
    SendGet(fd, i % 2 ? waits_lag : waits_to);
    const std::string head = ReadUntil(fd, "event: heatmap");
    ASSERT_EQ(StatusOf(head), 200) << i << ": " << head;
    viewers.push_back(fd);
  }
  EXPECT_EQ(StatusOf(Exchange(node.port(), waits_lag)), 503);
  auto start = Clock::now();
  EXPECT_EQ(StatusOf(Exchange(node.port(), "/")), 200);
  EXPECT_LT(MsSince(start), 1000) << "the page, while 64 streams wait";
  for (int fd : viewers) close(fd);
  start = Clock::now();
  int fd = -1;
  std::string head;
  ASSERT_TRUE(WaitFor(
      [&] {
        if (fd >= 0) close(fd);
        fd = Connect(node.port());
        SendGet(fd, waits_lag);
        head = ReadUntil(fd, "event: heatmap");
        return StatusOf(head) == 200;
      },
      3s))
      << head << node.Log();
  std::printf("a new viewer served %.0f ms after 64 closed\n", MsSince(start));
  const std::string more = ReadUntil(fd, ": keepalive\n\n");
  EXPECT_NE(more.find(": keepalive\n\n"), std::string::npos) << more;
  close(fd);
  // The lag is capped: past it a 400 naming the cap.
  const std::string refused =
      Exchange(node.port(), waits_lag.substr(0, waits_lag.size() - 2) + "61");
  EXPECT_EQ(StatusOf(refused), 400);
  EXPECT_NE(refused.find("--lag 61: give a whole number from 0 to 60"), std::string::npos)
      << refused;
}

// Requests whose clients left before a worker took them are skipped, so 40 of them do not hold
// up the next; a full queue is refused at once with 503 and Retry-After.
TEST_F(HostileHttpLoad, AbandonedRequestsAreSkippedAndAFullQueueIsRefused) {
  SilentShard shard;
  QueryNode node(dir_, "abandoned", shard.endpoint(), {"--workers", "2", "--timeout", "1s"});
  ASSERT_TRUE(node.Ready()) << node.Log();
  for (int i = 0; i < 40; ++i) HttpCall gone(node.port(), "/api/metrics");
  auto start = Clock::now();
  const HttpResult next = HttpGet(node.port(), "/api/metrics");
  const double ms = MsSince(start);
  EXPECT_EQ(next.status, 502) << next.body;
  // At most the two in flight (1 s), then its own timeout (1 s).
  EXPECT_LT(ms, 2800) << node.Log();
  std::printf("a request after 40 abandoned ones: %.0f ms (its own timeout 1000 ms)\n", ms);
  const std::string metrics = node.Metrics();
  EXPECT_EQ(MetricValue(metrics, "trailmap_query_http_abandoned_total"), 40) << metrics;

  SilentShard busy;
  QueryNode full(dir_, "full", busy.endpoint(),
                 {"--workers", "1", "--max-queue", "2", "--timeout", "10s"});
  ASSERT_TRUE(full.Ready()) << full.Log();
  std::vector<std::unique_ptr<HttpCall>> waiting;
  waiting.push_back(std::make_unique<HttpCall>(full.port(), "/api/metrics"));
  ASSERT_TRUE(busy.WaitQueries(1, 5s)) << "the worker waits on the shard\n" << full.Log();
  for (int i = 0; i < 2; ++i) {
    waiting.push_back(std::make_unique<HttpCall>(full.port(), "/api/metrics"));
  }
  ASSERT_TRUE(
      WaitFor([&] { return MetricValue(full.Metrics(), "trailmap_query_http_queued") == 2; }, 5s))
      << full.Metrics();
  start = Clock::now();
  const std::string refused = Exchange(full.port(), "/api/metrics");
  EXPECT_LT(MsSince(start), 1000);
  EXPECT_EQ(StatusOf(refused), 503) << refused;
  EXPECT_NE(refused.find("\r\nRetry-After: 1\r\n"), std::string::npos) << refused;
  EXPECT_NE(refused.find("\"error\": \"too many requests waiting (2 queued for 1 worker): try "
                         "again in a second\""),
            std::string::npos)
      << refused;
  start = Clock::now();
  EXPECT_EQ(StatusOf(Exchange(full.port(), "/")), 200);
  EXPECT_LT(MsSince(start), 1000) << "the page, while the queue is full";
  EXPECT_EQ(MetricValue(full.Metrics(), "trailmap_query_http_queue_full_total"), 1);
}

// A PNG heat map whose drawing outlasts twice the request's timeout (failpoint
// query.heatmap.draw sleeps as a 200-megapixel drawing would take) stops drawing and answers
// 503 naming the limit; a JSON one within its time is answered.
TEST_F(HostileHttpLoad, DrawingPastTheDeadlineStops) {
  Aggregator agg(dir_, "agg-1", {"--no-self-metrics"});
  agg.Start();
  ImportLatencies(dir_, agg, UnixNow() - 120, 3);
  setenv("TRAILMAP_FAILPOINTS", "query.heatmap.draw=sleep:1500", 1);
  QueryNode node(dir_, "deadline", agg.query(), {}, 0, false);
  unsetenv("TRAILMAP_FAILPOINTS");
  ASSERT_TRUE(node.Ready()) << node.Log();
  const std::string target = "/api/heatmap?metric=disk.latency&from=-2m&timeout=500ms";
  HttpCall png(node.port(), target + "&format=png");
  const auto start = Clock::now();
  EXPECT_EQ(StatusOf(Exchange(node.port(), "/")), 200);
  EXPECT_LT(MsSince(start), 1000) << "the page, while a worker draws";
  const HttpResult stopped = png.Receive();
  ASSERT_EQ(stopped.status, 503) << stopped.content_type;
  EXPECT_EQ(stopped.body,
            "{\n  \"error\": \"not drawn within twice --timeout 500ms (the shards' time, and as "
            "long again to draw): ask for fewer pixels (width, height) or columns, a shorter "
            "range, or a longer timeout\"\n}\n");
  const HttpResult json = HttpGet(node.port(), target + "&format=json");
  EXPECT_EQ(json.status, 200) << json.body;
  const std::string metrics = node.Metrics();
  EXPECT_EQ(MetricValue(metrics, "trailmap_query_http_server_errors_total"), 1) << metrics;
}

// Resident memory of process `pid` (VmRSS), in bytes.
uint64_t ResidentBytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // in kB
  }
  return 0;
}

// Large answers (PNG heat maps of 16 Mpx, 48 MB of canvas each, eight at a time) do not stay
// resident once answered: the server gives the memory back past 256 MiB.
TEST_F(HostileHttpLoad, LargeAnswersDoNotStayResident) {
  Aggregator agg(dir_, "agg-1", {"--no-self-metrics"});
  agg.Start();
  const int64_t t0 = (UnixNow() - 600) / 60 * 60;
  ImportLatencies(dir_, agg, t0, 5);
  QueryNode node(dir_, "memory", agg.query(), {}, 0, false);
  ASSERT_TRUE(node.Ready()) << node.Log();
  const std::string range = "metric=disk.latency&from=" + std::to_string(t0) +
                            "&to=" + std::to_string(t0 + 60) + "&timeout=30s";
  ASSERT_EQ(HttpGet(node.port(), "/api/stats?" + range).status, 200);
  const uint64_t before = ResidentBytes(node.process().pid());
  uint64_t peak = 0;
  std::vector<std::unique_ptr<HttpCall>> large;
  for (int i = 0; i < 8; ++i) {
    large.push_back(std::make_unique<HttpCall>(
        node.port(), "/api/heatmap?" + range + "&format=png&width=4000&height=4000"));
  }
  for (auto& call : large) {
    const HttpResult r = call->Receive();
    EXPECT_EQ(r.status, 200) << r.body.substr(0, 200);
    EXPECT_EQ(r.content_type, "image/png");
    peak = std::max(peak, ResidentBytes(node.process().pid()));
  }
  uint64_t after = 0;
  WaitFor(
      [&] {
        after = ResidentBytes(node.process().pid());
        return after < (uint64_t{280} << 20);
      },
      3s);
  std::printf("resident: %.0f MiB before, %.0f MiB at the largest seen, %.0f MiB after\n",
              before / 1048576.0, peak / 1048576.0, after / 1048576.0);
  EXPECT_LT(after, uint64_t{280} << 20) << "before " << before << ", peak " << peak;
}

// --listen takes a host name: localhost resolves to loopback and needs no tokens; a name that
// does not resolve is a usage error naming it.
TEST_F(HostileHttpLoad, ListenTakesAHostName) {
  SilentShard shard;
  const int port = FreePort();
  Process node({Binary("trailmap-query"), "--listen", "localhost:" + std::to_string(port),
                "--aggregators", shard.endpoint(), "--insecure-plaintext"},
               dir_.path(), "localhost");
  ASSERT_TRUE(WaitFor([port] { return StatusOf(Exchange(port, "/", 2s)) == 200; }, 15s))
      << node.Stderr();
  const CommandResult unknown =
      RunProgram({Binary("trailmap-query"), "--listen", "no-such-host.invalid:7402",
                  "--aggregators", shard.endpoint(), "--insecure-plaintext"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--listen no-such-host.invalid:7402: cannot resolve "
                             "no-such-host.invalid: "),
            std::string::npos)
      << unknown.err;
}

}  // namespace
}  // namespace trailmap::test
