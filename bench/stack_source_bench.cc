// stack_source_bench: what the agent's stack sources cost.
//
//   stack_source_bench perf [--seconds 30] [--frequency 99] [--window-ms 2000] [--callgraph fp]
//       Runs agent/perf_source on the whole machine for SECONDS and prints the CPU it used per
//       second of wall time: this process (the source's thread, folding) plus its children
//       (perf record and every perf script run), from getrusage after they are reaped.
//   stack_source_bench folded [--lines 2000000] [--clients 4] [--depth 20]
//       Writes LINES folded lines through CLIENTS unix-socket connections into
//       agent/folded_source and prints lines/s until the last StackSample reached the sink; then
//       the same lines from a file.
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/folded_source.h"
#include "agent/perf_source.h"

using namespace trailmap;
using Clock = std::chrono::steady_clock;

namespace {

double Seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; }

double CpuOf(int who) {
  rusage u{};
  getrusage(who, &u);
  return Seconds(u.ru_utime) + Seconds(u.ru_stime);
}

int RunPerf(double seconds, int frequency, int64_t window_ms, const std::string& callgraph) {
  std::atomic<uint64_t> samples{0}, stacks{0};
  PerfSourceOptions o;
  o.frequency = frequency;
  o.window_ms = window_ms;
  o.callgraph = callgraph;
  PerfSource source(o, [&](StackSample&& s) {
    samples += s.count;
    ++stacks;
  });
  const double self0 = CpuOf(RUSAGE_SELF), child0 = CpuOf(RUSAGE_CHILDREN);
  const Clock::time_point start = Clock::now();
  if (Status s = source.Start(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  source.Stop();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const double self = CpuOf(RUSAGE_SELF) - self0, child = CpuOf(RUSAGE_CHILDREN) - child0;
  const PerfSourceStats st = source.stats();
  std::printf(
      "perf source, %d Hz, %lld ms windows, callgraph %s, %.1f s wall on %u CPUs:\n"
      "  windows %llu, samples %llu (%.1f/s), StackSamples %llu, failures %llu%s%s\n"
      "  CPU: source thread+process %.3f s, perf children %.3f s, total %.3f s = %.2f%% of one "
      "core\n",
      frequency, static_cast<long long>(window_ms), callgraph.c_str(), wall,
      std::thread::hardware_concurrency(), static_cast<unsigned long long>(st.windows),
      static_cast<unsigned long long>(samples.load()), samples.load() / wall,
      static_cast<unsigned long long>(stacks.load()),
      static_cast<unsigned long long>(st.failures), st.last_error.empty() ? "" : ": ",
      st.last_error.c_str(), self, child, self + child, 100 * (self + child) / wall);
  return st.windows > 0 ? 0 : 1;
}

std::vector<std::string> MakeLines(size_t n, int depth) {
  std::vector<std::string> lines;
  lines.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string line = "main";
    for (int d = 1; d < depth; ++d) {
      line += ";ns::Service::handler_" + std::to_string((i * 7 + d * 13) % 50);
    }
    line += " " + std::to_string(1 + i % 5) + "\n";
    lines.push_back(std::move(line));
  }
  return lines;
}

int RunFolded(size_t n, int clients, int depth) {
  const std::vector<std::string> lines = MakeLines(n, depth);
  size_t bytes = 0;
  for (const std::string& l : lines) bytes += l.size();
  std::atomic<uint64_t> got{0};
  char dir[] = "/tmp/trailmap-bench-XXXXXX";
  if (mkdtemp(dir) == nullptr) return 1;
  {
    FoldedSourceOptions o;
    o.socket = std::string(dir) + "/s.sock";
    FoldedSource source(o, [&](StackSample&&) { ++got; });
    if (Status s = source.Start(); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
    const Clock::time_point start = Clock::now();
    std::vector<std::thread> writers;
    for (int c = 0; c < clients; ++c) {
      writers.emplace_back([&, c] {
        const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, o.socket.c_str(), sizeof addr.sun_path - 1);
        if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return;
        std::string buf;
        for (size_t i = static_cast<size_t>(c); i < lines.size(); i += clients) {
          buf += lines[i];
          if (buf.size() > 60000 || i + clients >= lines.size()) {
            std::string_view rest = buf;
            while (!rest.empty()) {
              const ssize_t w = write(fd, rest.data(), rest.size());
              if (w <= 0) break;
              rest.remove_prefix(static_cast<size_t>(w));
            }
            buf.clear();
          }
        }
        close(fd);
      });
    }
    for (std::thread& t : writers) t.join();
    while (got < n) std::this_thread::sleep_for(std::chrono::microseconds(200));
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("folded source, unix socket, %d clients, %zu lines of %d frames (%.1f MiB): "
                "%.2f s, %.0f lines/s, %.1f MiB/s\n",
                clients, n, depth, bytes / 1048576.0, secs, n / secs, bytes / 1048576.0 / secs);
  }
  got = 0;
  const std::string file = std::string(dir) + "/lines.folded";
  {
    std::ofstream out(file);
    for (const std::string& l : lines) out << l;
  }
  {
    FoldedSourceOptions o;
    o.path = file;
    FoldedSource source(o, [&](StackSample&&) { ++got; });
    const Clock::time_point start = Clock::now();
    if (Status s = source.Start(); !s.ok()) return 1;
    while (got < n) std::this_thread::sleep_for(std::chrono::microseconds(200));
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("folded source, file read once, %zu lines: %.2f s, %.0f lines/s, %.1f MiB/s\n", n,
                secs, n / secs, bytes / 1048576.0 / secs);
  }
  unlink(file.c_str());
  rmdir(dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stack_source_bench: CPU cost of the perf source, throughput of the folded source"};
  app.require_subcommand(1);
  double seconds = 30;
  int frequency = 99;
  int64_t window_ms = 2000;
  std::string callgraph = "fp";
  CLI::App* perf = app.add_subcommand("perf", "CPU used by the perf source while it samples");
  perf->add_option("--seconds", seconds, "How long to sample")->capture_default_str();
  perf->add_option("--frequency", frequency, "Hz per CPU")->capture_default_str();
  perf->add_option("--window-ms", window_ms, "Window length")->capture_default_str();
  perf->add_option("--callgraph", callgraph, "fp, dwarf or lbr")->capture_default_str();
  size_t lines = 2'000'000;
  int clients = 4, depth = 20;
  CLI::App* folded = app.add_subcommand("folded", "Lines per second through the folded source");
  folded->add_option("--lines", lines, "Lines to send")->capture_default_str();
  folded->add_option("--clients", clients, "Socket connections")->capture_default_str();
  folded->add_option("--depth", depth, "Frames per line")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (perf->parsed()) return RunPerf(seconds, frequency, window_ms, callgraph);
  return RunFolded(lines, clients, depth);
}
