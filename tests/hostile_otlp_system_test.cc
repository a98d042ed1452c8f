// Hostile and careless OTLP/HTTP clients against a real trailmap-agent on loopback, shipping to a
// real aggregator:
// - bodies at, just under and just over every limit (8 MiB as sent, 32 MiB inflated, an 8 KiB
//   header), each with a Content-Length and chunked, gzip and not: the exact status of each, and
//   every point of every accepted one read back from the aggregator;
// - amplification: a few KiB of gzip that would decode to millions of empty points, attributes,
//   unknown fields or bucket counts is refused at once and the agent's memory stays small;
// - a metric name that is not UTF-8 is refused properly and libprotobuf logs no error.
// Meanwhile a normal export is answered within 1 s, and every refusal is counted on /metrics.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <google/protobuf/stubs/logging.h>

#include "agent/otlp_http.h"
#include "otlp/metrics_service.pb.h"
#include "otlp/status.pb.h"
#include "tests/cli_reads.h"
#include "tests/cluster.h"
#include "tests/http_client.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr size_t kMaxBody = 8 << 20;  // the agent's defaults (agent/otlp_http.h)
constexpr size_t kMaxInflated = 32 << 20;
constexpr size_t kMaxHeader = 8 << 10;  // core/metrics_http.h

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer keeps freed memory from reuse in a quarantine of up to 256 MiB.
constexpr uint64_t kQuarantine = 256u << 20;
#else
constexpr uint64_t kQuarantine = 0;
#endif

struct Reply {
  int status = -1;  // -1: no answer
  std::string head;
  std::string body;
  double seconds = 0;  // from the first byte sent to the answer's end
};

// One POST /v1/metrics on its own connection. A thread writes the request while this one reads
// the answer, as an HTTP client does: a server may answer before it has read the whole body.
Reply Post(int port, const std::string& extra_headers, const std::string& body, bool chunked,
           std::atomic<bool>* sent = nullptr) {
  Reply reply;
  const int fd = ConnectTcp(port);
  if (fd < 0) return reply;
  std::string request =
      "POST /v1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + extra_headers;
  if (chunked) {
    request += "Transfer-Encoding: chunked\r\n\r\n";
    for (size_t at = 0; at < body.size(); at += 1 << 16) {
      const std::string piece = body.substr(at, 1 << 16);
      char size[32];
      snprintf(size, sizeof size, "%zx\r\n", piece.size());
      request += size + piece + "\r\n";
    }
    request += "0\r\n\r\n";
  } else {
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  }
  const Clock::time_point start = Clock::now();
  std::thread writer([fd, &request, sent] {
    for (size_t at = 0; at < request.size();) {
      const ssize_t n = send(fd, request.data() + at, request.size() - at, MSG_NOSIGNAL);
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
    if (sent != nullptr) *sent = true;
  });
  std::string in;
  char chunk[1 << 16];
  const Clock::time_point deadline = start + 30s;
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;  // the server closed (Connection: close)
    in.append(chunk, static_cast<size_t>(n));
  }
  reply.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  shutdown(fd, SHUT_RDWR);  // the writer stops if the server never read the rest
  writer.join();
  close(fd);
  const size_t end = in.find("\r\n\r\n");
  if (in.starts_with("HTTP/1.1 ") && end != std::string::npos) {
    reply.status = std::stoi(in.substr(9, 3));
    reply.head = in.substr(0, end);
    reply.body = in.substr(end + 4);
  }
  return reply;
}

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

// A length-delimited protobuf field.
std::string Field(int number, const std::string& bytes) {
  return Varint(static_cast<uint64_t>(number) << 3 | 2) + Varint(bytes.size()) + bytes;
}

