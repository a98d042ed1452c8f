// trailmap-test-busy [CPU_SECONDS [MAX_WALL_SECONDS]]: burns CPU inside trailmap_test_busy_loop
// until the process has used CPU_SECONDS of CPU (default 1) or MAX_WALL_SECONDS have passed
// (default 10), so a loaded machine stretches the run instead of shrinking the CPU it uses.
// perf_source_test looks for the function's name in the samples; built at -O0 with frame
// pointers so `perf record -g` walks its stack.
#include <time.h>

#include <cstdlib>

namespace {
double Now(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}
}  // namespace

extern "C" __attribute__((noinline)) unsigned long trailmap_test_busy_loop(double cpu_seconds,
                                                                           double max_wall) {
  const double wall_end = Now(CLOCK_MONOTONIC) + max_wall;
  volatile unsigned long x = 0;
  while (Now(CLOCK_PROCESS_CPUTIME_ID) < cpu_seconds && Now(CLOCK_MONOTONIC) < wall_end) {
    for (int i = 0; i < 100000; ++i) x = x + static_cast<unsigned long>(i);
  }
  return x;
}

int main(int argc, char** argv) {
  const double cpu = argc > 1 ? std::atof(argv[1]) : 1.0;
  const double wall = argc > 2 ? std::atof(argv[2]) : 10.0;
  return trailmap_test_busy_loop(cpu, wall) == 1 ? 1 : 0;
}
