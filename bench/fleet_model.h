// FleetModel: the simulated fleet that the demo, docker-compose and the load generator send.
//
// Each host has a disk whose latency has a fast cache-hit band, a slower disk band and rare
// outliers, decomposed by op (read/write). Some hosts are clearly slower than the rest (their
// disk band is three times slower, with ten times the outliers), and every host's disk band
// drifts up for ten seconds in every minute, so heat maps have structure to show.
// Deterministic for a seed: the same (host, second) always gives the same histograms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/histogram.h"

namespace trailmap {

struct FleetOptions {
  size_t hosts = 50;                      // simulated hosts, named <prefix>001, <prefix>002, ...
  std::string prefix = "sim-";
  std::string metric = "disk.latency";
  double events_per_second = 200;         // per host, all ops together
  uint64_t seed = 1;
};

struct SimulatedHost {
  std::string name;
  FieldSet labels;  // role=web|db, zone=a|b|c
  bool slow = false;
};

class FleetModel {
 public:
  explicit FleetModel(FleetOptions options);

  const std::vector<SimulatedHost>& hosts() const { return hosts_; }
  // One second of one host as a batch (agent id and sequence are the shipper's to fill in).
  Batch HostSecond(size_t host, int64_t second) const;
  // The op decomposition this model uses, for the series table.
  static const std::vector<std::string>& Ops();

 private:
  FleetOptions options_;
  std::vector<SimulatedHost> hosts_;
};

}  // namespace trailmap
