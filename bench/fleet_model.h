// FleetModel: the simulated fleet that the demo, docker-compose, the load generator and the
// benchmarks send. Deterministic for a seed: the same (host, second) always gives the same
// histograms and stacks, and a host's profile depends only on the seed and its index.
//
// disk.latency, decomposed by op (read 70% of the events, write 30%), is a mix of three parts:
//   - cache hits: ~40 µs (reads) / ~120 µs (writes). Each host has its own cache-hit ratio, drawn
//     uniformly from 0.45-0.95 for reads (writes hit 0.6 times as often): a host that misses more
//     has more of its events in the disk band, a larger CoV and a taller disk band in its trail.
//   - the disk band: SSD hosts (about 65%) ~180 µs, spinning disks ~5 ms (rotational latency),
//     both log-normal. A spinning host's cache hits and disk band are two modes far apart (high
//     bimodality); an SSD host's are close. Every host's disk band drifts up (× 1.8) for ten
//     seconds of every minute, so heat maps have structure to show.
//   - outliers: 0.1% of the events near 250 ms.
// Variety on top (host index i, counted from 0; sim-001 is i = 0):
//   - bimodal hosts (i % 29 == 13: sim-014, sim-043, ...): the disk band is two bands, half the
//     disk I/O 3.5 times slower (a degraded mirror member): two humps in the trail, the columns'
//     bimodality sort puts them first;
//   - periodic pauses (i % 97 == 31: sim-032, sim-129, ...): every 30 s a 2 s pause adds 40 ms to
//     a third of the events: a faint band at +40 ms in the heat map, a second mode in the trail;
//   - planted slow hosts (i % 17 == 5: sim-006, sim-023, sim-040, sim-057, ...), differing in three
//     ways by (i / 17) % 3: a slow tail (1.5% of the events log-normal around 60 ms instead of
//     0.1% at 250 ms: a high p99, an ordinary p50), a shifted mode (a spinning disk three times
//     slower: the whole disk band moves right) or periodic stalls (one second in every 20 adds
//     80 ms to every disk I/O: a stripe in the heat map, rug ticks at 80+ ms);
//   - a daily load cycle: events per second × (1 + 0.5 sin(2π (t / 86400 - 0.25))), 0.5× at
//     00:00 UTC and 1.5× at 12:00, and the disk band slower under load (× 0.8 + 0.2 × load).
// What each view should show on it: `columns --sort cov` puts the low-hit-ratio spinning hosts
// and the slow-tail hosts first and SSD hosts with high hit ratios last; `--sort bimodality` the
// bimodal and spinning hosts; `--sort p99` the slow hosts; the trails show the SSD / spinning split
// as two families of shapes; `outliers` and the differential flame graph find the slow hosts.
// With `stack_rate` > 0 every host also samples CPU stacks (metric cpu.stacks, field execname):
// a fleet-wide catalog of `distinct_stacks` plausible stacks of four processes, built as a tree
// (each stack extends a prefix of an earlier one), drawn with a Zipf-like spread (weight
// 1/rank^1.1) whose ranks are rotated per host; the slow hosts spend 30% of their samples in a
// distinctive hot path, one per way of being slow: the slow-tail hosts compressing (nginx
// compress_block -> ZSTD_compressBlock_doubleFast), the shifted-mode host reading a slow disk
// (postgres FileRead -> pread64, blk_mq_submit_bio, io_schedule), the stalling host in garbage
// collection (java G1CollectedHeap::do_collection_pause -> ...). The catalog's ids are
// fixed, so a batch carries the definitions of every stack it uses and the shipper sends each
// once per connection, as an agent's would.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/histogram.h"

namespace trailmap {

struct FleetOptions {
  size_t hosts = 50;  // simulated hosts, named <prefix>001, <prefix>002, ...
  std::string prefix = "sim-";
  std::string metric = "disk.latency";
  double events_per_second = 200;  // per host, all ops together
  uint64_t seed = 1;
  double stack_rate = 0;         // stack samples per host per second; 0 = no stacks
  size_t distinct_stacks = 300;  // stacks in the fleet's catalog (plus 9 hot ones)
  bool histograms = true;        // false: stacks only (wire-size measurements)
};

enum class DiskKind { kSsd, kSpinning };
enum class SlowKind { kNone, kSlowTail, kShiftedMode, kStalls };

// One host's profile (see the top of this file for what each part means).
struct SimulatedHost {
  std::string name;
  FieldSet labels;    // role=web|db, zone=a|b|c, disk=ssd|hdd
  bool slow = false;  // a planted slow host: slow_kind says how
  SlowKind slow_kind = SlowKind::kNone;
  DiskKind disk = DiskKind::kSsd;
  double cache_hit = 0.7;  // share of reads that hit the cache (writes: 0.6 × this)
  bool bimodal = false;    // the disk band is two bands
  bool pauses = false;     // every 30 s, 2 s of +40 ms on a third of the events
};

// The daily load factor at `second` (Unix time): 0.5 at 00:00 UTC, 1.5 at 12:00.
double DailyLoad(int64_t second);

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
  std::vector<FrameDef> frames_;      // frame id = index + 1
  std::vector<StackDef> stacks_;      // stack id = index + 1; the last 9 are the hot ones
  std::vector<uint32_t> process_of_;  // stack index -> process index
  std::vector<double> zipf_cdf_;      // over ranks 0..distinct_stacks-1
};

}  // namespace trailmap
