// prom_bench: Prometheus remote-write samples per agent CPU-second through the agent's path
// (docs/BENCHMARKS.md, "The agent's sources and inputs"). Not a Google Benchmark: one thread hands
// snappy-compressed WriteRequests to a real PromReceiver (snappy, protobuf, conversion with the
// previous sample of every series, per-host bucketizers), while a flush thread takes every host's
// completed seconds as batches every 250 ms as the agent does. The HTTP listener in front is left
// out: it is Beast reading one body per request.
//
//   prom_bench --kind classic   histograms of 11 buckets + +Inf, _sum and _count (14 samples each)
//   prom_bench --kind native    native histograms of schema 3, ~40 buckets (1 sample each)
// --hosts x --series histograms per scrape, 15 s apart; a scrape is cut into requests of
// --per-request samples (Prometheus' max_samples_per_send; 2,000 by default since 2.44). The
// scrapes are made up front (--scrapes of them, replayed in a loop: a replay reads as a reset).
// Prints samples/s of wall time and per CPU-second of the process (both threads), and the events
// the bucketizers received.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "agent/prom_remote_write.h"
#include "core/clock.h"
#include "prometheus/remote.pb.h"

namespace trailmap {
namespace {

using Clock = std::chrono::steady_clock;

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

prometheus::TimeSeries* Series(prometheus::WriteRequest* r, const std::string& name,
                               const std::string& host, size_t route, const char* le) {
  prometheus::TimeSeries* ts = r->add_timeseries();
  const std::pair<const char*, std::string> labels[] = {{"__name__", name},
                                                        {"instance", host},
                                                        {"job", "api"},
                                                        {"route", "/api/" + std::to_string(route)}};
  for (const auto& [k, v] : labels) {
    prometheus::Label* l = ts->add_labels();
    l->set_name(k);
    l->set_value(v);
  }
  if (le != nullptr) {
    prometheus::Label* l = ts->add_labels();
    l->set_name("le");
    l->set_value(le);
  }
  return ts;
}

// Scrape `k` of every series, as requests of at most `per_request` samples.
std::vector<std::string> Scrape(const std::string& kind, size_t hosts, size_t series, int k,
                                size_t per_request) {
  std::vector<std::string> bodies;
  prometheus::WriteRequest r;
  size_t samples = 0;
  const auto flush = [&] {
    if (samples == 0) return;
    bodies.push_back(SnappyCompress(r.SerializeAsString()));
    r.Clear();
    samples = 0;
  };
  const int64_t ms = (UnixSecondsNow() - 3600) * 1000 + int64_t{k} * 15'000;
  static const char* kLe[] = {"0.005", "0.01", "0.025", "0.05", "0.1", "0.25",
                              "0.5",   "1",    "2.5",   "5",    "10",  "+Inf"};
  for (size_t h = 0; h < hosts; ++h) {
    const std::string host = "web-" + std::to_string(h) + ":9100";
    for (size_t s = 0; s < series; ++s) {
      const double grow = static_cast<double>((k + 1) * (1 + (s + h) % 7));
      if (kind == "classic") {
        double cumulative = 0;
        for (int b = 0; b < 12; ++b) {
          cumulative += grow * (1 + (b * 3 + s) % 4);
          prometheus::Sample* x =
              Series(&r, "http_request_duration_seconds_bucket", host, s, kLe[b])->add_samples();
          x->set_value(cumulative);
          x->set_timestamp(ms);
        }
        for (const char* suffix : {"_sum", "_count"}) {
          prometheus::Sample* x =
              Series(&r, std::string("http_request_duration_seconds") + suffix, host, s, nullptr)
                  ->add_samples();
          x->set_value(suffix[1] == 's' ? cumulative * 0.2 : cumulative);
          x->set_timestamp(ms);
        }
        samples += 14;
      } else {
        prometheus::Histogram* x =
            Series(&r, "http_request_duration_seconds", host, s, nullptr)->add_histograms();
        x->set_schema(3);
        x->set_zero_threshold(1e-9);
        x->set_zero_count_int(0);
        prometheus::BucketSpan* span = x->add_positive_spans();
        span->set_offset(-60);  // from ~5.5 ms
        span->set_length(40);   // to ~170 ms
        uint64_t count = 0, previous = 0;
        double sum = 0;
        for (int b = 0; b < 40; ++b) {
          const uint64_t c = static_cast<uint64_t>(grow) * (1 + (b + s) % 3);
          x->add_positive_deltas(static_cast<int64_t>(c) - static_cast<int64_t>(previous));
          previous = c;
          count += c;
          sum += static_cast<double>(c) * std::exp2((-60 + b - 0.5) / 8);
        }
        x->set_count_int(count);
        x->set_sum(sum);
        x->set_timestamp(ms);
        samples += 1;
      }
      if (samples >= per_request) flush();
    }
  }
  flush();
  return bodies;
}

int Run(const std::string& kind, size_t hosts, size_t series, size_t per_request, int scrapes,
        double seconds) {
  std::vector<std::string> bodies;
  for (int k = 0; k < scrapes; ++k) {
    for (std::string& b : Scrape(kind, hosts, series, k, per_request))
      bodies.push_back(std::move(b));
  }
  PromWriteConfig config;
  config.max_hosts = static_cast<int64_t>(hosts);
  PromConverter converter;
  PromHosts held(hosts);
  PromReceiver receiver(&converter, &held, nullptr, {}, config);
  std::atomic<bool> done{false};
  std::atomic<uint64_t> batches{0};
  std::thread flusher([&held, &done, &batches] {
    while (!done) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      batches += held.TakeBatchesBefore(UnixSecondsNow()).size();
    }
  });
  uint64_t requests = 0;
  const double cpu_start = CpuSeconds();
  const Clock::time_point start = Clock::now();
  for (size_t i = 0; std::chrono::duration<double>(Clock::now() - start).count() < seconds; ++i) {
    const HttpRouteAnswer answer = receiver.Handle(
        HttpRouteRequest{"POST", "application/x-protobuf", "snappy", bodies[i % bodies.size()]});
    if (answer.status != 204) {
      std::fprintf(stderr, "prom_bench: answer %u: %s\n", answer.status, answer.body.c_str());
      done = true;
      flusher.join();
      return 1;
    }
    ++requests;
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  done = true;
  flusher.join();
  batches += held.TakeBatchesBefore(INT64_MAX).size();
  const double cpu = CpuSeconds() - cpu_start;
  const PromConvertCounters c = converter.counters();
  const double samples = static_cast<double>(c.samples + c.histogram_samples);
  std::printf(
      "kind %s: %zu hosts x %zu series, %zu samples per request (%zu bytes snappy), %.1f s, "
      "%.2f CPU-s: %.0f samples/s, %.0f samples per CPU-second, %.0f requests/s; %llu events, "
      "%llu batches\n",
      kind.c_str(), hosts, series, per_request, bodies[0].size(), elapsed, cpu, samples / elapsed,
      samples / cpu, static_cast<double>(requests) / elapsed,
      static_cast<unsigned long long>(c.histogram_events),
      static_cast<unsigned long long>(batches.load()));
  return 0;
}

}  // namespace
}  // namespace trailmap

int main(int argc, char** argv) {
  CLI::App app{"prom_bench: Prometheus remote-write samples per second through the agent's path"};
  std::string kind = "classic";
  size_t hosts = 10, series = 100, per_request = 2000;
  int scrapes = 20;
  double seconds = 5;
  app.add_option("--kind", kind, "classic or native (default classic)")
      ->check(CLI::IsMember({"classic", "native"}));
  app.add_option("--hosts", hosts, "instances (default 10)");
  app.add_option("--series", series, "histograms per instance (default 100)");
  app.add_option("--per-request", per_request, "samples per request (default 2000)");
  app.add_option("--scrapes", scrapes, "scrapes made up front and replayed (default 20)");
  app.add_option("--seconds", seconds, "how long to run (default 5)");
  CLI11_PARSE(app, argc, argv);
  return trailmap::Run(kind, hosts, series, per_request, scrapes, seconds);
}
