// trailmap-loadgen: a simulated fleet speaking trailmap's real ingest protocol.
//
// Three jobs, one program:
//   --realtime (default)  send the fleet model's seconds as they pass (the demo, docker-compose);
//   --backfill 10m        first send that much history, as fast as the aggregators ack it;
//   --bench               measure ingest: M hosts x S series, T seconds of data, as fast as acks
//                         allow; prints acknowledged histogram-seconds per second.
//   --wire-bytes          print the bytes one host-second of stacks costs on the wire, the first
//                         batch of a connection (with every definition) and in steady state.
// --stacks-rate N adds N CPU stack samples per host-second (bench/fleet_model.h).
// With --statsd it also sends statsd timings to agents, as applications would.
#include <arpa/inet.h>
#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <set>
#include <thread>

#include "bench/fleet_model.h"
#include "bench/fleet_scalars.h"
#include "core/batch_split.h"
#include "core/histogram.h"
#include "core/log.h"
#include "ingest/replicated_shipper.h"
#include "net/cluster_file.h"
#include "net/curve_keys.h"
#include "net/endpoint.h"

namespace trailmap {
namespace {

std::atomic<bool> g_stop{false};

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Seconds with a unit suffix: 90, 90s, 10m, 2h.
int64_t ParseSeconds(const std::string& s) {
  if (s.empty()) return 0;
  const char unit = s.back();
  const int64_t n = std::stoll(s);
  return unit == 'm' ? n * 60 : unit == 'h' ? n * 3600 : n;
}

// One shipper per aggregator (in memory, one agent id each); every batch of a host goes to each
// of its owners (ingest/replicated_shipper.h).
class ShardedShippers {
 public:
  ShardedShippers(const Cluster& cluster, const std::string& id, uint64_t max_bytes,
                  const CurveClient& curve)
      : shippers_(cluster,
                  [id, max_bytes,
                   curve](const ClusterMember& member) -> Result<std::unique_ptr<Shipper>> {
                    ShipperOptions o;
                    o.endpoint = member.ingest;
                    o.curve = MemberCurve(curve, member);  // its own server key, if any
                    if (member.name != member.ingest) o.name = member.name;
                    o.agent_id = NewAgentId(id);
                    o.max_bytes = max_bytes;
                    o.window = 256;
                    return std::make_unique<Shipper>(std::move(o));
                  }) {}
  // Cut to the aggregator's limits (core/batch_split.h) like every producer; false if any part
  // was dropped.
  bool Send(Batch b) {
    bool all = true;
    for (Batch& part : SplitBatch(std::move(b))) all = shippers_.Send(std::move(part)) && all;
    return all;
  }
  Status Flush(std::chrono::milliseconds timeout) { return shippers_.Flush(timeout); }
  ShipperCounters Totals() const { return shippers_.TotalCounters(); }

 private:
  ReplicatedShipper shippers_;
};

// Statsd timings to agents, the way an application would send them.
class StatsdSender {
 public:
  explicit StatsdSender(const std::vector<std::string>& targets)
      : fd_(socket(AF_INET, SOCK_DGRAM, 0)) {
    for (const auto& t : targets) {
      const size_t colon = t.rfind(':');
      addrinfo hints{}, *res = nullptr;
      hints.ai_family = AF_INET;
      hints.ai_socktype = SOCK_DGRAM;
      if (colon == std::string::npos ||
          getaddrinfo(t.substr(0, colon).c_str(), t.substr(colon + 1).c_str(), &hints, &res) != 0) {
        Log("statsd target '" + t + "' is not HOST:PORT that resolves; skipped");
        continue;
      }
      sockaddr_in addr;
      std::memcpy(&addr, res->ai_addr, sizeof addr);
      freeaddrinfo(res);
      targets_.push_back(addr);
    }
  }
  ~StatsdSender() { close(fd_); }
  void SendSecond(std::mt19937_64& rng) {
    static const char* kUrls[] = {"/api", "/login", "/static"};
    std::lognormal_distribution<double> fast(std::log(8.0), 0.4), slow(std::log(120.0), 0.5);
    std::uniform_real_distribution<double> pick(0, 1);
    for (const auto& addr : targets_) {
      std::string packet;
      for (int i = 0; i < 20; ++i) {
        const int url = static_cast<int>(pick(rng) * 3);
        const double ms = url == 1 ? slow(rng) : fast(rng);
        packet += fmt::format("http.server.latency:{:.3f}|ms|#url:{}\n", ms, kUrls[url]);
      }
      sendto(fd_, packet.data(), packet.size(), 0, reinterpret_cast<const sockaddr*>(&addr),
             sizeof addr);
    }
  }

