// Prometheus remote write into trailmap with the real Prometheus server (Debian's
// /usr/bin/prometheus, --enable-feature=native-histograms). Prometheus scrapes itself (a classic
// histogram, a counter), trailmap's agent and aggregator, and a small exporter in this test that
// serves a native histogram in the protobuf exposition format; it remote-writes everything to
// the agent with a writer's bearer token. The real CLI then reads back, for a window of
// Prometheus' own samples, exactly what Prometheus' API reports for it:
//   increase(x_count[w])                        a classic histogram's count
//   histogram_count(increase(x[w]))             a native histogram's count
//   increase(c[w])                              a counter's increase (its rate times w)
// w spans two samples exactly (ms), so Prometheus does not extrapolate. Then the aggregator is
// stopped (SIGSTOP): the agent's unacknowledged batches pass max_backlog_batches, it answers
// 503, Prometheus retries, and once the aggregator runs again a window across the stall still
// matches: nothing lost. Every wait polls with a deadline.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "agent/prom_remote_write.h"
#include "core/metrics_http.h"
#include "core/sha256.h"
#include "prometheus/remote.pb.h"
#include "tests/cluster.h"
#include "tests/http_client.h"
#include "tests/prometheus_sample.h"
#include "tests/stats_json.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

constexpr char kToken[] = "remote-write-token";

// --- A native histogram in the protobuf exposition format (io.prometheus.client, delimited) ---

void Varint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
void Tag(int field, int wire, std::string* out) { Varint(uint64_t(field) << 3 | wire, out); }
void Uint(int field, uint64_t v, std::string* out) { Tag(field, 0, out), Varint(v, out); }
void Sint(int field, int64_t v, std::string* out) {
  Uint(field, (uint64_t(v) << 1) ^ uint64_t(v >> 63), out);
}
void Double(int field, double v, std::string* out) {
  Tag(field, 1, out);
  out->append(reinterpret_cast<const char*>(&v), 8);
}
void Bytes(int field, const std::string& v, std::string* out) {
  Tag(field, 2, out), Varint(v.size(), out), out->append(v);
}

// Schema 3 (bucket i holds (2^((i-1)/8), 2^(i/8)] seconds); every scrape adds observations, so
// each sample differs from the one before.
class NativeExporter {
 public:
  std::string Scrape() {
    std::lock_guard<std::mutex> lock(mu_);
    ++scrapes_;
    Observe(-40, 1);               // ~0.031 s
    Observe(-20, scrapes_ % 3);    // ~0.177 s
    Observe(3, scrapes_ % 2 + 1);  // ~1.3 s
    zero_ += scrapes_ % 2;
    std::string h;
    uint64_t count = zero_;
    for (const auto& [i, c] : buckets_) count += c;
    Uint(1, count, &h);
    Double(2, sum_, &h);
    Sint(5, 3, &h);
    Double(6, 1e-6, &h);
    Uint(7, zero_, &h);
    // One span per bucket present (offsets from the previous span's end), deltas between counts.
    int64_t next = 0, previous = 0;
    std::string deltas;
    for (const auto& [i, c] : buckets_) {
      std::string span;
      Sint(1, i - next, &span);
      Uint(2, 1, &span);
      Bytes(12, span, &h);
      next = i + 1;
      Sint(13, int64_t(c) - previous, &deltas);
      previous = int64_t(c);
    }
    h += deltas;
    std::string metric, family, out;
    Bytes(7, h, &metric);
    Bytes(1, "native_demo_seconds", &family);
    Bytes(2, "a native histogram the test serves", &family);
    Uint(3, 4, &family);  // HISTOGRAM
    Bytes(4, metric, &family);
    Varint(family.size(), &out);
    return out + family;
  }

 private:
  void Observe(int index, uint64_t n) {
    buckets_[index] += n;
    sum_ += double(n) * std::pow(2.0, index / 8.0);
  }
  std::mutex mu_;
  uint64_t scrapes_ = 0, zero_ = 0;
  std::map<int, uint64_t> buckets_;
  double sum_ = 0;
};

