// proc_overhead: what the agent's proc source costs on a host with many processes.
//
// Starts N real `sleep` processes (default 1000), then runs one ProcSource pass a second for
// --seconds (default 60), as trailmap-agent does, and measures each pass's CPU time with
// getrusage(RUSAGE_THREAD) (user + system: the kernel's work generating /proc text counts).
// Also reports the cost of turning a second's values into an encoded batch (the shipper's part).
// Prints one line per pass with --verbose, then a summary; kills its children before exiting.
//
//   build-rel/bin/proc_overhead --processes 1000 --seconds 60
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "agent/proc_source.h"
#include "core/open_files.h"
#include "ingest/bucketizer.h"

extern char** environ;

namespace {

double ThreadCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int64_t NowSecond() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"proc_overhead: CPU cost of the agent's proc source with N sleeping processes"};
  int processes = 1000, seconds = 60;
  bool verbose = false;
  app.add_option("--processes", processes, "sleep processes to start (default 1000)");
  app.add_option("--seconds", seconds, "passes, one a second (default 60)");
  app.add_flag("--verbose", verbose, "one line per pass, and the scalars per metric");
  CLI11_PARSE(app, argc, argv);

  trailmap::RaiseOpenFileLimit();  // as trailmap-agent does
  std::vector<pid_t> children;
  char sleep_arg0[] = "sleep", sleep_arg1[] = "3600";
  char* child_argv[] = {sleep_arg0, sleep_arg1, nullptr};
  for (int i = 0; i < processes; ++i) {
    pid_t pid = -1;
    if (posix_spawnp(&pid, "sleep", nullptr, nullptr, child_argv, environ) != 0) {
      std::fprintf(stderr, "proc_overhead: could only start %d processes\n", i);
      break;
    }
    children.push_back(pid);
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // let them all exec

  trailmap::Bucketizer bucketizer;
  trailmap::ProcSource source(trailmap::ProcSourceOptions{}, &bucketizer);
  std::vector<double> pass_cpu, take_cpu;
  uint64_t scalars = 0, bytes = 0, bytes_plain = 0;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i <= seconds; ++i) {  // pass 0 primes the deltas and is not counted
    const double c0 = ThreadCpuSeconds();
    source.Collect(NowSecond(), std::chrono::steady_clock::now());
    const double c1 = ThreadCpuSeconds();
    trailmap::CompletedSeconds done = bucketizer.TakeAll();
    std::map<std::string, int> per_metric;
    for (const auto& s : done.seconds) {
      scalars += s.scalars.size();
      for (const auto& v : s.scalars) ++per_metric[done.series[v.series].metric];
    }
    if (verbose && i == seconds) {
      for (const auto& [metric, count] : per_metric)
        std::printf("  %s: %d\n", metric.c_str(), count);
    }
    trailmap::Batch batch = trailmap::MakeBatch(std::move(done), "bench-host", {});
    batch.agent = "bench-host/1";
    batch.sequence = static_cast<uint64_t>(i) + 1;
    bytes += trailmap::EncodeBatch(batch).size();
    for (trailmap::SeriesDef& d : batch.series) d.description.clear();
    bytes_plain += trailmap::EncodeBatch(batch).size();  // what the descriptions cost
    const double c2 = ThreadCpuSeconds();
    if (i > 0) {
      pass_cpu.push_back(c1 - c0);
      take_cpu.push_back(c2 - c1);
    }
    if (verbose) {
      std::printf("pass %d: %.2f ms cpu collecting, %.2f ms taking+encoding, %llu processes\n", i,
                  (c1 - c0) * 1e3, (c2 - c1) * 1e3,
                  static_cast<unsigned long long>(source.counters().processes));
    }
    // Sleep to the next second, as the agent's pass thread does.
    const auto next = started + std::chrono::seconds(i + 1);
    std::this_thread::sleep_until(next);
  }
  const trailmap::ProcCounters c = source.counters();
  for (pid_t pid : children) kill(pid, SIGKILL);
  for (pid_t pid : children) waitpid(pid, nullptr, 0);

  if (pass_cpu.empty()) return 0;
  std::vector<double> sorted = pass_cpu;
  std::sort(sorted.begin(), sorted.end());
  double total = 0, take_total = 0;
  for (double v : pass_cpu) total += v;
  for (double v : take_cpu) take_total += v;
  const double n = static_cast<double>(pass_cpu.size());
  std::printf(
      "proc_overhead: %zu passes, %llu processes on the host (%zu started), %.0f scalars/pass, "
      "%.0f bytes/batch (%.0f without descriptions)\n"
      "  collect: mean %.2f ms cpu/pass (p50 %.2f, max %.2f) = %.3f%% of one core\n"
      "  take + encode: mean %.2f ms cpu/pass = %.3f%% of one core\n"
      "  counters: vanished %llu, unreadable %llu, parse_errors %llu, resets %llu\n",
      pass_cpu.size(), static_cast<unsigned long long>(c.processes), children.size(),
      static_cast<double>(scalars) / (n + 1), static_cast<double>(bytes) / (n + 1),
      static_cast<double>(bytes_plain) / (n + 1), total / n * 1e3, sorted[sorted.size() / 2] * 1e3,
      sorted.back() * 1e3, total / n * 100, take_total / n * 1e3, take_total / n * 100,
      static_cast<unsigned long long>(c.vanished), static_cast<unsigned long long>(c.unreadable),
      static_cast<unsigned long long>(c.parse_errors), static_cast<unsigned long long>(c.resets));
  return 0;
}