// An export of one delta histogram point in `metric` (unit ms, count 1, value 5 ms) with the
// attribute case=`name`, at the time of the call.
OtlpRequest OnePoint(const std::string& metric, const std::string& name) {
  OtlpRequest request;
  auto* m = request.add_resource_metrics()->add_scope_metrics()->add_metrics();
  m->set_name(metric);
  m->set_unit("ms");
  auto* h = m->mutable_histogram();
  h->set_aggregation_temporality(opentelemetry::proto::metrics::v1::AGGREGATION_TEMPORALITY_DELTA);
  auto* p = h->add_data_points();
  auto* kv = p->add_attributes();
  kv->set_key("case");
  kv->mutable_value()->set_string_value(name);
  p->set_time_unix_nano(static_cast<uint64_t>(UnixNow()) * 1'000'000'000);
  p->set_count(1);
  p->set_sum(5);
  p->set_min(5);
  p->set_max(5);
  p->add_explicit_bounds(10);
  p->add_bucket_counts(1);
  p->add_bucket_counts(0);
  return request;
}

// `request` serialised with an unknown field (number 1000) of zeros appended so the whole is
// exactly `size` bytes.
std::string Padded(const OtlpRequest& request, size_t size) {
  const std::string base = request.SerializeAsString();
  const std::string tag = Varint(1000 << 3 | 2);
  for (size_t varint = 1; varint <= 5; ++varint) {
    const size_t fill = size - base.size() - tag.size() - varint;
    if (Varint(fill).size() != varint) continue;
    return base + tag + Varint(fill) + std::string(fill, '\0');
  }
  return {};
}

// A gzip body of exactly `size` bytes holding OnePoint(metric, name).
std::string GzipOfSize(const std::string& metric, const std::string& name, size_t size) {
  const OtlpRequest request = OnePoint(metric, name);
  size_t text = size;
  for (int i = 0; i < 20; ++i) {
    const std::string body = Gzip(Padded(request, text), 0);
    if (body.size() == size) return body;
    text += size - body.size();  // overhead grows by 5 bytes a block: converges in a few steps
    if (body.size() > size) text -= 2 * (body.size() - size);
  }
  return {};
}

// A header (request line to blank line, as Post writes it) of exactly `size` bytes.
std::string HeaderPadding(size_t size, bool gzip, bool chunked, size_t body_size) {
  std::string fixed =
      "POST /v1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
      "Content-Type: application/x-protobuf\r\n";
  if (gzip) fixed += "Content-Encoding: gzip\r\n";
  fixed += chunked ? "Transfer-Encoding: chunked\r\n"
                   : "Content-Length: " + std::to_string(body_size) + "\r\n";
  fixed += "\r\n";
  const std::string name = "X-Padding: ";
  return name + std::string(size - fixed.size() - name.size() - 2, 'p') + "\r\n";
}

// VmHWM or VmRSS of process `pid` in bytes (0 when unreadable).
uint64_t Memory(pid_t pid, const std::string& what) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with(what + ":")) return std::stoull(line.substr(what.size() + 1)) * 1024;
  }
  return 0;
}

class HostileOtlpSystem : public ::testing::Test {
 protected:
  HostileOtlpSystem() {
    aggs_.push_back(std::make_unique<Aggregator>(dir_, "agg-1"));
    aggs_[0]->Start();
    agent_ = std::make_unique<Agent>(
        dir_, "app-1", IngestList(aggs_),
        std::vector<std::string>{"--otlp", "127.0.0.1:" + std::to_string(otlp_port_), "--metrics",
                                 "127.0.0.1:" + std::to_string(metrics_port_), "--no-proc"});
    q_ = QueryList(aggs_);
  }

  // A normal export: must be taken within 1 s whatever else is going on.
  void ExpectNormalExport() {
    const std::string body =
        OnePoint("hostile.normal", "n" + std::to_string(normal_)).SerializeAsString();
    const Reply reply = Post(otlp_port_, "Content-Type: application/x-protobuf\r\n", body, false);
    EXPECT_EQ(reply.status, 200) << reply.head;
    EXPECT_LT(reply.seconds, 1.0);
    ++normal_;
  }

  // Sends a hostile request; once it is all written, a normal export, which must be answered
  // within 1 s though the hostile one may still be handled.
  Reply PostBeside(const std::string& headers, const std::string& body, bool chunked) {
    std::atomic<bool> sent{false};
    Reply reply;
    std::thread hostile([&] { reply = Post(otlp_port_, headers, body, chunked, &sent); });
    WaitFor([&] { return sent.load(); }, 30s);
    ExpectNormalExport();
    hostile.join();
    return reply;
  }

  std::string Scrape() {
    const HttpResult scrape = HttpGet(metrics_port_, "/metrics");
    EXPECT_EQ(scrape.status, 200);
    return scrape.body;
  }

  // Every normal export arrived, each once.
  void ExpectNormalExportsArrived() {
    std::map<std::string, GroupStats> by_case;
    WaitFor(
        [&] {
          by_case = ReadStats("hostile.normal", "case", q_);
          return by_case.size() == static_cast<size_t>(normal_);
        },
        20s);
    ASSERT_EQ(by_case.size(), static_cast<size_t>(normal_)) << agent_->Log();
    for (const auto& [name, stats] : by_case) EXPECT_EQ(stats.count, 1u) << name;
  }