// POSTs a remote-write request of gauge `up` of `host` as Prometheus would; the HTTP status.
int PostUp(int port, const std::string& host) {
  prometheus::WriteRequest request;
  prometheus::TimeSeries* ts = request.add_timeseries();
  for (const auto& [k, v] :
       {std::pair<std::string, std::string>{"__name__", "up"}, {"instance", host}}) {
    prometheus::Label* l = ts->add_labels();
    l->set_name(k);
    l->set_value(v);
  }
  prometheus::Sample* sample = ts->add_samples();
  sample->set_value(1);
  sample->set_timestamp(UnixNow() * 1000);
  const std::string body = SnappyCompress(request.SerializeAsString());
  const std::string text =
      "POST /api/v1/write HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Authorization: Bearer " +
      std::string(kToken) +
      "\r\nContent-Type: application/x-protobuf\r\n"
      "Content-Encoding: snappy\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  const int fd = ConnectTcp(port, 5s);
  if (fd < 0) return -1;
  if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return close(fd), -1;
  char answer[64] = {};
  const ssize_t n = read(fd, answer, sizeof answer - 1);
  close(fd);
  return n > 12 ? std::atoi(answer + 9) : -1;  // "HTTP/1.1 403 ..."
}

// --- Prometheus' HTTP API ---

nlohmann::json Api(int port, const std::string& query, const std::string& time = "") {
  std::string target = "/api/v1/query?query=" + UrlEncode(query);
  if (!time.empty()) target += "&time=" + time;
  const HttpResult r = HttpGet(port, target);
  if (r.status != 200) return nlohmann::json();
  return nlohmann::json::parse(r.body, nullptr, false);
}

// The raw samples' timestamps (ms) of the one series `selector` selects over the last 60 s.
std::vector<int64_t> SampleTimes(int port, const std::string& selector) {
  const nlohmann::json j = Api(port, selector + "[60s]");
  std::vector<int64_t> out;
  if (!j.is_object() || j["data"]["result"].size() != 1) return out;
  const nlohmann::json& series = j["data"]["result"][0];
  const nlohmann::json& points =
      series.contains("histograms") ? series["histograms"] : series["values"];
  for (const auto& p : points) out.push_back(std::llround(p[0].get<double>() * 1000));
  return out;
}

// The one value of an instant query at `ms`; NaN without exactly one.
double ValueAt(int port, const std::string& query, int64_t ms) {
  const nlohmann::json j = Api(
      port, query, std::to_string(ms / 1000) + "." + std::to_string(1000 + ms % 1000).substr(1));
  if (!j.is_object() || j["data"]["result"].size() != 1) return std::nan("");
  return std::stod(j["data"]["result"][0]["value"][1].get<std::string>());
}

// A window of Prometheus samples [first, last] (ms) of `selector`, the `from`th and `to`th from
// its newest (0 = the newest), and what Prometheus says `expression` (with W for the range) is
// there: W spans them exactly, so no extrapolation. NaN when there are not that many samples.
struct Window {
  int64_t first_ms = 0, last_ms = 0;
  double prometheus = std::nan("");
};
Window PromWindow(int port, const std::string& selector, const std::string& expression, size_t from,
                  size_t to) {
  Window w;
  const std::vector<int64_t> times = SampleTimes(port, selector);
  if (times.size() <= from) return w;
  w.first_ms = times[times.size() - 1 - from];
  w.last_ms = times[times.size() - 1 - to];
  std::string e = expression;
  e.replace(e.find('W'), 1, std::to_string(w.last_ms - w.first_ms) + "ms");
  w.prometheus = ValueAt(port, e, w.last_ms);
  return w;
}

// trailmap's seconds that hold the increases after `first` up to `last`: from the second after
// the first sample's to the last one's, inclusive.
std::vector<std::string> Span(const Window& w) {
  return {"--from", std::to_string(w.first_ms / 1000 + 1), "--to",
          std::to_string(w.last_ms / 1000 + 1)};
}

