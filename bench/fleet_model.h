// FleetModel: the simulated fleet that the demo, docker-compose and the load generator send.
//
// Each host has a disk whose latency has a fast cache-hit band, a slower disk band and rare
// outliers, decomposed by op (read/write). Some hosts are clearly slower than the rest (their
// disk band is three times slower, with ten times the outliers), and every host's disk band
// drifts up for ten seconds in every minute, so heat maps have structure to show.
// With `stack_rate` > 0 every host also samples CPU stacks (metric cpu.stacks, field execname):
// a fleet-wide catalog of `distinct_stacks` plausible stacks of four processes, built as a tree
// (each stack extends a prefix of an earlier one), drawn with a Zipf-like spread (weight
// 1/rank^1.1) whose ranks are rotated per host; the slow hosts spend 30% of their samples in a
// distinctive hot path (compress_block -> ZSTD_compressBlock_doubleFast). The catalog's ids are
// fixed, so a batch carries the definitions of every stack it uses and the shipper sends each
// once per connection, as an agent's would.
// Deterministic for a seed: the same (host, second) always gives the same histograms and stacks.
#pragma once

#include <cstdint>
#include <random>
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
  double stack_rate = 0;                  // stack samples per host per second; 0 = no stacks
  size_t distinct_stacks = 300;           // stacks in the fleet's catalog (plus 3 hot ones)
  bool histograms = true;                 // false: stacks only (wire-size measurements)
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
  // The frame that only slow hosts' stacks hold (what a differential flame graph should show).
  static constexpr const char* kHotFrame = "ZSTD_compressBlock_doubleFast";

 private:
  void BuildStackCatalog();
  void AddStacks(size_t host, int64_t second, std::mt19937_64& rng, Batch* batch,
                 SecondDelta* delta) const;

  FleetOptions options_;
  std::vector<SimulatedHost> hosts_;
  std::vector<FrameDef> frames_;        // frame id = index + 1
  std::vector<StackDef> stacks_;        // stack id = index + 1; the last 3 are the hot ones
  std::vector<uint32_t> process_of_;    // stack index -> process index
  std::vector<double> zipf_cdf_;        // over ranks 0..distinct_stacks-1
};

}  // namespace trailmap
