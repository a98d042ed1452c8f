// Hostile clients at a real trailmap-aggregator's ZeroMQ ports (ingest and query), below the
// CURVE handshake, where no key is needed to reach the socket:
//   - garbage of every shape an attacker would try next (random bytes, HTTP, a ZMTP greeting
//     with the NULL mechanism, an unknown version, a CURVE HELLO of garbage, a frame header
//     claiming 2^62 bytes, a megabyte of 0xff) is dropped at the handshake (the ZMTP-shaped ones
//     counted), while a real agent's batch is applied and a real query answered within 1 s each;
//   - hundreds of TCP connections that never say a word are closed after [limits]
//     handshake_timeout, and meanwhile hold nothing from anyone else;
//   - with its descriptors exhausted (RLIMIT_NOFILE 128, 200 silent connections) it serves again
//     once they are gone, and its log stays short.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/batch.h"
#include "core/histogram.h"
#include "ingest/shipper.h"
#include "tests/cluster.h"
#include "tests/http_client.h"
#include "tests/stored_events.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A raw TCP connection to 127.0.0.1:port, closed on destruction; -1 inside if it failed.
class RawTcp {
 public:
  explicit RawTcp(int port) : fd_(ConnectTcp(port)) {}
  ~RawTcp() {
    if (fd_ >= 0) close(fd_);
  }
  RawTcp(RawTcp&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  RawTcp(const RawTcp&) = delete;
  RawTcp& operator=(const RawTcp&) = delete;
  bool ok() const { return fd_ >= 0; }
  // Sends what the peer takes within a second (a peer that stops reading is fine).
  void Send(const std::string& bytes) {
    size_t off = 0;
    const auto deadline = Clock::now() + 1s;
    while (off < bytes.size() && Clock::now() < deadline) {
      pollfd p{fd_, POLLOUT, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<size_t>(n);
    }
  }
  // True once the peer has closed the connection (reads and drops what it sent before).
  bool ClosedByPeer() {
    char buf[4096];
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 0) <= 0) return false;
      const ssize_t n = recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) return true;
    }
  }

 private:
  int fd_ = -1;
};

// ZMTP 3 greeting (RFC 23): signature, version, a 20-byte mechanism name, as-server, filler.
std::string Greeting(const std::string& mechanism, char major = 3) {
  std::string g("\xff\0\0\0\0\0\0\0\x01\x7f", 10);
  g += major;
  g += '\x00';
  std::string m = mechanism;
  m.resize(20, '\0');
  g += m;
  g += std::string(32, '\0');
  return g;
}

struct Garbage {
  std::string name;   // what a failure reports
  std::string bytes;  // sent at once
  // Starts as a ZMTP 3 greeting, so libzmq reports its failed handshake (bytes that are not ZMTP
  // at all it closes without an event: they are dropped, not counted).
  bool zmtp;
};

// The garbage an attacker tries at a ZeroMQ port.
std::vector<Garbage> AllGarbage() {
  std::mt19937 random(42);
  std::string noise(4096, '\0');
  for (char& c : noise) c = static_cast<char>(random());
  std::string hello_of_garbage = Greeting("CURVE");
  hello_of_garbage += "\x04\xc8";  // a short command frame of 200 bytes
  hello_of_garbage += "\x05HELLO";
  hello_of_garbage += std::string(194, '\x5a');
  std::string huge_frame = Greeting("CURVE");
  huge_frame += "\x06";                                // a long command frame ...
  huge_frame += std::string("\x40\0\0\0\0\0\0\0", 8);  // ... of 2^62 bytes
  huge_frame += std::string(1000, 'x');
  return {{"random bytes", noise, false},
          {"an HTTP request", "GET /api/metrics HTTP/1.1\r\nHost: x\r\n\r\n", false},
          {"the NULL mechanism", Greeting("NULL") + std::string("\x04\x1a\x05READY", 8), true},
          {"the PLAIN mechanism", Greeting("PLAIN"), true},
          {"version 255", Greeting("CURVE", '\xff'), true},
          {"a HELLO of garbage", hello_of_garbage, true},
          {"a frame of 2^62 bytes", huge_frame, true},
          {"a megabyte of 0xff", std::string(1 << 20, '\xff'), false}};
}