class PromRemoteWriteSystem : public ::testing::Test {
 protected:
  uint64_t HistogramCount(const std::string& metric, const std::string& host, const Window& w,
                          const std::string& where = "") {
    std::vector<std::string> args = {"stats", "--metric", metric, "--hosts",
                                     host,    "--format", "json"};
    for (const std::string& a : Span(w)) args.push_back(a);
    if (!where.empty()) args.insert(args.end(), {"--where", where});
    const CommandResult r = Cli(args, QueryList(aggs_));
    if (r.exit_code != 0) return 0;
    const auto stats = ParseStats(r.out);
    return stats.empty() ? 0 : stats.begin()->second.count;
  }
  double ScalarSum(const std::string& metric, const std::string& host, const Window& w,
                   const std::string& where = "") {
    std::vector<std::string> args = {"line", "--metric", metric, "--hosts",  host,  "--step",
                                     "1",    "--stat",   "sum",  "--format", "json"};
    for (const std::string& a : Span(w)) args.push_back(a);
    if (!where.empty()) args.insert(args.end(), {"--where", where});
    const CommandResult r = Cli(args, QueryList(aggs_));
    if (r.exit_code != 0) return -1;
    double sum = 0;
    const nlohmann::json doc = nlohmann::json::parse(r.out);
    for (const auto& series : doc.at("series")) {
      for (const auto& v : series.at("values")) sum += v.is_null() ? 0 : v.get<double>();
    }
    return sum;
  }

  TempDir dir_;
  std::vector<std::unique_ptr<Aggregator>> aggs_;
};