  TempDir dir_;
  std::vector<std::unique_ptr<Aggregator>> aggs_;
  const int otlp_port_ = FreePort();
  const int metrics_port_ = FreePort();
  std::unique_ptr<Agent> agent_;
  std::string q_;
  int normal_ = 0;
};

// A refusal's body: a google.rpc.Status (the OTLP specification's, for every 4xx and 5xx).
std::string StatusMessage(const Reply& reply) {
  google::rpc::Status status;
  if (!status.ParseFromString(reply.body)) return "(not a Status: " + reply.body + ")";
  return status.message();
}

TEST_F(HostileOtlpSystem, BodiesAtEveryLimitWithAndWithoutContentLength) {
  struct Case {
    std::string name;
    std::string headers;
    std::string body;
    bool chunked;
    int status;
    std::string message;  // a refusal's Status.message
  };
  std::vector<Case> cases;
  const std::string protobuf = "Content-Type: application/x-protobuf\r\n";
  const std::string gzip = protobuf + "Content-Encoding: gzip\r\n";
  const std::string too_big =
      "request body too large (at most " + std::to_string(kMaxBody) + " bytes)";
  const std::string inflates_past =
      "gzip body inflates past " + std::to_string(kMaxInflated) + " bytes";
  for (const bool chunked : {false, true}) {
    const std::string how = chunked ? "chunked" : "length";
    for (const long delta : {-1L, 0L, 1L}) {
      const std::string at = std::to_string(delta);
      const size_t sent = kMaxBody + delta;
      // 8 MiB as sent: protobuf, and gzip of as many bytes (stored, not compressed).
      std::string name = "body-" + how + at;
      cases.push_back({name, protobuf, Padded(OnePoint("hostile.limits", name), sent), chunked,
                       delta > 0 ? 413 : 200, delta > 0 ? too_big : ""});
      name = "gzip-" + how + at;
      cases.push_back({name, gzip, GzipOfSize("hostile.limits", name, sent), chunked,
                       delta > 0 ? 413 : 200, delta > 0 ? too_big : ""});
      // 32 MiB inflated, from a small gzip body.
      name = "inflated-" + how + at;
      cases.push_back({name, gzip,
                       Gzip(Padded(OnePoint("hostile.limits", name), kMaxInflated + delta)),
                       chunked, delta > 0 ? 413 : 200, delta > 0 ? inflates_past : ""});
      // An 8 KiB header, protobuf and gzip.
      for (const bool zipped : {false, true}) {
        name = std::string("header-") + (zipped ? "gzip-" : "") + how + at;
        const std::string point = OnePoint("hostile.limits", name).SerializeAsString();
        const std::string body = zipped ? Gzip(point) : point;
        const std::string headers = (zipped ? gzip : protobuf) +
                                    HeaderPadding(kMaxHeader + delta, zipped, chunked, body.size());
        cases.push_back({name, headers, body, chunked, delta > 0 ? 431 : 200,
                         delta > 0 ? "request header too large (at most 8 KiB)" : ""});
      }
    }
  }
  std::set<std::string> accepted;
  int refused_413 = 0, refused_431 = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_FALSE(c.body.empty());
    const Reply reply = PostBeside(c.headers, c.body, c.chunked);
    ASSERT_EQ(reply.status, c.status) << reply.head << "\n" << reply.body.substr(0, 200);
    if (c.status == 200) {
      accepted.insert(c.name);
      opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceResponse response;
      ASSERT_TRUE(response.ParseFromString(reply.body));
      EXPECT_FALSE(response.has_partial_success());
      continue;
    }
    (c.status == 413 ? refused_413 : refused_431)++;
    EXPECT_NE(reply.head.find("\r\nContent-Type: application/x-protobuf"), std::string::npos)
        << reply.head;
    EXPECT_EQ(StatusMessage(reply), c.message);
  }
  EXPECT_EQ(accepted.size(), 20u);
  EXPECT_EQ(refused_413, 6);
  EXPECT_EQ(refused_431, 4);

  // Every accepted point reached the aggregator, once; no refused one did.
  std::map<std::string, GroupStats> by_case;
  WaitFor(
      [&] {
        by_case = ReadStats("hostile.limits", "case", q_);
        return by_case.size() >= accepted.size();
      },
      20s);
  std::set<std::string> arrived;
  for (const auto& [name, stats] : by_case) {
    arrived.insert(name);
    EXPECT_EQ(stats.count, 1u) << name;
  }
  EXPECT_EQ(arrived, accepted) << agent_->Log();
  ExpectNormalExportsArrived();

  // Every refusal counted, by status.
  const std::string metrics = Scrape();
  for (const std::string line : {"trailmap_agent_otlp_refused_total{status=\"413\"} 6",
                                 "trailmap_agent_otlp_refused_total{status=\"431\"} 4"}) {
    EXPECT_NE(metrics.find("\n" + line + "\n"), std::string::npos) << line << "\n" << metrics;
  }
}

