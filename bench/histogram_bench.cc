// Histogram kernels: record time per value, encoded size on a realistic distribution, and the
// merge of encoded histograms that every aggregator query does. Figures go to docs/BENCHMARKS.md.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/histogram.h"

namespace trailmap {
namespace {

// One busy disk's latencies in ns: 70% cache hits near 40 µs, 29.9% disk reads near 4 ms,
// 0.1% outliers near 200 ms.
std::vector<uint64_t> RealisticLatencies(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> cache(std::log(40'000.0), 0.35),
      disk(std::log(4'000'000.0), 0.5), outlier(std::log(200'000'000.0), 0.4);
  std::uniform_real_distribution<double> pick(0, 1);
  std::vector<uint64_t> v(n);
  for (auto& x : v) {
    const double p = pick(rng);
    x = static_cast<uint64_t>(p < 0.7 ? cache(rng) : p < 0.999 ? disk(rng) : outlier(rng));
  }
  return v;
}

void BM_Record(benchmark::State& state) {
  const auto values = RealisticLatencies(1 << 16, 1);
  Histogram h;
  size_t i = 0;
  for (auto _ : state) {
    h.Record(values[i++ & 0xffff]);
  }
  benchmark::DoNotOptimize(h.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Record);

// Encoded bytes per non-empty bucket, framing included, for one second of a series with
// state.range(0) events.
void BM_EncodeRealistic(benchmark::State& state) {
  Histogram h;
  for (uint64_t v : RealisticLatencies(static_cast<size_t>(state.range(0)), 2)) h.Record(v);
  std::string out;
  for (auto _ : state) {
    out.clear();
    h.EncodeTo(&out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["buckets"] = static_cast<double>(h.BucketsUsed());
  state.counters["bytes"] = static_cast<double>(out.size());
  state.counters["bytes_per_bucket"] =
      static_cast<double>(out.size()) / static_cast<double>(h.BucketsUsed());
}
BENCHMARK(BM_EncodeRealistic)->Arg(100)->Arg(1000)->Arg(10000)->Arg(100000);

void BM_MergeEncoded(benchmark::State& state) {
  Histogram h;
  for (uint64_t v : RealisticLatencies(static_cast<size_t>(state.range(0)), 3)) h.Record(v);
  const std::string encoded = h.Encode();
  Histogram into;
  for (auto _ : state) {
    benchmark::DoNotOptimize(into.MergeEncoded(encoded).ok());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["buckets"] = static_cast<double>(h.BucketsUsed());
}
BENCHMARK(BM_MergeEncoded)->Arg(100)->Arg(1000);

// The same merge into a histogram already at kMaxTotalCount: every merge saturates, so each one
// also rescales every bucket (core/histogram.h). The rare path, priced against the one above.
void BM_MergeEncodedSaturating(benchmark::State& state) {
  Histogram h;
  for (uint64_t v : RealisticLatencies(static_cast<size_t>(state.range(0)), 3)) h.Record(v);
  const std::string encoded = h.Encode();
  Histogram into;
  for (uint64_t v : RealisticLatencies(static_cast<size_t>(state.range(0)), 4)) {
    into.Record(v, kMaxTotalCount / static_cast<uint64_t>(state.range(0)));
  }
  into.Record(1, kMaxTotalCount);  // now exactly at the bound
  for (auto _ : state) {
    benchmark::DoNotOptimize(into.MergeEncoded(encoded).ok());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["saturated"] = into.saturated() ? 1 : 0;
}
BENCHMARK(BM_MergeEncodedSaturating)->Arg(100)->Arg(1000);

// The columns view's merge: one cell per host, each fed 2 series x 10 minute-histograms of ~600
// events (the 1-minute rollups of a 10-minute range). state.range(0) = 0: in key order (each
// minute, every host in turn: what a range scan of second|host|series keys yields, so each cell's
// buckets leave the cache between two of its merges); 1: host after host (every value of one
// cell, then the next).
void BM_MergeEncodedCells(benchmark::State& state) {
  constexpr size_t kHosts = 1000, kValues = 20;
  std::vector<std::string> encoded(kHosts * kValues);
  for (size_t h = 0; h < kHosts; ++h) {
    for (size_t v = 0; v < kValues; ++v) {
      Histogram one;
      for (uint64_t x : RealisticLatencies(600, h * kValues + v)) one.Record(x);
      encoded[h * kValues + v] = one.Encode();
    }
  }
  const bool host_major = state.range(0) == 1;
  for (auto _ : state) {
    std::vector<Histogram> cells(kHosts);
    for (size_t a = 0; a < (host_major ? kHosts : kValues); ++a) {
      for (size_t b = 0; b < (host_major ? kValues : kHosts); ++b) {
        const size_t h = host_major ? a : b, v = host_major ? b : a;
        benchmark::DoNotOptimize(cells[h].MergeEncoded(encoded[h * kValues + v]).ok());
      }
    }
    benchmark::DoNotOptimize(cells.data());
  }
  state.SetItemsProcessed(state.iterations() * kHosts * kValues);
}
BENCHMARK(BM_MergeEncodedCells)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trailmap

BENCHMARK_MAIN();