TEST_F(PromRemoteWriteSystem, ClassicNativeAndCounterWindowsMatchPrometheusAcrossAStall) {
  aggs_.push_back(std::make_unique<Aggregator>(dir_, "agg-1"));
  aggs_[0]->Start();
  ASSERT_TRUE(WaitFor([&] { return aggs_[0]->Log().find("started") != std::string::npos; }, 20s));
  const int write_port = FreePort(), agent_metrics = FreePort(), prom_port = FreePort();
  WriteFile(dir_ / "writers.txt", "prometheus " + Sha256Hex(kToken) + " 127.0.0.1:*\n");
  WriteFile(dir_ / "agent.toml",
            "[prometheus]\nlisten = \"127.0.0.1:" + std::to_string(write_port) +
                "\"\nwriters = \"" + (dir_ / "writers.txt") + "\"\nmax_backlog_batches = 4\n");
  Agent agent(dir_, "agent-1", IngestList(aggs_),
              {"--no-proc", "--config", dir_ / "agent.toml", "--metrics",
               "127.0.0.1:" + std::to_string(agent_metrics)});
  ASSERT_TRUE(WaitFor(
      [&] { return agent.Log().find("prometheus remote write at") != std::string::npos; }, 20s))
      << agent.Log();

  NativeExporter exporter;
  HttpRoute route;
  route.path = "/metrics";
  route.handle = [&exporter](const HttpRouteRequest&) {
    return HttpRouteAnswer{200,
                           "application/vnd.google.protobuf; "
                           "proto=io.prometheus.client.MetricFamily; encoding=delimited",
                           exporter.Scrape()};
  };
  Result<std::unique_ptr<MetricsHttpServer>> served =
      MetricsHttpServer::Start(MetricsHttpOptions{"127.0.0.1", 0, "exporter", {route}}, {});
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  const std::string exporter_target = "127.0.0.1:" + std::to_string((*served)->port());
  const std::string self = "127.0.0.1:" + std::to_string(prom_port);

  WriteFile(dir_ / "prometheus.yml",
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n"
            "scrape_configs:\n"
            "  - job_name: prometheus\n    static_configs: [{targets: ['" +
                self +
                "']}]\n"
                "  - job_name: native\n    static_configs: [{targets: ['" +
                exporter_target +
                "']}]\n"
                "  - job_name: trailmap\n    static_configs: [{targets: ['127.0.0.1:" +
                std::to_string(agent_metrics) +
                "']}]\n"
                "remote_write:\n"
                "  - url: http://127.0.0.1:" +
                std::to_string(write_port) +
                "/api/v1/write\n"
                "    send_native_histograms: true\n"
                "    authorization: {credentials: " +
                kToken +
                "}\n"
                "    metadata_config: {send: false}\n"
                "    queue_config: {batch_send_deadline: 100ms, min_backoff: 50ms, max_backoff: "
                "400ms}\n");
  Process prometheus({"/usr/bin/prometheus", "--config.file=" + (dir_ / "prometheus.yml"),
                      "--storage.tsdb.path=" + (dir_ / "prom-data"), "--web.listen-address=" + self,
                      "--enable-feature=native-histograms"},
                     dir_.path(), "prometheus");
  const std::string classic = "prometheus_http_request_duration_seconds";
  const std::string on_metrics = "{handler=\"/metrics\",instance=\"" + self + "\"}";
  const std::string native = "native_demo_seconds{instance=\"" + exporter_target + "\"}";
  const std::string counter = "prometheus_http_requests_total" + on_metrics;
  // Nine samples of each, so the window below has its six.
  ASSERT_TRUE(WaitFor(
      [&] {
        return SampleTimes(prom_port, native).size() >= 9 &&
               SampleTimes(prom_port, classic + "_count" + on_metrics).size() >= 9;
      },
      30s))
      << prometheus.Stderr();

  const auto check = [&](size_t from, size_t to, const char* when) {
    const Window c = PromWindow(prom_port, classic + "_count" + on_metrics,
                                "increase(" + classic + "_count" + on_metrics + "[W])", from, to);
    const Window n =
        PromWindow(prom_port, native, "histogram_count(increase(" + native + "[W]))", from, to);
    const Window k = PromWindow(prom_port, counter, "increase(" + counter + "[W])", from, to);
    ASSERT_FALSE(std::isnan(c.prometheus) || std::isnan(n.prometheus) || std::isnan(k.prometheus))
        << when << ": " << c.prometheus << " " << n.prometheus << " " << k.prometheus;
    EXPECT_GT(n.prometheus, 0) << when;
    // The data reaches trailmap a moment later: poll until it matches or the deadline passes.
    uint64_t classic_count = 0, native_count = 0;
    double counter_sum = 0;
    WaitFor(
        [&] {
          classic_count = HistogramCount(classic, self, c, "handler == \"/metrics\"");
          native_count = HistogramCount("native_demo_seconds", exporter_target, n);
          counter_sum =
              ScalarSum("prometheus_http_requests_total", self, k, "handler == \"/metrics\"");
          return classic_count == c.prometheus && native_count == n.prometheus &&
                 counter_sum == k.prometheus;
        },
        20s);
    EXPECT_EQ(classic_count, c.prometheus) << when << "\n"
                                           << HttpGet(agent_metrics, "/metrics").body;
    EXPECT_EQ(native_count, n.prometheus) << when;
    EXPECT_EQ(counter_sum, k.prometheus)
        << when << ": the rate over " << (k.last_ms - k.first_ms) << " ms, times that";
  };
  // Five intervals, up to the one before the newest sample.
  check(6, 1, "before the stall");

  // A stalled aggregator: batches wait unacknowledged, the agent answers 503, Prometheus retries.
  const std::string busy = "trailmap_agent_prom_refused_total{status=\"503\"}";
  aggs_[0]->process().Kill(SIGSTOP);
  const bool refused = WaitFor(
      [&] { return PrometheusSample(HttpGet(agent_metrics, "/metrics").body, busy) > 0; }, 20s);
  aggs_[0]->process().Kill(SIGCONT);
  ASSERT_TRUE(refused) << HttpGet(agent_metrics, "/metrics").body;
  EXPECT_TRUE(WaitFor(
      [&] {
        return ValueAt(prom_port, "sum(prometheus_remote_storage_samples_retried_total)",
                       UnixNow() * 1000) > 0;
      },
      10s));
  // Four more samples after the resume, then a window across the stall.
  const size_t before = SampleTimes(prom_port, native).size();
  ASSERT_TRUE(WaitFor([&] { return SampleTimes(prom_port, native).size() >= before + 4; }, 20s));
  check(12, 1, "across the stall");

  // A host the writer may not write: 403, counted, nothing applied.
  EXPECT_EQ(PostUp(write_port, "db-1"), 403);
  EXPECT_EQ(PostUp(write_port, "127.0.0.1:1"), 204);
  const std::string scraped = HttpGet(agent_metrics, "/metrics").body;
  EXPECT_EQ(PrometheusSample(scraped, "trailmap_agent_prom_refused_total{status=\"403\"}"), 1);
  prometheus.Kill(SIGTERM);
  prometheus.Wait();
}

}  // namespace
}  // namespace trailmap::test