 private:
  int fd_;
  std::vector<sockaddr_in> targets_;
};

// --bench: hosts x series histograms per second from a pool of realistic encoded histograms, so
// the generator costs little next to the aggregator it measures.
int RunBench(ShardedShippers& shippers, size_t hosts, size_t series, int64_t seconds) {
  FleetModel model({.hosts = 64, .events_per_second = 400});
  std::vector<std::string> pool;
  for (size_t i = 0; i < 64; ++i)
    pool.push_back(model.HostSecond(i, 1000).seconds[0].histograms[0].encoded);
  const int64_t start_second = NowSeconds() - seconds - 60;
  size_t histograms = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t s = 0; s < seconds && !g_stop; ++s) {
    for (size_t h = 0; h < hosts; ++h) {
      Batch b;
      b.host = fmt::format("bench-{:05d}", h);
      SecondDelta sd;
      sd.time = start_second + s;
      for (uint32_t k = 0; k < series; ++k) {
        b.series.push_back(
            {"bench.latency", MetricKind::kLatency, "ns", fmt::format("op=op{}", k)});
        sd.histograms.push_back({k, pool[(h * 31 + k * 7 + static_cast<size_t>(s)) % pool.size()]});
      }
      histograms += series;
      b.seconds.push_back(std::move(sd));
      while (!shippers.Send(std::move(b))) {
        Log("bench: a batch did not fit the shippers' spool; increase --max-bytes");
        return 1;
      }
    }
    if (Status st = shippers.Flush(std::chrono::seconds(60)); !st.ok()) {
      Log("bench: " + st.ToString());
      return 1;
    }
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const ShipperCounters c = shippers.Totals();
  fmt::print(
      "bench: {} hosts x {} series x {} s = {} histogram-seconds in {:.2f} s: {:.0f} acknowledged "
      "histogram-seconds/s ({} batches, {} rejected, {} resent, {} retried later)\n",
      hosts, series, seconds, histograms, elapsed, static_cast<double>(histograms) / elapsed,
      c.acked, c.rejected, c.resent, c.retry_later);
  return c.rejected == 0 ? 0 : 1;
}

// --wire-bytes: one host's seconds encoded as the shipper sends them on one connection (each
// stack and frame definition only in the first batch that uses it).
int RunWireBytes(double rate, size_t distinct, int64_t seconds) {
  FleetModel model({.hosts = 1,
                    .seed = 3,
                    .stack_rate = rate,
                    .distinct_stacks = distinct,
                    .histograms = false});
  std::set<uint32_t> sent_stacks, sent_frames;
  size_t first = 0, steady = 0, samples = 0, first_defs = 0, later_defs = 0;
  const int64_t t0 = NowSeconds() - seconds;
  for (int64_t s = 0; s < seconds; ++s) {
    Batch b = model.HostSecond(0, t0 + s);
    b.agent = "wire/1";
    b.sequence = static_cast<uint64_t>(s + 1);
    for (const StackCount& c : b.seconds[0].stacks) samples += c.count;
    std::vector<StackDef> stacks;
    std::vector<FrameDef> frames;
    for (StackDef& d : b.stacks) {
      if (sent_stacks.insert(d.id).second) stacks.push_back(std::move(d));
    }
    for (FrameDef& f : b.frames) {
      if (sent_frames.insert(f.id).second) frames.push_back(std::move(f));
    }
    (s == 0 ? first_defs : later_defs) += stacks.size();
    b.stacks = std::move(stacks);
    b.frames = std::move(frames);
    const size_t bytes = EncodeBatch(b).size();
    (s == 0 ? first : steady) += bytes;
  }
  fmt::print(
      "wire: {:.0f} stack samples/s over {} distinct stacks, {} s: first batch {} bytes ({} "
      "stack definitions), then {:.0f} bytes per host-second ({} more definitions in all, "
      "{:.1f} samples a second)\n",
      rate, distinct, seconds, first, first_defs,
      static_cast<double>(steady) / static_cast<double>(seconds - 1), later_defs,
      static_cast<double>(samples) / static_cast<double>(seconds));
  return 0;
}

int Main(int argc, char** argv) {
  SetLogProgram("trailmap-loadgen");
  CLI::App app{
      "Simulate a fleet of hosts that speak trailmap's ingest protocol.\n"
      "  trailmap-loadgen --hosts 50 --backfill 10m            # history, then live seconds\n"
      "  trailmap-loadgen --bench --hosts 5000 --series 20 --seconds 20   # ingest benchmark\n"
      "  trailmap-loadgen --cluster cluster.toml --hosts 50   # each host to its R owners"};
  std::string aggregators = "127.0.0.1:7400", cluster_path, statsd, backfill = "0", prefix = "sim-",
              metric = "disk.latency";
  size_t hosts = 50, series = 20;
  uint64_t max_bytes = uint64_t{4} << 30;
  int64_t duration = 0, bench_seconds = 20;
  double rate = 200;
  bool bench = false, realtime = false, backfill_only = false, wire_bytes = false;
  double stacks_rate = 0;
  size_t distinct_stacks = 300;
  uint64_t seed = 1;
  app.add_option("--aggregators", aggregators,
                 "Aggregator ingest endpoints, HOST:PORT[,HOST:PORT...]: the short form of a "
                 "one-zone cluster with R=1; not with --cluster");
  app.add_option("--cluster", cluster_path,
                 "Cluster file (TOML, core/cluster.h): every batch of a host goes to each of its "
                 "R owners");
  app.add_option("--hosts", hosts, "Simulated hosts")->check(CLI::Range(1, 100000));
  app.add_option("--prefix", prefix, "Host name prefix (hosts are PREFIX001, PREFIX002, ...)");
  app.add_option("--metric", metric, "Metric name of the simulated disk latency");
  app.add_option("--rate", rate, "Events per host per second")->check(CLI::Range(1.0, 1e6));
  app.add_flag("--realtime", realtime,
               "Send each second as it passes (the default unless --bench)");
  app.add_option("--backfill", backfill, "First send this much history: 90s, 10m, 1h");
  app.add_flag("--backfill-only", backfill_only, "Exit once the backfill is acknowledged");
  int64_t backfill_end = 0;
  app.add_option("--backfill-end", backfill_end,
                 "Unix second the backfill ends at (default now): the fleet model is the same for "
                 "the same seed, so two runs with one end send the same history");
  app.add_option("--duration", duration, "Stop after this many seconds (0 = until Ctrl-C)");
  app.add_option("--statsd", statsd, "Also send statsd timings to these agents, HOST:PORT[,...]");
  std::string key_path, server_key_path;
  bool insecure_plaintext = false;
  app.add_option("--key", key_path, "its CURVE key, NAME.key (default $TRAILMAP_KEY)");
  app.add_option("--server-key", server_key_path,
                 "the aggregators' public key, their .pub (default $TRAILMAP_SERVER_KEY)");
  app.add_flag("--insecure-plaintext", insecure_plaintext,
               "send without encryption or authentication (lab only)");
  app.add_flag("--bench", bench, "Measure acknowledged ingest throughput and exit");
  app.add_option("--series", series, "--bench: series (field sets) per host")
      ->check(CLI::Range(1, 1000));
  app.add_option("--seconds", bench_seconds, "--bench: seconds of data per host");
  app.add_option(
      "--max-bytes", max_bytes,
      "Encoded batches the shippers may hold in memory (beyond, the oldest are dropped)");
  app.add_option("--seed", seed, "Random seed of the fleet model");
  app.add_option("--stacks-rate", stacks_rate,
                 "Also send this many CPU stack samples per host per second (cpu.stacks; 0 = none)")
      ->check(CLI::Range(0.0, 1e5));
  app.add_option("--distinct-stacks", distinct_stacks, "Stacks in the fleet's stack catalog")
      ->check(CLI::Range(1, 100000));
  app.add_flag("--wire-bytes", wire_bytes,
               "Print the wire bytes of one host's stacks per second (first batch, steady state) "
               "for --stacks-rate (default 200) and --distinct-stacks, --seconds long, and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (wire_bytes) {
    return RunWireBytes(stacks_rate > 0 ? stacks_rate : 200, distinct_stacks,
                        std::max<int64_t>(2, bench_seconds));
  }
  signal(SIGINT, [](int) { g_stop = true; });
  signal(SIGTERM, [](int) { g_stop = true; });

  if (app.count("--aggregators") && app.count("--cluster")) {
    Log("give --cluster FILE or --aggregators LIST, not both (--aggregators is the short form of "
        "a one-zone cluster with R=1)");
    return 2;
  }
  Result<Cluster> cluster = cluster_path.empty() ? ClusterFromList(aggregators, kDefaultIngestPort)
                                                 : LoadCluster(cluster_path);
  if (!cluster.ok()) {
    Log((cluster_path.empty() ? "--aggregators: " : "--cluster: ") + cluster.status().message());
    return 2;
  }
  ClientKeyPathsFromEnvironment(insecure_plaintext, &key_path, &server_key_path);
  Result<CurveClient> curve = ResolveCurveClient(key_path, server_key_path, insecure_plaintext);
  if (curve.ok() && !curve->Usable().ok()) curve = curve->Usable();
  if (!curve.ok()) {
    Log(curve.status().message());
    return 2;
  }
  if (curve->plaintext) Log(kPlaintextWarning);
  char self[256] = "loadgen";
  gethostname(self, sizeof self);
  ShardedShippers shippers(*cluster, std::string("loadgen@") + self, max_bytes, *curve);
  if (bench) return RunBench(shippers, hosts, series, bench_seconds);

  FleetModel model({.hosts = hosts,
                    .prefix = prefix,
                    .metric = metric,
                    .events_per_second = rate,
                    .seed = seed,
                    .stack_rate = stacks_rate,
                    .distinct_stacks = distinct_stacks});
  const int64_t now = backfill_end > 0 ? backfill_end : NowSeconds();
  if (const int64_t back = ParseSeconds(backfill); back > 0) {
    Log(fmt::format("backfilling {} s of {} hosts", back, hosts));
    for (int64_t s = now - back; s < now && !g_stop; ++s) {
      for (size_t h = 0; h < hosts; ++h)
        shippers.Send(WithFleetScalars(model.HostSecond(h, s), h, s));
      if ((s - now + back) % 60 == 59) {
        if (Status st = shippers.Flush(std::chrono::seconds(30)); !st.ok())
          Log("backfill: " + st.ToString());
      }
    }
    if (Status st = shippers.Flush(std::chrono::seconds(30)); !st.ok())
      Log("backfill: " + st.ToString());
    Log("backfill done");
    if (backfill_only) return shippers.Totals().rejected == 0 ? 0 : 1;
  }

  StatsdSender statsd_sender(SplitList(statsd));
  std::mt19937_64 rng(seed);
  const int64_t stop_at = duration > 0 ? NowSeconds() + duration : INT64_MAX;
  int64_t next = now;
  while (!g_stop && NowSeconds() < stop_at) {
    const int64_t current = NowSeconds();
    if (current < next) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    // Seconds [next, current) have passed: send them (usually exactly one).
    for (; next < current; ++next) {
      for (size_t h = 0; h < hosts; ++h)
        shippers.Send(WithFleetScalars(model.HostSecond(h, next), h, next));
      statsd_sender.SendSecond(rng);
    }
  }
  const Status st = shippers.Flush(std::chrono::seconds(5));
  const ShipperCounters c = shippers.Totals();
  Log(fmt::format("stopped: {} batches sent, {} acknowledged, {} rejected, {} dropped{}", c.sent,
                  c.acked, c.rejected, c.dropped, st.ok() ? "" : "; " + st.ToString()));
  return st.ok() && c.rejected == 0 ? 0 : 1;
}

}  // namespace
}  // namespace trailmap

int main(int argc, char** argv) { return trailmap::Main(argc, argv); }
