#include "bench/fleet_scalars.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace trailmap {
namespace {

// A uniform number in [0, 1) from (host, second, which): splitmix64 of the three.
double Noise(size_t host, int64_t second, uint64_t which) {
  uint64_t z = (static_cast<uint64_t>(host) * 0x9E3779B97F4A7C15ull) ^
               (static_cast<uint64_t>(second) * 0xBF58476D1CE4E5B9ull) ^
               (which * 0x94D049BB133111EBull);
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / 9007199254740992.0;
}

}  // namespace

bool IsBusyFleetHost(size_t host) { return host % 16 == 3; }

Batch WithFleetScalars(Batch batch, size_t host, int64_t second) {
  const uint32_t first = static_cast<uint32_t>(batch.series.size());
  const char* usage = "CPU time of the whole host by mode, % of all CPUs";
  for (const char* mode : {"user", "system", "iowait", "steal"}) {
    batch.series.push_back(
        {"cpu.usage", MetricKind::kScalar, "%", std::string("mode=") + mode, usage});
  }
  batch.series.push_back(
      {"mem.rss.total", MetricKind::kScalar, "B", "", "Resident set size of all processes"});
  batch.series.push_back(
      {"net.rx.bytes", MetricKind::kScalar, "B/s", "interface=eth0", "Bytes received per second"});

  constexpr double kPi = 3.14159265358979;
  const double phase = static_cast<double>(host % 7) / 7.0;
  const double wave = 0.5 + 0.5 * std::sin(2 * kPi * (static_cast<double>(second) / 300.0 + phase));
  double user = IsBusyFleetHost(host) ? 85 + 13 * Noise(host, second, 1)
                                      : 15 + 20 * wave + 5 * Noise(host, second, 1);
  const double system = 3 + 5 * Noise(host, second, 2);
  const bool io_burst = (second % 60) < 5;
  const double iowait = io_burst ? 8 + 12 * Noise(host, second, 3) : 2 * Noise(host, second, 3);
  const double steal = host % 3 == 2 ? 1 + 2 * Noise(host, second, 4) : 0;
  user = std::min(user, 100.0 - system - iowait - steal);
  const double gib = 1024.0 * 1024 * 1024;
  const double rss = (2 + 6 * Noise(host, 0, 5)) * gib + static_cast<double>(second % 3600) * 1e5;
  const double rx = user * 0.4 * 1024 * 1024 * (0.8 + 0.4 * Noise(host, second, 6));

  SecondDelta& sd = batch.seconds.empty() ? batch.seconds.emplace_back() : batch.seconds.back();
  if (sd.time == 0) sd.time = second;
  const double values[] = {user, system, iowait, steal, std::round(rss), std::round(rx)};
  for (uint32_t i = 0; i < 6; ++i) sd.scalars.push_back({first + i, values[i]});
  return batch;
}

}  // namespace trailmap
