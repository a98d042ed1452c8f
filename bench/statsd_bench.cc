// statsd_bench: statsd lines per second the agent's statsd path sustains (docs/BENCHMARKS.md,
// "The agent's sources and inputs"). Not a Google Benchmark: a real StatsdServer on loopback UDP feeding a real
// Bucketizer, a flush thread taking completed seconds every 250 ms as the agent does, and one
// sender that keeps at most --window datagrams unreceived (so the kernel buffer never drops and
// the figure is what the receive thread keeps up with, not what UDP loses).
//
//   statsd_bench --mix timings --seconds 10     only |ms lines
//   statsd_bench --mix mixed --seconds 10       ms, h, d (3 packed values), c @0.5, g, g delta,
//                                               s, in turn
// Each line has two tags; 50 series per metric. Prints lines/s, values/s and datagrams lost.
#include <CLI/CLI.hpp>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "agent/statsd_server.h"

namespace trailmap {
namespace {

namespace asio = boost::asio;
using asio::ip::udp;
using Clock = std::chrono::steady_clock;

// The `i`-th line of the mix.
std::string MakeLine(const std::string& mix, size_t i) {
  const std::string tags = "|#op:read,route:/api/" + std::to_string(i % 50);
  const std::string ms = std::to_string(1 + i % 997) + "." + std::to_string(i % 1000);
  if (mix == "timings") return "bench.lat:" + ms + "|ms" + tags;
  switch (i % 7) {
    case 0:
      return "bench.lat:" + ms + "|ms" + tags;
    case 1:
      return "bench.hist:" + ms + "|h" + tags;
    case 2:
      return "bench.dist:" + ms + ":" + std::to_string(i % 13) + ":7.5|d" + tags;
    case 3:
      return "bench.hits:1|c|@0.5" + tags;
    case 4:
      return "bench.queue:" + std::to_string(i % 100) + "|g" + tags;
    case 5:
      return std::string("bench.queue:") + (i % 2 ? "+" : "-") + "1|g" + tags;
    default:
      return "bench.users:user" + std::to_string(i % 1000) + "|s" + tags;
  }
}

int Run(const std::string& mix, double seconds, size_t lines_per_packet, uint64_t window) {
  Bucketizer bucketizer;
  StatsdServerOptions options;
  options.port = 0;
  Result<std::unique_ptr<StatsdServer>> server = StatsdServer::Start(options, &bucketizer);
  if (!server.ok()) {
    std::fprintf(stderr, "statsd_bench: %s\n", server.status().ToString().c_str());
    return 1;
  }
  std::atomic<bool> stop{false};
  std::thread flusher([&bucketizer, &stop] {
    while (!stop.load()) {
      const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
      while (!bucketizer.TakeSecondsBefore(now).empty()) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });

  // 1,000 distinct packets, sent in turn.
  std::vector<std::string> packets(1000);
  size_t line = 0;
  for (std::string& p : packets) {
    for (size_t k = 0; k < lines_per_packet; ++k) p += MakeLine(mix, line++) + "\n";
  }
  asio::io_context io;
  udp::socket socket(io, udp::endpoint(udp::v4(), 0));
  const udp::endpoint to(asio::ip::make_address("127.0.0.1"), (*server)->port());

  uint64_t sent = 0;
  uint64_t received = 0;
  const Clock::time_point start = Clock::now();
  const auto until = start + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    if (sent - received >= window) {
      received = (*server)->counters().packets;
      if (sent - received >= window) std::this_thread::yield();
      continue;
    }
    socket.send_to(asio::buffer(packets[sent % packets.size()]), to);
    ++sent;
    if (sent % 16 == 0) received = (*server)->counters().packets;
  }
  // Wait (bounded) for the last datagrams in flight.
  for (int i = 0; i < 200 && (*server)->counters().packets < sent; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const StatsdCounters c = (*server)->counters();
  stop = true;
  flusher.join();
  std::printf(
      "mix=%s lines/packet=%zu: %.0f lines/s, %.0f values/s (%llu lines in %.2f s), %llu of "
      "%llu datagrams lost, %llu lines rejected\n",
      mix.c_str(), lines_per_packet, static_cast<double>(c.lines_accepted) / elapsed,
      static_cast<double>(c.values) / elapsed, static_cast<unsigned long long>(c.lines_accepted),
      elapsed, static_cast<unsigned long long>(sent - c.packets),
      static_cast<unsigned long long>(sent), static_cast<unsigned long long>(c.lines_rejected));
  return c.lines_rejected == 0 ? 0 : 1;
}

}  // namespace
}  // namespace trailmap

int main(int argc, char** argv) {
  CLI::App app("statsd_bench: statsd lines/s through a real StatsdServer and Bucketizer");
  std::string mix = "timings";
  double seconds = 10;
  size_t lines = 20;
  uint64_t window = 64;
  app.add_option("--mix", mix, "timings | mixed")->check(CLI::IsMember({"timings", "mixed"}));
  app.add_option("--seconds", seconds, "how long to send");
  app.add_option("--lines", lines, "lines per datagram");
  app.add_option("--window", window, "datagrams sent and not yet received, at most");
  CLI11_PARSE(app, argc, argv);
  return trailmap::Run(mix, seconds, lines, window);
}
