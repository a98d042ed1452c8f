// trailmap-test-busy SECONDS: burns one CPU for SECONDS of wall time inside
// trailmap_test_busy_loop, a function name perf_source_test looks for in the samples. Built at
// -O0 with frame pointers so `perf record -g` walks its stack.
#include <chrono>
#include <cstdlib>

extern "C" __attribute__((noinline)) unsigned long trailmap_test_busy_loop(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  volatile unsigned long x = 0;
  while (std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 100000; ++i) x = x + static_cast<unsigned long>(i);
  }
  return x;
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  return trailmap_test_busy_loop(seconds) == 1 ? 1 : 0;
}
