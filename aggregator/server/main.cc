// trailmap-aggregator: stores per-second histograms from agents in RocksDB and answers queries
// with partial aggregates. main() builds the store, the ZeroMQ context and the two servers, then
// waits for SIGINT or SIGTERM and takes them down in reverse order (SIGHUP: read the clients file
// and the cluster file again, core/cluster.h ReloadCluster).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "aggregator/server/aggregator_config.h"
#include "aggregator/server/ingest_server.h"
#include "aggregator/server/query_server.h"
#include "aggregator/server/self_metrics.h"
#include "aggregator/store/store.h"
#include "aggregator/server/zap_handler.h"
#include "core/clock.h"
#include "core/cluster.h"
#include "core/curve_keys.h"
#include "core/endpoint.h"
#include "core/huge_heap.h"
#include "core/log.h"
#include "core/metrics_http.h"
#include "core/open_files.h"
#include "core/units.h"

namespace trailmap::aggregator {
namespace {

constexpr int kUsageError = 2;

int Usage(const std::string& message) {
  std::fprintf(stderr, "trailmap-aggregator: %s\n(see trailmap-aggregator --help)\n",
               message.c_str());
  return kUsageError;
}

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

int Run(int argc, char** argv) {
  CLI::App app(
      "trailmap-aggregator: receives per-second latency histograms from trailmap agents over "
      "ZeroMQ, stores them in RocksDB (exactly once, acknowledged after the write) and answers "
      "trailmap queries with partial aggregates.");
  app.footer(
      "Every histogram is kept at 1 s, 10 s, 60 s and 600 s resolution (hist, hist_10s, hist_60s,\n"
      "hist_600s); a\n"
      "query reads the coarsest that gives it its columns exactly, and each resolution is\n"
      "dropped after its own retention as RocksDB compacts.\n"
      "Example:\n"
      "  trailmap keygen agg   # once per cluster: agg.key (secret) and agg.pub (to clients)\n"
      "  trailmap-aggregator --data /var/lib/trailmap --ingest 0.0.0.0:7400 --query 0.0.0.0:7401 "
      "\\\n"
      "      --key agg.key --clients clients.txt\n"
      "  trailmap-aggregator --config configs/aggregator.toml --name agg-2\n"
      "  trailmap-aggregator --data /tmp/lab --insecure-plaintext   # no keys: a lab only\n"
      "Flags override the config file. Stop with SIGINT or SIGTERM; SIGHUP reads the clients\n"
      "file (and the cluster file) again.\n"
      "Exit status: 0 after a clean shutdown, 2 on a bad flag or config, 1 on any other error.");
  std::string config_path, cluster_path, data, ingest, query, name, host, metrics;
  bool no_self_metrics = false;
  app.add_option("--config", config_path, "TOML config file (example: configs/aggregator.toml)")
      ->type_name("FILE");
  app.add_option("--cluster", cluster_path,
                 "cluster file (core/cluster.h): this aggregator's ingest and query endpoints are "
                 "those of its [[aggregator]] entry, found by --name")
      ->type_name("FILE");
  app.add_option("--data", data,
                 "RocksDB directory, created if missing (required unless in the config)")
      ->type_name("DIR");
  app.add_option("--ingest", ingest,
                 "where agents send batches, HOST:PORT or tcp://HOST:PORT [127.0.0.1:7400]")
      ->type_name("HOST:PORT");
  app.add_option("--query", query,
                 "where queries arrive, HOST:PORT or tcp://HOST:PORT [127.0.0.1:7401]")
      ->type_name("HOST:PORT");
  app.add_option("--name", name, "this shard's name in answers [<hostname>:<ingest port>]")
      ->type_name("NAME");
  app.add_option("--host", host,
                 "the host its own metrics (trailmap.aggregator.*) belong to [<hostname>]")
      ->type_name("NAME");
  size_t query_workers = 0;
  app.add_option("--query-workers", query_workers,
                 "threads answering queries, so a slow query holds up neither another query nor "
                 "ingest [4]")
      ->check(CLI::Range(1, 256))
      ->type_name("N");
  std::string query_deadline;
  app.add_option("--query-deadline", query_deadline,
                 "the longest any query may run: past it its scan stops and its answer says so; a "
                 "client may ask for less (trailmap --timeout) [30s]. The other limits of one "
                 "query are in the config's [queries]: max_keys, max_groups, max_cells, "
                 "max_answer_bytes")
      ->type_name("DURATION");
  std::string key_path, clients_path;
  bool insecure_plaintext = false;
  app.add_option("--key", key_path,
                 "its CURVE key pair, NAME.key from `trailmap keygen NAME` (the aggregators of a "
                 "cluster share one; clients get its .pub) [$TRAILMAP_KEY]")
      ->type_name("FILE");
  app.add_option("--clients", clients_path,
                 "the client keys it accepts, one a line: NAME PUBLIC-KEY RIGHTS [HOSTS...] "
                 "(trailmap keygen --help) [$TRAILMAP_CLIENTS]")
      ->type_name("FILE");
  app.add_flag("--insecure-plaintext", insecure_plaintext,
               "no encryption, no authentication: anyone who reaches its ports may write any "
               "host and read everything (a lab only; logs a warning)");
  std::string aggregate_by;
  app.add_option("--aggregate-by", aggregate_by,
                 "fields whose values get a fleet histogram per second at ingest besides the "
                 "whole fleet's, so a heat map by one of them reads one key per value and second "
                 "instead of every host: role,zone,op")
      ->type_name("FIELD,...");
  bool no_aggregates = false;
  app.add_flag("--no-aggregates", no_aggregates,
               "write no fleet pre-aggregates (aggregator/store/aggregates.h): every heat map then reads "
               "every host; for measuring what they cost (config: aggregates = false)");
  bool no_backfill = false;
  app.add_flag("--no-backfill", no_backfill,
               "do not backfill pre-aggregates configured on a store that already holds data "
               "(they are written from the start on, and the store reads them only once what it "
               "held before is backfilled in the background: aggregator/store/aggregates_backfill.h; "
               "config: backfill = false)");
  app.add_flag("--no-self-metrics", no_self_metrics,
               "do not publish its own counters every second (trailmap.aggregator.*: ingest, "
               "query latency, RocksDB compaction and memory, RSS, fds, CPU)");
  app.add_option("--metrics", metrics,
                 "serve its self-metrics for Prometheus at http://HOST:PORT/metrics (text format "
                 "0.0.4; query latencies as histograms), or off [off]")
      ->type_name("HOST:PORT");
  // One flag per histogram family: --retain-1s, --retain-10s, --retain-60s, --retain-600s.
  std::array<std::string, kHistogramResolutionCount> retain;
  for (size_t i = 0; i < kHistogramResolutionCount; ++i) {
    const std::string seconds = std::to_string(kHistogramResolutions[i].seconds);
    app.add_option("--retain-" + seconds + "s", retain[i],
                   "keep the " + seconds + " s histograms (" + kHistogramResolutions[i].family +
                       ") this long, e.g. 36h, 14d, or forever [" +
                       FormatRetention(kDefaultRetention[i]) + "]")
        ->type_name("DURATION");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return Usage(e.what());
  }

  AggregatorConfig config;
  if (!config_path.empty()) {
    if (Status s = LoadAggregatorConfig(config_path, &config); !s.ok()) return Usage(s.message());
  }
  if (!data.empty()) config.data_dir = data;
  if (!name.empty()) config.name = name;
  if (!host.empty()) config.host = host;
  if (no_self_metrics) config.self_metrics = false;
  if (app.count("--metrics")) config.metrics = metrics;
  if (query_workers > 0) config.query_workers = query_workers;
  if (!query_deadline.empty()) {
    Result<uint64_t> ns = ParseDuration(query_deadline);
    if (!ns.ok() || *ns < 1'000'000) {
      return Usage("--query-deadline " + query_deadline + ": give a duration such as 30s or 500ms");
    }
    config.query_limits.deadline_ms = *ns / 1'000'000;
  }
  if (no_aggregates) config.store.aggregates.enabled = false;
  if (no_backfill) config.store.aggregates.backfill = false;
  if (app.count("--aggregate-by")) {
    if (Status s = ParseAggregateBy(aggregate_by, &config.store.aggregates.fields); !s.ok()) {
      return Usage("--aggregate-by: " + s.message());
    }
  }
  if (!cluster_path.empty()) {
    Result<Cluster> cluster = LoadCluster(cluster_path);
    if (!cluster.ok()) return Usage("--cluster: " + cluster.status().message());
    if (config.name.empty()) {
      return Usage("--cluster needs --name (or name in the config): which [[aggregator]] of " +
                   cluster_path + " this is");
    }
    const ClusterMember* me = cluster->Find(config.name);
    if (me == nullptr) {
      std::string names;
      for (const ClusterMember& m : cluster->members) names += (names.empty() ? "" : ", ") + m.name;
      return Usage("--cluster " + cluster_path + ": no [[aggregator]] named \"" + config.name +
                   "\" (it lists " + names + ")");
    }
    config.ingest_endpoint = me->ingest;  // --ingest and --query below still override
    config.query_endpoint = me->query;
    config.store.aggregates.cluster = std::move(cluster).value();  // owner groups (aggregates.h)
  }
  for (auto [flag, text, out] : {std::tuple{"--ingest", &ingest, &config.ingest_endpoint},
                                 std::tuple{"--query", &query, &config.query_endpoint}}) {
    if (text->empty()) continue;
    Result<std::string> e = NormalizeEndpoint(*text);
    if (!e.ok()) return Usage(std::string(flag) + ": " + e.status().message());
    *out = *e;
  }
  for (size_t i = 0; i < kHistogramResolutionCount; ++i) {
    if (retain[i].empty()) continue;
    Result<int64_t> seconds = ParseRetention(retain[i]);
    if (!seconds.ok()) {
      return Usage("--retain-" + std::to_string(kHistogramResolutions[i].seconds) +
                   "s: " + seconds.status().message());
    }
    config.store.retention_seconds[i] = *seconds;
  }
  if (Status s = ValidateAggregatorConfig(config); !s.ok()) return Usage(s.message());
  if (!key_path.empty()) config.key = key_path;
  if (!clients_path.empty()) config.clients = clients_path;
  if (insecure_plaintext) config.insecure_plaintext = true;
  if (!config.insecure_plaintext) {
    if (const char* e = std::getenv("TRAILMAP_KEY"); e != nullptr && config.key.empty()) {
      config.key = e;
    }
    if (const char* e = std::getenv("TRAILMAP_CLIENTS"); e != nullptr && config.clients.empty()) {
      config.clients = e;
    }
  }
  CurveKeyFile server_key;
  std::vector<ClientKey> clients;
  if (config.insecure_plaintext) {
    if (!config.key.empty() || !config.clients.empty()) {
      return Usage(
          "--insecure-plaintext together with --key/--clients (or key/clients in the "
          "config): choose one");
    }
  } else {
    if (config.key.empty() || config.clients.empty()) {
      return Usage(
          "no CURVE keys: give --key FILE (its key pair: trailmap keygen agg) and --clients FILE "
          "(the client keys it accepts, one a line: NAME PUBLIC-KEY RIGHTS [HOSTS...]), or "
          "--insecure-plaintext on a lab network");
    }
    Result<CurveKeyFile> key = LoadCurveKeyFile(config.key, /*need_secret=*/true);
    if (!key.ok()) return Usage("--key: " + key.status().message());
    server_key = std::move(key).value();
    // The pair's public half, from its secret: what clients must be given for this aggregator.
    char derived[kZ85KeyLength + 1] = {};
    if (zmq_curve_public(derived, server_key.secret_key.c_str()) != 0 ||
        server_key.public_key != derived) {
      return Usage("--key: " + config.key +
                   ": its public-key is not the public half of its "
                   "secret-key (make a new pair: trailmap keygen)");
    }
    const ClusterMember* me = config.store.aggregates.cluster
                                  ? config.store.aggregates.cluster->Find(config.name)
                                  : nullptr;
    if (me != nullptr && !me->server_key.empty() && me->server_key != server_key.public_key) {
      return Usage("--cluster " + cluster_path + ": [[aggregator]] \"" + me->name +
                   "\" names server key " + me->server_key + ", but --key " + config.key +
                   " holds the pair of " + server_key.public_key +
                   ": give this aggregator the key pair its entry names, or put its .pub in the "
                   "entry (server_key_file)");
    }
    Result<std::vector<ClientKey>> list = LoadClientKeys(config.clients);
    if (!list.ok()) return Usage("--clients: " + list.status().message());
    clients = std::move(list).value();
  }
  if (config.name.empty()) config.name = DefaultName(Hostname(), config.ingest_endpoint);
  if (config.host.empty()) config.host = Hostname();

  // Signals are taken by sigwait below, so every thread started from here on blocks them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);  // read the clients and cluster files again
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // RocksDB keeps every table file open: the descriptors follow the store's live files.
  if (const uint64_t files = RaiseOpenFileLimit(); files > 0 && files < 4096) {
    Log("warning: at most " + std::to_string(files) + " open files (RLIMIT_NOFILE, hard limit): "
        "RocksDB keeps every table file of the store open, about one per 64 MB; raise the limit "
        "(systemd LimitNOFILE=, ulimit -Hn) for a store of more than a few tens of GB");
  }
  Result<std::unique_ptr<Store>> store = Store::Open(config.data_dir, config.store);
  if (!store.ok()) {
    Log("cannot open the store: " + store.status().ToString());
    return 1;
  }
  zmq::context_t context(1);
  // Bound before the servers: libzmq admits every CURVE client of a context without one.
  std::unique_ptr<ZapHandler> zap;
  if (!config.insecure_plaintext) {
    zap = std::make_unique<ZapHandler>(&context, clients,
                                       ZapOptions{.max_connections = config.max_connections});
    if (Status s = zap->Start(); !s.ok()) {
      Log(s.ToString());
      return 1;
    }
  } else {
    Log(kPlaintextWarning);
  }
  IngestServerOptions ingest_options;
  ingest_options.endpoint = config.ingest_endpoint;
  ingest_options.limits = config.limits;
  ingest_options.agent_limits = config.agent_limits;
  ingest_options.max_pending_bytes = config.max_pending_bytes;
  ingest_options.metric_quota.new_metrics_per_day = static_cast<double>(config.new_metrics_per_key);
  ingest_options.curve_secret_key = server_key.secret_key;
  ingest_options.access = zap.get();
  ingest_options.handshake_timeout = config.handshake_timeout;
  IngestServer ingest_server(&context, store->get(), ingest_options);
  // Per second for the self-metrics, running totals for --metrics; neither: not recorded.
  const bool prometheus = config.metrics != "off";
  QueryLatencies latencies({}, /*by_second=*/config.self_metrics);
  QueryServerOptions query_options{config.query_endpoint, config.name,
                                   config.self_metrics || prometheus ? &latencies : nullptr,
                                   config.query_workers, config.query_limits};
  query_options.curve_secret_key = server_key.secret_key;
  query_options.access = zap.get();
  query_options.handshake_timeout = config.handshake_timeout;
  query_options.add_status = [&ingest_server, &zap](ShardStatus* status) {
    status->refused_batches = ingest_server.counters().refused_by_key;
    status->refused_connections = zap ? zap->counters().refused : 0;
    if (zap) {
      status->refused_at_cap = zap->counters().refused_at_cap;
      status->ingest_connections = zap->connections("ingest");
      status->query_connections = zap->connections("query");
      status->max_connections = zap->max_connections();
    }
    const IngestCounters ingest = ingest_server.counters();
    status->rate_limited = ingest.rate_limited;
    status->busy = ingest.busy;
    for (const auto& [agent, refusals] : ingest_server.TopRateLimited(kMaxLimitedAgents)) {
      const auto most = std::max_element(refusals.by_limit.begin(), refusals.by_limit.end());
      status->limited_agents.push_back(
          {agent, refusals.total(),
           AgentLimitName(static_cast<AgentLimit>(most - refusals.by_limit.begin()))});
    }
  };
  QueryServer query_server(&context, store->get(), std::move(query_options));
  if (Status s = ingest_server.Start(); !s.ok()) {
    Log(s.ToString());
    return 1;
  }
  if (Status s = query_server.Start(); !s.ok()) {
    Log(s.ToString());
    return 1;
  }
  std::unique_ptr<AggregatorSelfMetrics> self_metrics;
  if (config.self_metrics) {
    self_metrics = std::make_unique<AggregatorSelfMetrics>(
        AggregatorParts{store->get(), &ingest_server, &query_server, &latencies, zap.get()},
        AggregatorSelfMetricsOptions{.host = config.host, .shard = config.name});
    self_metrics->Start();
  }
  // The self-metrics for a Prometheus scrape: read afresh at each request, on its own thread.
  std::unique_ptr<MetricsHttpServer> metrics_http;
  if (prometheus) {
    Result<HostPort> where = ParseHostPort(config.metrics);  // validated already
    const AggregatorParts parts{store->get(), &ingest_server, &query_server, &latencies, zap.get()};
    Result<std::unique_ptr<MetricsHttpServer>> started = MetricsHttpServer::StartText(
        MetricsHttpOptions{where->host, where->port, "trailmap-aggregator"},
        [parts, shard = config.name] { return AggregatorPrometheusText(parts, shard); });
    if (!started.ok()) {
      Log(started.status().ToString());
      return started.status().code() == Status::Code::kInvalidArgument ? kUsageError : 1;
    }
    metrics_http = std::move(*started);
  }
  Log("started " + config.name + ": ingest " + ingest_server.endpoint() + ", query " +
      query_server.endpoint() + ", data " + config.data_dir + ", self-metrics " +
      (self_metrics ? "as host " + config.host : std::string("off")) + ", Prometheus " +
      (metrics_http ? metrics_http->url() : std::string("off")) + ", " +
      (zap ? "CURVE with " + std::to_string(clients.size()) + " client keys of " + config.clients
           : std::string("PLAINTEXT")));

  int signal = 0;
  for (;;) {
    sigwait(&signals, &signal);
    if (signal != SIGHUP) break;
    // The clients file read again: new handshakes and every request from now on follow it (a
    // removed key's connections lose their rights); a file that does not read keeps the old list.
    // An empty file is refused unless it says it means to be (ZapHandler::ReloadKeysFrom).
    if (zap) {
      Result<std::string> reloaded = zap->ReloadKeysFrom(config.clients);
      Log("SIGHUP: " + (reloaded.ok() ? *reloaded : reloaded.status().message()));
    }
    // The cluster file read again (core/cluster.h ReloadCluster): the owner groups of the
    // pre-aggregates follow an epoch an operator added; a file refused keeps the old cluster.
    if (!config.store.aggregates.cluster) {
      if (!zap) Log("SIGHUP: no cluster file to read again (started without --cluster)");
      continue;
    }
    std::optional<Cluster> next =
        ReloadClusterOnSignal(cluster_path, *config.store.aggregates.cluster, UnixSecondsNow());
    if (!next) continue;
    if (const ClusterMember* me = next->Find(config.name);
        me != nullptr && !me->server_key.empty() && zap &&
        me->server_key != server_key.public_key) {
      Log("SIGHUP: the cluster file names server key " + me->server_key + " for this aggregator (" +
          me->name + "), but it runs with " + server_key.public_key +
          ": clients that read the file fail to connect until it is restarted with that pair");
    }
    config.store.aggregates.cluster = *next;
    (*store)->SetCluster(std::move(*next));
  }
  Log(std::string("stopping on ") + (signal == SIGINT ? "SIGINT" : "SIGTERM"));
  metrics_http.reset();  // it reads the parts: stopped before any of them
  self_metrics.reset();
  ingest_server.Stop();
  query_server.Stop();
  if (zap) zap->Stop();
  const IngestCounters c = ingest_server.counters();
  const uint64_t saturated = (*store)->SaturatedMerges();
  store->reset();
  Log("stopped: " + std::to_string(c.applied) + " batches applied, " + std::to_string(c.duplicate) +
      " duplicate, " + std::to_string(c.out_of_order) + " out of order, " +
      std::to_string(c.rejected) + " rejected, " + std::to_string(c.refused_by_key) +
      " refused for their key, " + std::to_string(saturated) + " merges saturated");
  return 0;
}

}  // namespace
}  // namespace trailmap::aggregator

int main(int argc, char** argv) {
  trailmap::SetLogProgram("trailmap-aggregator");
  trailmap::KeepFreedMemory();  // each query's memory stays for the next: core/huge_heap.h
  return trailmap::aggregator::Run(argc, argv);
}
