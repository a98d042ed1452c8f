#include "bench/fleet_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <random>
#include <set>
#include <unordered_map>

namespace trailmap {
namespace {

constexpr const char* kZones[] = {"a", "b", "c"};
constexpr const char* kProcesses[] = {"nginx", "java", "postgres", "python3"};
constexpr const char* kModules[] = {"ngx_http_", "jvm_", "pg_", "py_", "libc_", "ssl_", "tcp_"};
constexpr const char* kVerbs[] = {"read",   "parse",  "hash",  "alloc", "send", "lock",  "copy",
                                  "encode", "decode", "flush", "scan",  "sort", "match", "free"};
constexpr const char* kNouns[] = {"request", "buffer", "header", "page",   "tuple",  "frame",
                                  "event",   "block",  "index",  "socket", "string", "object"};
// The hot paths of the planted slow hosts, three stacks for each way of being slow (SlowKind
// kSlowTail, kShiftedMode, kStalls in that order): the process index (kProcesses) and the frames.
struct HotPath {
  uint32_t process;
  const char* frames[5];
  const char* leaves[3];
};
constexpr HotPath kHotPaths[] = {
    // A slow tail: compressing responses (the differential flame graph's classic).
    {0,
     {"nginx", "nginx_main", "ngx_http_gzip_body", "compress_block", nullptr},
     {FleetModel::kHotFrame, "ZSTD_compressBlock_doubleFast_extDict",
      "HUF_compress4X_usingCTable"}},
    // A shifted mode: a slow disk, its reads waiting in the block layer.
    {2,
     {"postgres", "postgres_main", "pg_read_page", "mdread", "FileRead"},
     {"pread64", "blk_mq_submit_bio", "io_schedule"}},
    // Stalls: a collector stopping the world.
    {1,
     {"java", "java_main", "jvm_gc_collect", "G1CollectedHeap::do_collection_pause", nullptr},
     {"G1ParScanThreadState::trim_queue", "G1RemSet::scan_heap_roots",
      "SafepointSynchronize::begin"}},
};
constexpr int kHotStacks = 9;  // 3 paths × 3 leaves

}  // namespace

void FleetModel::BuildStackCatalog() {
  std::mt19937_64 rng(options_.seed * 7919 + 17);
  std::unordered_map<std::string, uint32_t> frame_ids;
  const auto frame = [this, &frame_ids](const std::string& name) {
    auto [it, added] = frame_ids.emplace(name, static_cast<uint32_t>(frames_.size() + 1));
    if (added) frames_.push_back(FrameDef{it->second, name});
    return it->second;
  };
  std::uniform_int_distribution<int> module(0, 6), verb(0, 13), noun(0, 11), extra(1, 6);
  std::set<std::vector<uint32_t>> seen;
  const size_t n = std::max<size_t>(1, options_.distinct_stacks);
  while (stacks_.size() < n) {
    const uint32_t process = static_cast<uint32_t>(stacks_.size() % 4);
    std::vector<uint32_t> ids;
    // Extend a prefix of an earlier stack of the same process, so the stacks form a tree.
    const size_t earlier = stacks_.size() >= 4 ? rng() % (stacks_.size() / 4) * 4 + process : 0;
    if (stacks_.size() >= 4 && process_of_[earlier] == process) {
      const auto& base = stacks_[earlier].frames;
      ids.assign(base.begin(), base.begin() + 2 + rng() % (base.size() - 1));
    } else {
      ids = {frame(kProcesses[process]), frame(std::string(kProcesses[process]) + "_main")};
    }
    for (int k = extra(rng); k > 0; --k) {
      ids.push_back(
          frame(std::string(kModules[module(rng)]) + kVerbs[verb(rng)] + "_" + kNouns[noun(rng)]));
    }
    if (!seen.insert(ids).second) continue;
    stacks_.push_back(StackDef{static_cast<uint32_t>(stacks_.size() + 1), std::move(ids)});
    process_of_.push_back(process);
  }
  for (const HotPath& path : kHotPaths) {
    for (const char* leaf : path.leaves) {
      std::vector<uint32_t> ids;
      for (const char* f : path.frames) {
        if (f != nullptr) ids.push_back(frame(f));
      }
      ids.push_back(frame(leaf));
      stacks_.push_back(StackDef{static_cast<uint32_t>(stacks_.size() + 1), std::move(ids)});
      process_of_.push_back(path.process);
    }
  }
  double sum = 0;
  for (size_t r = 0; r < n; ++r) {
    sum += 1.0 / std::pow(static_cast<double>(r + 1), 1.1);
    zipf_cdf_.push_back(sum);
  }
  for (double& c : zipf_cdf_) c /= sum;
}

void FleetModel::AddStacks(size_t host, int64_t second, std::mt19937_64& rng, Batch* batch,
                           SecondDelta* delta) const {
  const size_t n = stacks_.size() - kHotStacks;
  std::poisson_distribution<int> samples(options_.stack_rate);
  std::uniform_real_distribution<double> pick(0, 1);
  std::map<uint32_t, uint64_t> counts;  // stack index -> samples
  const bool slow = hosts_[host].slow;
  for (int k = samples(rng); k > 0; --k) {
    const double p = pick(rng);
    if (slow && p < 0.3) {
      // The hot path of the host's way of being slow: 3 stacks after 3 × (kind - 1).
      const size_t path = static_cast<size_t>(hosts_[host].slow_kind) - 1;
      ++counts[static_cast<uint32_t>(n + path * 3 + static_cast<size_t>(p / 0.1) % 3)];
      continue;
    }
    const double u = pick(rng);
    const size_t rank = std::lower_bound(zipf_cdf_.begin(), zipf_cdf_.end(), u) - zipf_cdf_.begin();
    ++counts[static_cast<uint32_t>((std::min(rank, n - 1) + host * 7) % n)];
  }
  if (counts.empty()) return;
  uint32_t series_of_process[4] = {UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
  std::set<uint32_t> frames;
  for (const auto& [index, count] : counts) {
    const uint32_t process = process_of_[index];
    if (series_of_process[process] == UINT32_MAX) {
      series_of_process[process] = static_cast<uint32_t>(batch->series.size());
      batch->series.push_back({"cpu.stacks", MetricKind::kStacks, "samples",
                               std::string("execname=") + kProcesses[process]});
    }
    delta->stacks.push_back({series_of_process[process], stacks_[index].id, count});
    batch->stacks.push_back(stacks_[index]);
    frames.insert(stacks_[index].frames.begin(), stacks_[index].frames.end());
  }
  for (uint32_t f : frames) batch->frames.push_back(frames_[f - 1]);
  (void)second;
}

double DailyLoad(int64_t second) {
  const double day = static_cast<double>(((second % 86400) + 86400) % 86400) / 86400;
  return 1 + 0.5 * std::sin(2 * std::numbers::pi * (day - 0.25));
}

FleetModel::FleetModel(FleetOptions options) : options_(std::move(options)) {
  for (size_t i = 0; i < options_.hosts; ++i) {
    SimulatedHost h;
    char name[32];
    snprintf(name, sizeof name, "%03zu", i + 1);
    h.name = options_.prefix + name;
    // The profile depends on the seed and the index only, so hosts keep theirs at any fleet size.
    std::mt19937_64 rng(options_.seed * 0x2545f4914f6cdd1dull + i * 0x9e3779b97f4a7c15ull + 1);
    std::uniform_real_distribution<double> unit(0, 1);
    h.cache_hit = 0.45 + 0.5 * unit(rng);
    h.disk = unit(rng) < 0.35 ? DiskKind::kSpinning : DiskKind::kSsd;
    h.bimodal = i % 29 == 13;
    h.pauses = i % 97 == 31;
    h.slow = (i % 17) == 5;  // hosts 006, 023, 040, ...: a few clearly slower than the rest
    if (h.slow) {
      constexpr SlowKind kKinds[] = {SlowKind::kSlowTail, SlowKind::kShiftedMode,
                                     SlowKind::kStalls};
      h.slow_kind = kKinds[(i / 17) % 3];
      if (h.slow_kind == SlowKind::kShiftedMode) h.disk = DiskKind::kSpinning;
    }
    h.labels = {{"disk", h.disk == DiskKind::kSsd ? "ssd" : "hdd"},
                {"role", i % 5 == 0 ? "db" : "web"},
                {"zone", kZones[i % 3]}};
    hosts_.push_back(std::move(h));
  }
  if (options_.stack_rate > 0) BuildStackCatalog();
}

const std::vector<std::string>& FleetModel::Ops() {
  static const std::vector<std::string> ops = {"read", "write"};
  return ops;
}

Batch FleetModel::HostSecond(size_t host, int64_t second) const {
  const SimulatedHost& h = hosts_[host];
  std::mt19937_64 rng(options_.seed * 0x9e3779b97f4a7c15ull ^
                      (static_cast<uint64_t>(second) << 20) ^ host);
  const bool drifting = (second % 60) < 10;
  const double load = DailyLoad(second);
  double disk_ns =
      (h.disk == DiskKind::kSsd ? 180e3 : 5e6) * (drifting ? 1.8 : 1.0) * (0.8 + 0.2 * load);
  if (h.slow_kind == SlowKind::kShiftedMode) disk_ns *= 3;
  const bool tail = h.slow_kind == SlowKind::kSlowTail;
  const double outlier_share = tail ? 0.015 : 0.001;
  // Added to a disk I/O: a stall second (every 20 s) delays all of them, a pause (2 s of every
  // 30) a third of the events.
  const bool stalled = h.slow_kind == SlowKind::kStalls && second % 20 == 7;
  const bool paused = h.pauses && second % 30 < 2;

  Batch b;
  b.host = h.name;
  b.labels = h.labels;
  SecondDelta sd;
  sd.time = second;
  const auto& ops = Ops();
  for (uint32_t op = 0; op < (options_.histograms ? ops.size() : 0); ++op) {
    b.series.push_back({options_.metric, MetricKind::kLatency, "ns", "op=" + ops[op]});
    // Reads are 70% of the traffic and mostly cache hits; writes go to disk more often.
    const double share = op == 0 ? 0.7 : 0.3;
    const double cache_share = op == 0 ? h.cache_hit : 0.6 * h.cache_hit;
    std::poisson_distribution<int> events(options_.events_per_second * share * load);
    std::lognormal_distribution<double> cache(std::log(op == 0 ? 40e3 : 120e3), 0.35);
    std::lognormal_distribution<double> disk(std::log(disk_ns),
                                             h.disk == DiskKind::kSsd ? 0.4 : 0.45);
    std::lognormal_distribution<double> outlier(std::log(tail ? 60e6 : 250e6), tail ? 0.9 : 0.5);
    std::uniform_real_distribution<double> pick(0, 1);
    Histogram hist;
    for (int n = events(rng); n > 0; --n) {
      const double p = pick(rng);
      double v;
      if (p < outlier_share) {
        v = outlier(rng);
      } else if (p < cache_share) {
        v = cache(rng);
      } else {
        v = disk(rng);
        if (h.bimodal && pick(rng) < 0.5) v *= 3.5;
        if (stalled) v += 80e6;
      }
      if (paused && pick(rng) < 1.0 / 3) v += 40e6;
      hist.Record(static_cast<uint64_t>(v));
    }
    if (!hist.empty()) sd.histograms.push_back({op, hist.Encode()});
  }
  if (options_.stack_rate > 0) AddStacks(host, second, rng, &b, &sd);
  b.seconds.push_back(std::move(sd));
  return b;
}

}  // namespace trailmap
