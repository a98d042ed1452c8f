// http_load: requests per second of one trailmap-query endpoint under N concurrent clients, each
// a thread with its own keep-alive connection sending GET after GET for a fixed time. Prints the
// count, requests/s, the status codes seen and latency percentiles (docs/BENCHMARKS.md, "The page and trailmap-query").
//
//   http_load --port 7402 --clients 20 --seconds 10 \
//     '/api/heatmap?metric=disk.latency&from=-5m'
#include <utility>  // before Boost 1.74's asio, which uses std::exchange without it

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  int port = 7402, clients = 20, seconds = 10;
  std::string target;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--port" && i + 1 < argc) {
      port = std::atoi(argv[++i]);
    } else if (arg == "--clients" && i + 1 < argc) {
      clients = std::atoi(argv[++i]);
    } else if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atoi(argv[++i]);
    } else {
      target = arg;
    }
  }
  if (target.empty() || clients < 1 || seconds < 1) {
    std::fprintf(stderr, "usage: http_load [--port 7402] [--clients 20] [--seconds 10] TARGET\n");
    return 2;
  }
  const Clock::time_point end = Clock::now() + std::chrono::seconds(seconds);
  std::mutex mu;
  std::vector<double> latencies_ms;
  std::map<int, long> statuses;
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&mu, &latencies_ms, &statuses, &target, port, end]() {
      asio::io_context io;
      asio::ip::tcp::socket socket(io);
      beast::error_code ec;
      std::vector<double> mine;
      std::map<int, long> codes;
      bool connected = false;
      beast::flat_buffer buffer;
      while (Clock::now() < end) {
        if (!connected) {
          socket = asio::ip::tcp::socket(io);
          socket.connect({asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)}, ec);
          if (ec) {
            ++codes[-1];
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            continue;
          }
          connected = true;
          buffer.clear();
        }
        http::request<http::empty_body> request{http::verb::get, target, 11};
        request.set(http::field::host, "127.0.0.1");
        const Clock::time_point start = Clock::now();
        http::write(socket, request, ec);
        http::response_parser<http::string_body> parser;
        parser.body_limit(256 << 20);
        if (!ec) http::read(socket, buffer, parser, ec);
        if (ec) {
          ++codes[-1];
          connected = false;
          continue;
        }
        mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        ++codes[static_cast<int>(parser.get().result_int())];
        if (!parser.get().keep_alive()) connected = false;
      }
      std::lock_guard<std::mutex> lock(mu);
      latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
      for (const auto& [code, n] : codes) statuses[code] += n;
    });
  }
  for (std::thread& t : threads) t.join();
  std::sort(latencies_ms.begin(), latencies_ms.end());
  const auto pct = [&latencies_ms](double p) {
    if (latencies_ms.empty()) return 0.0;
    return latencies_ms[std::min(latencies_ms.size() - 1,
                                 static_cast<size_t>(p / 100 * latencies_ms.size()))];
  };
  std::printf("%zu requests in %d s with %d clients: %.1f requests/s; latency p50 %.1f ms, p99 "
              "%.1f ms, max %.1f ms\n",
              latencies_ms.size(), seconds, clients,
              static_cast<double>(latencies_ms.size()) / seconds, pct(50), pct(99),
              latencies_ms.empty() ? 0.0 : latencies_ms.back());
  for (const auto& [code, n] : statuses) std::printf("  status %d: %ld\n", code, n);
  return 0;
}
