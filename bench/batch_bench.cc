// What ingest's batch codec costs per histogram-second: EncodeBatch (the agent), DecodeBatch with
// every item checked (the aggregator, before its write) and EncodedBatchBytes, SplitBatch's check
// of a batch that needs no cut (every producer). One batch: 60 seconds x 100 series of one busy disk's
// latencies (~1,000 values each). Uses only EncodeBatch/DecodeBatch, so the same file measures
// an older core/ too (docs/benchmarks-log.md, "Per-item validation and SplitBatch", has the commands).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "core/batch.h"
#include "core/histogram.h"
#if __has_include("core/batch_split.h")
#include "core/batch_split.h"
#define HAVE_SPLIT 1
#endif

namespace trailmap {
namespace {

Batch BusyBatch() {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> cache(std::log(40'000.0), 0.35), disk(std::log(4e6), 0.5);
  std::uniform_real_distribution<double> pick(0, 1);
  Batch b;
  b.agent = "web-1/0123456789abcdef";
  b.sequence = 1;
  b.host = "web-1";
  b.labels = {{"role", "web"}};
  for (int i = 0; i < 100; ++i) {
    b.series.push_back({"disk.latency", MetricKind::kLatency, "ns", "dev=d" + std::to_string(i)});
  }
  for (int64_t t = 0; t < 60; ++t) {
    SecondDelta sd;
    sd.time = 1'700'000'000 + t;
    for (uint32_t i = 0; i < 100; ++i) {
      Histogram h;
      for (int v = 0; v < 1000; ++v) {
        h.Record(static_cast<uint64_t>(pick(rng) < 0.7 ? cache(rng) : disk(rng)));
      }
      sd.histograms.push_back({i, h.Encode()});
    }
    b.seconds.push_back(std::move(sd));
  }
  return b;
}

template <typename F>
double HistogramSecondsPerSecond(F f, size_t per_call) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  size_t calls = 0;
  while (Clock::now() - start < std::chrono::seconds(2)) {
    f();
    ++calls;
  }
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(calls * per_call) / s;
}

}  // namespace
}  // namespace trailmap

int main() {
  using namespace trailmap;
  const Batch batch = BusyBatch();
  const size_t items = 60 * 100;
  const std::string bytes = EncodeBatch(batch);
  size_t sink = 0;
  std::printf("batch: %zu histogram-seconds, %zu bytes\n", items, bytes.size());
  std::printf("EncodeBatch: %.0f histogram-seconds/s\n",
              HistogramSecondsPerSecond([&] { sink += EncodeBatch(batch).size(); }, items));
  std::printf("DecodeBatch: %.0f histogram-seconds/s\n", HistogramSecondsPerSecond([&] {
                Result<Batch> r = DecodeBatch(bytes);
                sink += r.ok() ? r->seconds.size() : 0;
              }, items));
#ifdef HAVE_SPLIT
  std::printf("EncodedBatchBytes (SplitBatch's check): %.0f histogram-seconds/s\n",
              HistogramSecondsPerSecond([&] { sink += EncodedBatchBytes(batch); }, items));
#endif
  return sink == 0;
}