Batch OneSecond(const std::string& host, int64_t second, uint64_t events) {
  Histogram h;
  h.Record(2'000'000, events);
  Batch b;
  b.host = host;
  b.series = {{"hostile.latency", MetricKind::kLatency, "ns", ""}};
  b.seconds = {{second, {{0, h.Encode()}}, {}}};
  return b;
}

ShipperOptions ShipperTo(const std::string& ingest, const std::string& host) {
  ShipperOptions o;
  o.endpoint = "tcp://" + ingest;
  o.agent_id = NewAgentId(host);
  o.curve = TestCurveClient();
  o.ack_timeout = 2s;
  o.poll_interval = 10ms;
  return o;
}

int PortOf(const std::string& endpoint) {
  return std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
}

// A batch of a fresh agent is applied within `limit` (from its send to its ack).
void ExpectABatchAppliedWithin(const std::string& ingest, const std::string& host,
                               std::chrono::milliseconds limit) {
  Shipper shipper(ShipperTo(ingest, host));
  const auto start = Clock::now();
  ASSERT_TRUE(shipper.Send(OneSecond(host, UnixNow() - 30, 5)));
  const Status flushed = shipper.Flush(10s);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();
  EXPECT_LE(took, limit) << host << "'s batch took " << took.count() << " ms";
}

// `trailmap metrics` answers within `limit` and lists hostile.latency.
void ExpectAQueryAnsweredWithin(const std::string& query, std::chrono::milliseconds limit) {
  const auto start = Clock::now();
  const CommandResult r = Cli({"metrics"}, query);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("hostile.latency"), std::string::npos) << r.out;
  EXPECT_LE(took, limit) << "the query took " << took.count() << " ms";
}

// The value of counter `name` whose labels hold `label` in the aggregator's Prometheus text at
// `metrics_port`; -1 when there is none.
double Counter(int metrics_port, const std::string& name, const std::string& label) {
  const HttpResult r = HttpGet(metrics_port, "/metrics");
  std::istringstream in(r.body);
  double value = -1;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(name + "{") && line.find(label) != std::string::npos)
      value = std::stod(line.substr(line.rfind(' ') + 1));
  }
  return value;
}

constexpr char kRefused[] = "trailmap_aggregator_connections_refused_total";

TEST(HostileZmqSystem, GarbageAtBothPortsIsDroppedCountedAndOthersAreServed) {
  TempDir dir;
  const int metrics_port = FreePort();
  // Garbage that leaves libzmq waiting for more (a frame header of 2^62 bytes) goes at the
  // handshake timeout; the rest at once.
  WriteFile(dir / "agg.toml", "[limits]\nhandshake_timeout = \"2s\"\n");
  Aggregator agg(dir, "agg-garbage",
                 {"--no-self-metrics", "--metrics", "127.0.0.1:" + std::to_string(metrics_port),
                  "--config", dir / "agg.toml"});
  agg.Start();
  ExpectABatchAppliedWithin(agg.ingest(), "before-1", 10s);  // also waits for its start

  std::vector<RawTcp> held;
  size_t zmtp = 0;
  for (const std::string& endpoint : {agg.ingest(), agg.query()}) {
    for (const Garbage& g : AllGarbage()) {
      RawTcp c(PortOf(endpoint));
      ASSERT_TRUE(c.ok()) << g.name;
      c.Send(g.bytes);
      zmtp += g.zmtp ? 1 : 0;
      held.push_back(std::move(c));  // held open: the server must close it, not the client
    }
  }
  // Meanwhile, with every one of them still open:
  ExpectABatchAppliedWithin(agg.ingest(), "during-1", 1s);
  ExpectAQueryAnsweredWithin(agg.query(), 1s);

  // Every garbage connection is closed by the aggregator, and each ZMTP-shaped one is counted as
  // a failed handshake.
  const size_t garbage = held.size();
  EXPECT_TRUE(WaitFor(
      [&] {
        size_t closed = 0;
        for (RawTcp& c : held) closed += c.ClosedByPeer() ? 1 : 0;
        return closed == garbage;
      },
      10s))
      << agg.Log();
  EXPECT_TRUE(WaitFor(
      [&] {
        return Counter(metrics_port, kRefused, "reason=\"handshake\"") >= static_cast<double>(zmtp);
      },
      5s))
      << "protocol refusals counted: " << Counter(metrics_port, kRefused, "reason=\"handshake\"");
  EXPECT_TRUE(agg.process().Running()) << agg.Log();
  ExpectABatchAppliedWithin(agg.ingest(), "after-1", 1s);
}

