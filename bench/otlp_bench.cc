// otlp_bench: OTLP data points per second the agent's OTLP path sustains (docs/BENCHMARKS.md,
// "The agent's sources and inputs"). Not a Google Benchmark: one thread hands the same request body to a real
// OtlpReceiver (decode, gzip, conversion into a real Bucketizer) as fast as it can, while a
// flush thread takes completed seconds every 250 ms as the agent does. The HTTP listener in
// front is left out: it is Beast reading one body per request.
//
//   otlp_bench --kind exponential --encoding proto   delta exponential histograms, ~110 buckets
//   otlp_bench --kind explicit                       delta histograms, the SDKs' 16 buckets
//   otlp_bench --kind mixed --encoding json          the two histograms, monotonic sums, gauges
// Every point has two attributes; 100 series per metric. Prints points/s, requests/s and what
// the bucketizer received.
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>

#include <google/protobuf/util/json_util.h>

#include "agent/otlp_http.h"
#include "core/clock.h"
#include "otlp/metrics_service.pb.h"

namespace trailmap {
namespace {

namespace pb = opentelemetry::proto;
using Clock = std::chrono::steady_clock;

void Attributes(google::protobuf::RepeatedPtrField<pb::common::v1::KeyValue>* out, size_t i) {
  auto* route = out->Add();
  route->set_key("http.route");
  route->mutable_value()->set_string_value("/api/" + std::to_string(i % 100));
  auto* method = out->Add();
  method->set_key("http.method");
  method->mutable_value()->set_string_value(i % 2 ? "GET" : "POST");
}

// A request of `points` points of `kind`, at `time_ns`.
OtlpRequest MakeRequest(const std::string& kind, size_t points, uint64_t time_ns) {
  OtlpRequest request;
  auto* rm = request.add_resource_metrics();
  auto* service = rm->mutable_resource()->add_attributes();
  service->set_key("service.name");
  service->mutable_value()->set_string_value("bench");
  auto* scope = rm->add_scope_metrics();
  pb::metrics::v1::Metric* exp = scope->add_metrics();
  exp->set_name("bench.exp");
  exp->set_unit("ms");
  exp->mutable_exponential_histogram()->set_aggregation_temporality(
      pb::metrics::v1::AGGREGATION_TEMPORALITY_DELTA);
  pb::metrics::v1::Metric* explicit_ = scope->add_metrics();
  explicit_->set_name("bench.explicit");
  explicit_->set_unit("s");
  explicit_->mutable_histogram()->set_aggregation_temporality(
      pb::metrics::v1::AGGREGATION_TEMPORALITY_DELTA);
  pb::metrics::v1::Metric* sum = scope->add_metrics();
  sum->set_name("bench.requests");
  sum->mutable_sum()->set_aggregation_temporality(pb::metrics::v1::AGGREGATION_TEMPORALITY_DELTA);
  sum->mutable_sum()->set_is_monotonic(true);
  pb::metrics::v1::Metric* gauge = scope->add_metrics();
  gauge->set_name("bench.queue");
  for (size_t i = 0; i < points; ++i) {
    const int pick = kind == "exponential" ? 0 : kind == "explicit" ? 1 : static_cast<int>(i % 4);
    if (pick == 0) {  // scale 4, 1 .. 100 ms: ~106 buckets, 200 values
      auto* p = exp->mutable_exponential_histogram()->add_data_points();
      Attributes(p->mutable_attributes(), i);
      p->set_time_unix_nano(time_ns);
      p->set_scale(4);
      p->mutable_positive()->set_offset(0);
      uint64_t count = 0;
      double total = 0;
      for (int b = 0; b < 106; ++b) {
        const uint64_t c = 1 + (b * 7 + i) % 3;
        p->mutable_positive()->add_bucket_counts(c);
        count += c;
        total += c * std::exp2((b + 0.5) / 16);
      }
      p->set_count(count);
      p->set_sum(total);
      p->set_min(1.02);
      p->set_max(98);
    } else if (pick == 1) {  // the SDKs' default bounds, in seconds
      auto* p = explicit_->mutable_histogram()->add_data_points();
      Attributes(p->mutable_attributes(), i);
      p->set_time_unix_nano(time_ns);
      const double bounds[] = {0,   5,   10,   25,   50,   75,   100,  250,
                               500, 750, 1000, 2500, 5000, 7500, 10000};
      uint64_t count = 0;
      double total = 0;
      for (size_t b = 0; b < 15; ++b) {
        p->add_explicit_bounds(bounds[b] / 1000);
        const uint64_t c = b == 0 ? 0 : 1 + (b + i) % 5;
        p->add_bucket_counts(c);
        count += c;
        total += b == 0 ? 0 : c * (bounds[b - 1] + bounds[b]) / 2000;
      }
      p->add_bucket_counts(0);
      p->set_count(count);
      p->set_sum(total);
    } else {
      auto* p = pick == 2 ? sum->mutable_sum()->add_data_points()
                          : gauge->mutable_gauge()->add_data_points();
      Attributes(p->mutable_attributes(), i);
      p->set_time_unix_nano(time_ns);
      p->set_as_int(static_cast<int64_t>(i % 17));
    }
  }
  return request;
}

int Run(const std::string& kind, const std::string& encoding, size_t points, double seconds) {
  const uint64_t now_ns = static_cast<uint64_t>(UnixSecondsNow()) * 1'000'000'000;
  const OtlpRequest request = MakeRequest(kind, points, now_ns);
  std::string body;
  if (encoding == "json") {
    google::protobuf::util::MessageToJsonString(request, &body);
  } else {
    body = request.SerializeAsString();
    if (encoding == "gzip") body = Gzip(body);
  }
  Bucketizer bucketizer;
  OtlpConverter converter(&bucketizer, OtlpConvertOptions{});
  OtlpReceiver receiver(&converter, OtlpHttpOptions{64 << 20, 256 << 20});
  std::atomic<bool> done{false};
  std::thread flusher([&bucketizer, &done] {
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      while (!bucketizer.TakeSecondsBefore(UnixSecondsNow()).empty()) {
      }
    }
  });
  const HttpRouteRequest call{"POST",
                              encoding == "json" ? "application/json" : "application/x-protobuf",
                              encoding == "gzip" ? "gzip" : "", body};
  uint64_t requests = 0;
  const Clock::time_point start = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    const HttpRouteAnswer answer = receiver.Handle(call);
    if (answer.status != 200 || !answer.body.empty() && encoding != "json") {
      std::fprintf(stderr, "otlp_bench: answer %u: %s\n", answer.status, answer.body.c_str());
      done = true;
      flusher.join();
      return 1;
    }
    ++requests;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  done = true;
  flusher.join();
  const OtlpCounters c = converter.counters();
  std::printf(
      "kind %s, encoding %s: %zu points (%zu bytes) per request, %.1f s: %.0f points/s, %.0f "
      "requests/s; %llu points taken, %llu refused, %llu histogram events\n",
      kind.c_str(), encoding.c_str(), points, body.size(), elapsed,
      static_cast<double>(c.points_accepted) / elapsed, static_cast<double>(requests) / elapsed,
      static_cast<unsigned long long>(c.points_accepted),
      static_cast<unsigned long long>(c.points_rejected),
      static_cast<unsigned long long>(c.histogram_events));
  return 0;
}

}  // namespace
}  // namespace trailmap

int main(int argc, char** argv) {
  CLI::App app{"otlp_bench: OTLP data points per second through the agent's OTLP path"};
  std::string kind = "mixed", encoding = "proto";
  size_t points = 1000;
  double seconds = 5;
  app.add_option("--kind", kind, "exponential, explicit or mixed (default mixed)")
      ->check(CLI::IsMember({"exponential", "explicit", "mixed"}));
  app.add_option("--encoding", encoding, "proto, gzip or json (default proto)")
      ->check(CLI::IsMember({"proto", "gzip", "json"}));
  app.add_option("--points", points, "points per request (default 1000)");
  app.add_option("--seconds", seconds, "how long to run (default 5)");
  CLI11_PARSE(app, argc, argv);
  return trailmap::Run(kind, encoding, points, seconds);
}
