#include "bench/fleet_model.h"

#include <cmath>
#include <random>

namespace trailmap {
namespace {

constexpr const char* kZones[] = {"a", "b", "c"};

}  // namespace

FleetModel::FleetModel(FleetOptions options) : options_(std::move(options)) {
  for (size_t i = 0; i < options_.hosts; ++i) {
    SimulatedHost h;
    char name[32];
    snprintf(name, sizeof name, "%03zu", i + 1);
    h.name = options_.prefix + name;
    h.labels = {{"role", i % 5 == 0 ? "db" : "web"}, {"zone", kZones[i % 3]}};
    h.slow = (i % 17) == 5;  // hosts 006, 023, 040, ...: a few clearly slower than the rest
    hosts_.push_back(std::move(h));
  }
}

const std::vector<std::string>& FleetModel::Ops() {
  static const std::vector<std::string> ops = {"read", "write"};
  return ops;
}

Batch FleetModel::HostSecond(size_t host, int64_t second) const {
  const SimulatedHost& h = hosts_[host];
  std::mt19937_64 rng(options_.seed * 0x9e3779b97f4a7c15ull ^ (static_cast<uint64_t>(second) << 20) ^ host);
  const bool drifting = (second % 60) < 10;
  const double disk_ns = 4e6 * (h.slow ? 3.0 : 1.0) * (drifting ? 1.8 : 1.0);
  const double outlier_share = h.slow ? 0.01 : 0.001;

  Batch b;
  b.host = h.name;
  b.labels = h.labels;
  SecondDelta sd;
  sd.time = second;
  const auto& ops = Ops();
  for (uint32_t op = 0; op < ops.size(); ++op) {
    b.series.push_back({options_.metric, MetricKind::kLatency, "ns", "op=" + ops[op]});
    // Reads are 70% of the traffic and mostly cache hits; writes go to disk more often.
    const double share = op == 0 ? 0.7 : 0.3;
    const double cache_share = op == 0 ? 0.7 : 0.45;
    std::poisson_distribution<int> events(options_.events_per_second * share);
    std::lognormal_distribution<double> cache(std::log(op == 0 ? 40e3 : 120e3), 0.35);
    std::lognormal_distribution<double> disk(std::log(disk_ns), 0.45);
    std::lognormal_distribution<double> outlier(std::log(250e6), 0.5);
    std::uniform_real_distribution<double> pick(0, 1);
    Histogram hist;
    for (int n = events(rng); n > 0; --n) {
      const double p = pick(rng);
      const double v = p < outlier_share ? outlier(rng) : p < cache_share ? cache(rng) : disk(rng);
      hist.Record(static_cast<uint64_t>(v));
    }
    if (!hist.empty()) sd.histograms.push_back({op, hist.Encode()});
  }
  b.seconds.push_back(std::move(sd));
  return b;
}

}  // namespace trailmap