TEST(HostileZmqSystem, SilentConnectionsAreClosedAfterTheHandshakeTimeout) {
  TempDir dir;
  WriteFile(dir / "agg.toml", "[limits]\nhandshake_timeout = \"1s\"\n");
  Aggregator agg(dir, "agg-silent", {"--no-self-metrics", "--config", dir / "agg.toml"});
  agg.Start();
  ExpectABatchAppliedWithin(agg.ingest(), "before-2", 10s);

  constexpr int kSilent = 300;
  std::vector<RawTcp> silent;
  for (int i = 0; i < kSilent; ++i) {
    silent.emplace_back(PortOf(i % 2 == 0 ? agg.ingest() : agg.query()));
    ASSERT_TRUE(silent.back().ok()) << i;
  }
  ExpectABatchAppliedWithin(agg.ingest(), "during-2", 1s);
  ExpectAQueryAnsweredWithin(agg.query(), 1s);
  // The aggregator closes every one of them once the handshake timeout passes.
  const auto start = Clock::now();
  EXPECT_TRUE(WaitFor(
      [&] {
        int closed = 0;
        for (RawTcp& c : silent) closed += c.ClosedByPeer() ? 1 : 0;
        return closed == kSilent;
      },
      8s))
      << agg.Log();
  EXPECT_LE(Clock::now() - start, 5s);
}

// Out of descriptors, libzmq's listener retries its accept at once (it has no back-off: about a
// core while it lasts), so the aggregator's bound is the handshake timeout, which closes the
// silent connections it did accept. Once they are gone it serves again, without a restart.
TEST(HostileZmqSystem, OutOfDescriptorsItServesAgainWithoutARestart) {
  TempDir dir;
  WriteFile(dir / "agg.toml", "[limits]\nhandshake_timeout = \"1s\"\n");
  const int ingest = FreePort(), query = FreePort();
  const std::string ingest_at = "127.0.0.1:" + std::to_string(ingest);
  const std::string query_at = "127.0.0.1:" + std::to_string(query);
  TestKeys();  // sets the environment the aggregator takes its keys from
  // A hard limit of 128 descriptors, so raising the soft one to the hard one cannot help.
  Process agg({"/usr/bin/prlimit", "--nofile=128:128", "--", Binary("trailmap-aggregator"),
               "--name", "agg-fds", "--data", dir / "agg-fds-data", "--ingest", ingest_at,
               "--query", query_at, "--no-self-metrics", "--config", dir / "agg.toml"},
              dir.path(), "agg-fds");
  ExpectABatchAppliedWithin(ingest_at, "before-3", 10s);

  std::vector<RawTcp> idle;
  for (int i = 0; i < 200; ++i) idle.emplace_back(ingest);
  std::this_thread::sleep_for(1500ms);  // past the handshake timeout
  idle.clear();
  ExpectABatchAppliedWithin(ingest_at, "after-3", 3s);
  ExpectAQueryAnsweredWithin(query_at, 1s);
  const std::string log = ReadFile(dir / "agg-fds.err");
  EXPECT_LT(std::count(log.begin(), log.end(), '\n'), 50) << log.substr(0, 4000);
  EXPECT_TRUE(agg.Running()) << log;
}

}  // namespace
}  // namespace trailmap::test