// `times` copies of `bytes`.
std::string Repeat(const std::string& bytes, size_t times) {
  std::string out;
  out.reserve(bytes.size() * times);
  for (size_t i = 0; i < times; ++i) out += bytes;
  return out;
}

// An export of one metric "amp" whose data (Metric field `data`, e.g. 5 gauge) is `inner`.
std::string OneMetric(int data, const std::string& inner) {
  return Field(1, Field(2, Field(2, Field(1, "amp") + Field(data, inner))));
}

// Each of `cases` chunked (as the OpenTelemetry JS SDK sends), then with a Content-Length.
template <typename T>
std::vector<std::pair<T, bool>> Product(const std::vector<T>& cases) {
  std::vector<std::pair<T, bool>> out;
  for (const bool chunked : {true, false}) {
    for (const T& c : cases) out.emplace_back(c, chunked);
  }
  return out;
}

TEST_F(HostileOtlpSystem, AmplificationIsRefusedAtOnceAndMemoryStaysSmall) {
  const pid_t pid = agent_->process().pid();
  ExpectNormalExport();
  const uint64_t rss_before = Memory(pid, "VmRSS");
  ASSERT_GT(rss_before, 0u);
  // Each inflates to under 32 MiB, each from a few KiB of gzip: 2 or 3 bytes an element.
  constexpr size_t kMany = 16'000'000;
  const std::string points =
      "request holds more than 1000000 data points, the most one request may hold: "
      "export smaller batches";
  const std::string decoded =
      "request would take more than 134217728 bytes decoded, the most one request "
      "may: export smaller batches";
  struct Case {
    std::string name;
    std::string type;
    std::string body;  // before gzip
    std::string message;
  };
  const std::vector<Case> cases = {
      // Empty gauge points: what the report sent.
      {"points", "application/x-protobuf", OneMetric(5, Repeat(Field(1, ""), kMany)), points},
      // One point of empty attributes (NumberDataPoint field 7).
      {"attributes", "application/x-protobuf", OneMetric(5, Field(1, Repeat(Field(7, ""), kMany))),
       decoded},
      // One point of empty exemplars (field 5, which trailmap's schema leaves out: unknown).
      {"unknown fields", "application/x-protobuf",
       OneMetric(5, Field(1, Repeat(Field(5, ""), kMany))), decoded},
      // One exponential histogram point with 32 M packed zero bucket counts.
      {"bucket counts", "application/x-protobuf",
       OneMetric(10, Field(1, Field(8, Field(2, std::string(2 * kMany, '\0'))))), decoded},
      // Empty points in OTLP/JSON.
      // 16 M bucket counts in OTLP/JSON ("0,0,...": 2 bytes each).
      {"json bucket counts", "application/json",
       R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"amp","histogram":{)"
       R"("dataPoints":[{"bucketCounts":[)" +
           Repeat("0,", kMany - 1) + "0]}]}}]}]}]}",
       decoded},
      {"json points", "application/json",
       R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"amp","gauge":{"dataPoints":[)" +
           Repeat("{},", 10'000'000) + "{}]}}]}]}]}",
       decoded},
  };
  std::map<std::string, std::string> gzipped;
  for (const Case& c : cases) {
    ASSERT_LT(c.body.size(), kMaxInflated) << c.name;
    gzipped[c.name] = Gzip(c.body);
    ASSERT_LT(gzipped[c.name].size(), 256u << 10) << c.name;
  }
  for (const auto& [c, chunked] : Product(cases)) {
    SCOPED_TRACE(c.name + (chunked ? ", chunked" : ", with a Content-Length"));
    const std::string& body = gzipped[c.name];
    const Reply reply =
        PostBeside("Content-Type: " + c.type + "\r\nContent-Encoding: gzip\r\n", body, chunked);
    EXPECT_EQ(reply.status, 413) << reply.head << reply.body.substr(0, 200);
    EXPECT_LT(reply.seconds, 1.0);
    if (c.type == "application/json") {
      EXPECT_NE(reply.body.find("\"message\":\"" + c.message + "\""), std::string::npos)
          << reply.body;
    } else {
      EXPECT_EQ(StatusMessage(reply), c.message);
    }
  }
  // Decoded, the first would have been 16 M points (1.7 GB, 2.8 GB with sanitizers); each one
  // refused took its inflated body (32 MiB) and the wire count's nothing.
  const uint64_t peak = Memory(pid, "VmHWM");
  EXPECT_LT(peak, rss_before + (192u << 20) + kQuarantine) << "before " << rss_before;
#if !defined(__SANITIZE_ADDRESS__)
  // What it took is given back (sanitizers keep freed memory in quarantine instead).
  EXPECT_LT(Memory(pid, "VmRSS"), rss_before + (64u << 20));
#endif
  const std::string metrics = Scrape();
  for (const std::string line : {"trailmap_agent_otlp_refused_total{status=\"413\"} 12",
                                 "trailmap_agent_otlp_trims_total 12"}) {
    EXPECT_NE(metrics.find("\n" + line + "\n"), std::string::npos) << line << "\n" << metrics;
  }
  ExpectNormalExportsArrived();
}

TEST_F(HostileOtlpSystem, StringsThatAreNotUtf8AreRefusedWithoutLibprotobufErrors) {
  // This process serialises strings that are not UTF-8 on purpose: libprotobuf's complaints
  // about it here are not the agent's.
  google::protobuf::LogSilencer quiet;
  const std::string protobuf = "Content-Type: application/x-protobuf\r\n";
  // A metric name, an attribute key and an attribute value that are not UTF-8: 400, named.
  OtlpRequest request = OnePoint("bad\xff", "x");
  Reply reply = Post(otlp_port_, protobuf, request.SerializeAsString(), false);
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(StatusMessage(reply),
            "field opentelemetry.proto.metrics.v1.Metric.name is not UTF-8 (OTLP strings must be)");
  request = OnePoint("good", "x");
  auto* point = request.mutable_resource_metrics(0)
                    ->mutable_scope_metrics(0)
                    ->mutable_metrics(0)
                    ->mutable_histogram()
                    ->mutable_data_points(0);
  point->mutable_attributes(0)->set_key("k\xc0\xaf");  // an overlong '/'
  reply = Post(otlp_port_, protobuf, request.SerializeAsString(), false);
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(StatusMessage(reply),
            "field opentelemetry.proto.common.v1.KeyValue.key is not UTF-8 (OTLP strings must be)");
  point->mutable_attributes(0)->set_key("k");
  point->mutable_attributes(0)->mutable_value()->set_string_value("\xed\xa0\x80");  // a surrogate
  reply = Post(otlp_port_, protobuf + "Content-Encoding: gzip\r\n",
               Gzip(request.SerializeAsString()), true);
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(StatusMessage(reply),
            "field opentelemetry.proto.common.v1.AnyValue.string_value is not UTF-8 (OTLP strings "
            "must be)");
  // The same name in OTLP/JSON, raw and as an escaped lone surrogate: refused, in JSON.
  for (const std::string& name : {std::string("bad\xff"), std::string("bad\\udcff")}) {
    reply = Post(otlp_port_, "Content-Type: application/json\r\n",
                 R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":")" + name +
                     R"(","gauge":{"dataPoints":[{"asDouble":1}]}}]}]}]})",
                 false);
    EXPECT_EQ(reply.status, 400) << reply.body;
    EXPECT_NE(reply.body.find("\"message\":\""), std::string::npos) << reply.body;
  }
  // A UTF-8 name trailmap cannot keep: taken whole, the point refused and named in UTF-8.
  reply = Post(otlp_port_, protobuf, OnePoint("caf\xc3\xa9", "x").SerializeAsString(), false);
  EXPECT_EQ(reply.status, 200);
  opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceResponse response;
  ASSERT_TRUE(response.ParseFromString(reply.body));
  EXPECT_EQ(response.partial_success().rejected_data_points(), 1);
  EXPECT_NE(response.partial_success().error_message().find("metric 'caf\xc3\xa9' point 1: "),
            std::string::npos)
      << response.partial_success().error_message();
  ExpectNormalExport();
  EXPECT_EQ(agent_->Log().find("libprotobuf"), std::string::npos) << agent_->Log();
  EXPECT_NE(Scrape().find("\ntrailmap_agent_otlp_refused_total{status=\"400\"} 5\n"),
            std::string::npos);
}

}  // namespace
}  // namespace trailmap::test
