// spool_bench: figures for the agent spool (docs/BENCHMARKS.md, "Agent spool"). Not a Google
// Benchmark: it works on real directories and a real aggregator.
//
//   spool_bench fill   --from SPOOL --to DIR --batches N   N batches copied, in a cycle, from a
//                                                          real agent's spool into a fresh one
//   spool_bench replay --dir DIR --endpoint tcp://H:P      a shipper drains DIR: batches/s
//   spool_bench fsync  --dir DIR --batches N --bytes B     append cost of each fsync policy
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "core/log.h"
#include "ingest/shipper.h"
#include "ingest/spool.h"

namespace trailmap {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::unique_ptr<Spool> OpenOrDie(SpoolOptions options) {
  Result<std::unique_ptr<Spool>> spool = Spool::Open(std::move(options), "bench-host");
  if (!spool.ok()) {
    std::fprintf(stderr, "spool_bench: %s\n", spool.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(*spool);
}

int Fill(const std::string& from, const std::string& to, uint64_t batches) {
  std::unique_ptr<Spool> source = OpenOrDie({.dir = from});
  std::vector<std::string> real;
  for (const SpooledBatch& b : source->Owed()) {
    if (Result<std::string> bytes = source->Read(b.sequence); bytes.ok()) real.push_back(*bytes);
  }
  if (real.empty()) {
    std::fprintf(stderr, "spool_bench: %s holds no batches\n", from.c_str());
    return 1;
  }
  std::filesystem::remove_all(to);
  std::unique_ptr<Spool> spool = OpenOrDie({.dir = to, .max_bytes = uint64_t{8} << 30});
  const Clock::time_point start = Clock::now();
  uint64_t bytes = 0;
  std::vector<uint64_t> dropped;
  for (uint64_t i = 0; i < batches; ++i) {
    const std::string& b = real[i % real.size()];
    bytes += b.size();
    if (Status s = spool->Append(spool->next_sequence(), 0, 0, 0, b, &dropped); !s.ok()) {
      std::fprintf(stderr, "spool_bench: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  std::printf(
      "fill: %llu batches (%zu distinct from %s), %.1f MB of batches, spool %.1f MB, "
      "%.2f s\n",
      static_cast<unsigned long long>(batches), real.size(), from.c_str(), bytes / 1e6,
      spool->counters().bytes / 1e6, SecondsSince(start));
  return 0;
}

int Replay(const std::string& dir, const std::string& endpoint) {
  std::unique_ptr<Spool> spool = OpenOrDie({.dir = dir, .max_bytes = uint64_t{8} << 30});
  const uint64_t batches = spool->counters().batches, bytes = spool->counters().bytes;
  ShipperOptions options;
  options.endpoint = endpoint;
  const Clock::time_point start = Clock::now();
  Shipper shipper(options, std::move(spool));
  const Status flushed = shipper.Flush(std::chrono::hours(2));
  const double seconds = SecondsSince(start);
  const ShipperCounters c = shipper.counters();
  std::printf(
      "replay: %llu batches (%.1f MB spooled) to %s in %.2f s: %.0f batches/s, %.1f MB/s; "
      "acked %llu, duplicates %llu, resent %llu; %s\n",
      static_cast<unsigned long long>(batches), bytes / 1e6, endpoint.c_str(), seconds,
      batches / seconds, bytes / 1e6 / seconds, static_cast<unsigned long long>(c.acked),
      static_cast<unsigned long long>(c.duplicates), static_cast<unsigned long long>(c.resent),
      flushed.ok() ? "ok" : flushed.ToString().c_str());
  return flushed.ok() ? 0 : 1;
}

int Fsync(const std::string& dir, uint64_t batches, uint64_t size) {
  const std::string batch(size, 'b');
  for (SpoolFsync policy : {SpoolFsync::kAlways, SpoolFsync::kInterval, SpoolFsync::kNever}) {
    std::filesystem::remove_all(dir);
    std::unique_ptr<Spool> spool = OpenOrDie({.dir = dir, .fsync = policy});
    std::vector<uint64_t> dropped;
    const Clock::time_point start = Clock::now();
    for (uint64_t i = 1; i <= batches; ++i) {
      if (Status s = spool->Append(i, 0, 0, 0, batch, &dropped); !s.ok()) {
        std::fprintf(stderr, "spool_bench: %s\n", s.ToString().c_str());
        return 1;
      }
      spool->Done(i);
    }
    const double seconds = SecondsSince(start);
    std::printf("fsync %-8s %llu appends+dones of %llu B: %.1f us each, %llu fsyncs\n",
                SpoolFsyncName(policy), static_cast<unsigned long long>(batches),
                static_cast<unsigned long long>(size), seconds * 1e6 / batches,
                static_cast<unsigned long long>(spool->counters().fsyncs));
  }
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace trailmap

int main(int argc, char** argv) {
  trailmap::SetLogProgram("spool_bench");
  CLI::App app{"spool_bench: figures for the agent spool"};
  app.require_subcommand(1);
  std::string from, to, dir, endpoint;
  uint64_t batches = 14'400, bytes = 4096;
  CLI::App* fill = app.add_subcommand("fill", "copy a real spool's batches into a fresh one");
  fill->add_option("--from", from)->required();
  fill->add_option("--to", to)->required();
  fill->add_option("--batches", batches, "default 14400: an hour at flush_ms 250");
  CLI::App* replay = app.add_subcommand("replay", "drain a spool into an aggregator");
  replay->add_option("--dir", dir)->required();
  replay->add_option("--endpoint", endpoint)->required();
  CLI::App* fsync = app.add_subcommand("fsync", "append cost of each fsync policy");
  fsync->add_option("--dir", dir)->required();
  fsync->add_option("--batches", batches);
  fsync->add_option("--bytes", bytes);
  CLI11_PARSE(app, argc, argv);
  if (fill->parsed()) return trailmap::Fill(from, to, batches);
  if (replay->parsed()) return trailmap::Replay(dir, endpoint);
  return trailmap::Fsync(dir, batches, bytes);
}
