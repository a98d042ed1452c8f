// Flame graph throughput: folding `perf script` text (MiB/s of input) and rendering folded
// stacks to an SVG (MiB/s of folded input). inferno, FlameGraph's Rust port, reports about
// 180 MiB/s collapsing and 38 MiB/s rendering, single-threaded.
//
// The perf script text is made here: a few hundred distinct stacks of 10–40 frames (C++, libc,
// kernel and JIT frames, offsets, [unknown]s), sampled with a skew as real profiles are, in
// perf's default -g output format.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "query/render/flame.h"
#include "query/views/flame.h"
#include "stacks/stack_collapse.h"

namespace trailmap {
namespace {

struct Frame {
  std::string symbol, module;
  uint64_t pc;
};

std::string MakePerfScript(size_t target_bytes, int distinct_stacks) {
  std::mt19937_64 rng(42);
  const char* const kModules[] = {"/usr/bin/server", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                                  "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30",
                                  "[kernel.kallsyms]", "/tmp/perf-4242.map"};
  std::vector<Frame> pool;
  for (int i = 0; i < 400; ++i) {
    const int m = static_cast<int>(rng() % 5);
    std::string sym;
    switch (m) {
      case 0:
        sym = "trailmap::Server::Handle" + std::to_string(i) + "(Request const&)";
        break;
      case 1:
        sym = "__libc_func_" + std::to_string(i);
        break;
      case 2:
        sym = "std::vector<int, std::allocator<int> >::_M_op" + std::to_string(i);
        break;
      case 3:
        sym = "do_syscall_" + std::to_string(i);
        break;
      default:
        sym = "Lcom/example/Service;.call" + std::to_string(i);
        break;
    }
    if (i % 37 == 0) sym = "[unknown]";
    pool.push_back({sym, kModules[m], 0x7f0000000000ull + rng() % 0xffffffffull});
  }
  std::vector<std::vector<int>> stacks;
  for (int s = 0; s < distinct_stacks; ++s) {
    const int depth = 10 + static_cast<int>(rng() % 31);
    std::vector<int> frames;
    for (int d = 0; d < depth; ++d) frames.push_back(static_cast<int>(rng() % pool.size()));
    stacks.push_back(std::move(frames));
  }
  std::string text;
  text.reserve(target_bytes + 4096);
  std::geometric_distribution<int> pick(0.02);
  double ts = 1234567.0;
  char buf[256];
  while (text.size() < target_bytes) {
    const int s = pick(rng) % distinct_stacks;
    ts += 0.000101;
    snprintf(buf, sizeof buf, "server 4242/%d [%03d] %.6f:     250000 cycles:u: \n", 4242 + s % 8,
             s % 4, ts);
    text += buf;
    for (auto it = stacks[s].rbegin(); it != stacks[s].rend(); ++it) {
      const Frame& f = pool[*it];
      snprintf(buf, sizeof buf, "\t    %12llx %s+0x%x (%s)\n",
               static_cast<unsigned long long>(f.pc), f.symbol.c_str(), (*it * 13) % 4096,
               f.module.c_str());
      text += buf;
    }
    text += '\n';
  }
  return text;
}

const std::string& PerfText() {
  static const std::string text = MakePerfScript(64 << 20, 300);
  return text;
}

void BM_CollapsePerfScript(benchmark::State& state) {
  const std::string& text = PerfText();
  CollapseOptions options;
  options.annotate_kernel = options.annotate_jit = true;
  for (auto _ : state) {
    benchmark::DoNotOptimize(CollapsePerfScript(text, options));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_CollapsePerfScript)->Unit(benchmark::kMillisecond);

// Folded input of `distinct` stacks: collapsed from perf script text with that many stacks.
std::string Folded(int distinct) {
  return FormatFolded(
      CollapsePerfScript(MakePerfScript(static_cast<size_t>(distinct) * 8000, distinct), {}));
}

void BM_RenderFlameSvg(benchmark::State& state) {
  const std::string folded = Folded(static_cast<int>(state.range(0)));
  size_t svg_bytes = 0;
  for (auto _ : state) {
    const std::string svg = RenderFlameSvg(BuildFlameTree(folded));
    svg_bytes = svg.size();
    benchmark::DoNotOptimize(svg.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * folded.size()));
  state.counters["folded_KiB"] = static_cast<double>(folded.size()) / 1024;
  state.counters["svg_KiB"] = static_cast<double>(svg_bytes) / 1024;
}
BENCHMARK(BM_RenderFlameSvg)->Arg(300)->Arg(3000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trailmap

BENCHMARK_MAIN();
