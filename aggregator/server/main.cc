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
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "aggregator/server/aggregator_config.h"
#include "aggregator/server/ingest_server.h"
#include "aggregator/server/query_server.h"
#include "aggregator/server/self_metrics.h"
#include "aggregator/server/zap_handler.h"
#include "aggregator/store/store.h"
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

// The command line as given, before the config file and the defaults are merged in (MergeFlags).
struct Flags {
  std::string config_path, cluster_path, data, ingest, query, name, host, metrics;
  bool no_self_metrics = false;
  size_t query_workers = 0;
  std::string query_deadline;
  std::string key_path, clients_path;
  bool insecure_plaintext = false;
  std::string aggregate_by;
  bool no_aggregates = false;
  bool no_backfill = false;
  // One per histogram family: --retain-1s, --retain-10s, --retain-60s, --retain-600s.
  std::array<std::string, kHistogramResolutionCount> retain;
};

// The CLI11 app with every flag, each writing into `f`.
std::unique_ptr<CLI::App> MakeApp(Flags* f) {
  auto app = std::make_unique<CLI::App>(
      "trailmap-aggregator: receives per-second latency histograms from trailmap agents over "
      "ZeroMQ, stores them in RocksDB (exactly once, acknowledged after the write) and answers "
      "trailmap queries with partial aggregates.");
  app->footer(
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
  app->add_option("--config", f->config_path, "TOML config file (example: configs/aggregator.toml)")
      ->type_name("FILE");
  app->add_option("--cluster", f->cluster_path,
                  "cluster file (core/cluster.h): this aggregator's ingest and query endpoints are "
                  "those of its [[aggregator]] entry, found by --name")
      ->type_name("FILE");
  app->add_option("--data", f->data,
                  "RocksDB directory, created if missing (required unless in the config)")
      ->type_name("DIR");
  app->add_option("--ingest", f->ingest,
                  "where agents send batches, HOST:PORT or tcp://HOST:PORT [127.0.0.1:7400]")
      ->type_name("HOST:PORT");
  app->add_option("--query", f->query,
                  "where queries arrive, HOST:PORT or tcp://HOST:PORT [127.0.0.1:7401]")
      ->type_name("HOST:PORT");
  app->add_option("--name", f->name, "this shard's name in answers [<hostname>:<ingest port>]")
      ->type_name("NAME");
  app->add_option("--host", f->host,
                  "the host its own metrics (trailmap.aggregator.*) belong to [<hostname>]")
      ->type_name("NAME");
  app->add_option("--query-workers", f->query_workers,
                  "threads answering queries, so a slow query holds up neither another query nor "
                  "ingest [4]")
      ->check(CLI::Range(1, 256))
      ->type_name("N");
  app->add_option("--query-deadline", f->query_deadline,
                  "the longest any query may run: past it its scan stops and its answer says so; a "
                  "client may ask for less (trailmap --timeout) [30s]. The other limits of one "
                  "query are in the config's [queries]: max_keys, max_groups, max_cells, "
                  "max_answer_bytes")
      ->type_name("DURATION");
  app->add_option("--key", f->key_path,
                  "its CURVE key pair, NAME.key from `trailmap keygen NAME` (the aggregators of a "
                  "cluster share one; clients get its .pub) [$TRAILMAP_KEY]")
      ->type_name("FILE");
  app->add_option("--clients", f->clients_path,
                  "the client keys it accepts, one a line: NAME PUBLIC-KEY RIGHTS [HOSTS...] "
                  "(trailmap keygen --help) [$TRAILMAP_CLIENTS]")
      ->type_name("FILE");
  app->add_flag("--insecure-plaintext", f->insecure_plaintext,
                "no encryption, no authentication: anyone who reaches its ports may write any "
                "host and read everything (a lab only; logs a warning)");
  app->add_option("--aggregate-by", f->aggregate_by,
                  "fields whose values get a fleet histogram per second at ingest besides the "
                  "whole fleet's, so a heat map by one of them reads one key per value and second "
                  "instead of every host: role,zone,op")
      ->type_name("FIELD,...");
  app->add_flag(
      "--no-aggregates", f->no_aggregates,
      "write no fleet pre-aggregates (aggregator/store/aggregates.h): every heat map then reads "
      "every host; for measuring what they cost (config: aggregates = false)");
  app->add_flag(
      "--no-backfill", f->no_backfill,
      "do not backfill pre-aggregates configured on a store that already holds data "
      "(they are written from the start on, and the store reads them only once what it "
      "held before is backfilled in the background: aggregator/store/aggregates_backfill.h; "
      "config: backfill = false)");
  app->add_flag("--no-self-metrics", f->no_self_metrics,
                "do not publish its own counters every second (trailmap.aggregator.*: ingest, "
                "query latency, RocksDB compaction and memory, RSS, fds, CPU)");
  app->add_option("--metrics", f->metrics,
                  "serve its self-metrics for Prometheus at http://HOST:PORT/metrics (text format "
                  "0.0.4; query latencies as histograms), or off [off]")
      ->type_name("HOST:PORT");
  for (size_t i = 0; i < kHistogramResolutionCount; ++i) {
    const std::string seconds = std::to_string(kHistogramResolutions[i].seconds);
    app->add_option("--retain-" + seconds + "s", f->retain[i],
                    "keep the " + seconds + " s histograms (" + kHistogramResolutions[i].family +
                        ") this long, e.g. 36h, 14d, or forever [" +
                        FormatRetention(kDefaultRetention[i]) + "]")
        ->type_name("DURATION");
  }
  return app;
}

// The config file, then the flags over it (all but the keys: LoadKeys). The error's message is
// the usage error to print.
Status MergeFlags(const CLI::App& app, const Flags& f, AggregatorConfig* config) {
  if (!f.config_path.empty()) {
    if (Status s = LoadAggregatorConfig(f.config_path, config); !s.ok())
      return Status::InvalidArgument(s.message());
  }
  if (!f.data.empty()) config->data_dir = f.data;
  if (!f.name.empty()) config->name = f.name;
  if (!f.host.empty()) config->host = f.host;
  if (f.no_self_metrics) config->self_metrics = false;
  if (app.count("--metrics")) config->metrics = f.metrics;
  if (f.query_workers > 0) config->query_workers = f.query_workers;
  if (!f.query_deadline.empty()) {
    Result<uint64_t> ns = ParseDuration(f.query_deadline);
    if (!ns.ok() || *ns < 1'000'000) {
      return Status::InvalidArgument("--query-deadline " + f.query_deadline +
                                     ": give a duration such as 30s or 500ms");
    }
    config->query_limits.deadline_ms = *ns / 1'000'000;
  }
  if (f.no_aggregates) config->store.aggregates.enabled = false;
  if (f.no_backfill) config->store.aggregates.backfill = false;
  if (app.count("--aggregate-by")) {
    if (Status s = ParseAggregateBy(f.aggregate_by, &config->store.aggregates.fields); !s.ok()) {
      return Status::InvalidArgument("--aggregate-by: " + s.message());
    }
  }
  if (!f.cluster_path.empty()) {
    Result<Cluster> cluster = LoadCluster(f.cluster_path);
    if (!cluster.ok()) return Status::InvalidArgument("--cluster: " + cluster.status().message());
    if (config->name.empty()) {
      return Status::InvalidArgument(
          "--cluster needs --name (or name in the config): which [[aggregator]] of " +
          f.cluster_path + " this is");
    }
    const ClusterMember* me = cluster->Find(config->name);
    if (me == nullptr) {
      std::string names;
      for (const ClusterMember& m : cluster->members) names += (names.empty() ? "" : ", ") + m.name;
      return Status::InvalidArgument("--cluster " + f.cluster_path +
                                     ": no [[aggregator]] named \"" + config->name +
                                     "\" (it lists " + names + ")");
    }
    config->ingest_endpoint = me->ingest;  // --ingest and --query below still override
    config->query_endpoint = me->query;
    config->store.aggregates.cluster = std::move(cluster).value();  // owner groups (aggregates.h)
  }
  for (auto [flag, text, out] : {std::tuple{"--ingest", &f.ingest, &config->ingest_endpoint},
                                 std::tuple{"--query", &f.query, &config->query_endpoint}}) {
    if (text->empty()) continue;
    Result<std::string> e = NormalizeEndpoint(*text);
    if (!e.ok()) return Status::InvalidArgument(std::string(flag) + ": " + e.status().message());
    *out = *e;
  }
  for (size_t i = 0; i < kHistogramResolutionCount; ++i) {
    if (f.retain[i].empty()) continue;
    Result<int64_t> seconds = ParseRetention(f.retain[i]);
    if (!seconds.ok()) {
      return Status::InvalidArgument("--retain-" +
                                     std::to_string(kHistogramResolutions[i].seconds) +
                                     "s: " + seconds.status().message());
    }
    config->store.retention_seconds[i] = *seconds;
  }
  if (Status s = ValidateAggregatorConfig(*config); !s.ok())
    return Status::InvalidArgument(s.message());
  return Status::Ok();
}

// CURVE: the key pair and the client keys from the flags, the config or the environment
// ($TRAILMAP_KEY, $TRAILMAP_CLIENTS), checked against each other and the cluster file; or
// none with --insecure-plaintext. The error's message is the usage error to print.
Status LoadKeys(const Flags& f, AggregatorConfig* config, CurveKeyFile* server_key,
                std::vector<ClientKey>* clients) {
  if (!f.key_path.empty()) config->key = f.key_path;
  if (!f.clients_path.empty()) config->clients = f.clients_path;
  if (f.insecure_plaintext) config->insecure_plaintext = true;
  if (!config->insecure_plaintext) {
    if (const char* e = std::getenv("TRAILMAP_KEY"); e != nullptr && config->key.empty()) {
      config->key = e;
    }
    if (const char* e = std::getenv("TRAILMAP_CLIENTS"); e != nullptr && config->clients.empty()) {
      config->clients = e;
    }
  }
  if (config->insecure_plaintext) {
    if (!config->key.empty() || !config->clients.empty()) {
      return Status::InvalidArgument(
          "--insecure-plaintext together with --key/--clients (or key/clients in the "
          "config): choose one");
    }
  } else {
    if (config->key.empty() || config->clients.empty()) {
      return Status::InvalidArgument(
          "no CURVE keys: give --key FILE (its key pair: trailmap keygen agg) and --clients FILE "
          "(the client keys it accepts, one a line: NAME PUBLIC-KEY RIGHTS [HOSTS...]), or "
          "--insecure-plaintext on a lab network");
    }
    Result<CurveKeyFile> key = LoadCurveKeyFile(config->key, /*need_secret=*/true);
    if (!key.ok()) return Status::InvalidArgument("--key: " + key.status().message());
    *server_key = std::move(key).value();
    // The pair's public half, from its secret: what clients must be given for this aggregator.
    char derived[kZ85KeyLength + 1] = {};
    if (zmq_curve_public(derived, server_key->secret_key.c_str()) != 0 ||
        server_key->public_key != derived) {
      return Status::InvalidArgument("--key: " + config->key +
                                     ": its public-key is not the public half of its "
                                     "secret-key (make a new pair: trailmap keygen)");
    }
    const ClusterMember* me = config->store.aggregates.cluster
                                  ? config->store.aggregates.cluster->Find(config->name)
                                  : nullptr;
    if (me != nullptr && !me->server_key.empty() && me->server_key != server_key->public_key) {
      return Status::InvalidArgument(
          "--cluster " + f.cluster_path + ": [[aggregator]] \"" + me->name +
          "\" names server key " + me->server_key + ", but --key " + config->key +
          " holds the pair of " + server_key->public_key +
          ": give this aggregator the key pair its entry names, or put its .pub in the "
          "entry (server_key_file)");
    }
    Result<std::vector<ClientKey>> list = LoadClientKeys(config->clients);
    if (!list.ok()) return Status::InvalidArgument("--clients: " + list.status().message());
    *clients = std::move(list).value();
  }
  return Status::Ok();
}

// Signals are taken by sigwait (WaitForSignals), so every thread started after this blocks them.
sigset_t BlockSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);  // read the clients and cluster files again
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// Everything the daemon runs, in the order it starts; a Daemon going out of scope takes them
// down in reverse (Stop does it in the order that lets each finish its work).
struct Daemon {
  std::unique_ptr<Store> store;
  zmq::context_t context{1};
  std::unique_ptr<ZapHandler> zap;
  std::unique_ptr<IngestServer> ingest;
  std::unique_ptr<QueryLatencies> latencies;
  std::unique_ptr<QueryServer> query;
  std::unique_ptr<AggregatorSelfMetrics> self_metrics;
  std::unique_ptr<MetricsHttpServer> metrics_http;

  AggregatorParts parts() const {
    return {store.get(), ingest.get(), query.get(), latencies.get(), zap.get()};
  }
};

// False (logged) when the store does not open.
bool OpenStore(const AggregatorConfig& config, Daemon* d) {
  // RocksDB keeps every table file open: the descriptors follow the store's live files.
  if (const uint64_t files = RaiseOpenFileLimit(); files > 0 && files < 4096) {
    Log("warning: at most " + std::to_string(files) + " open files (RLIMIT_NOFILE, hard limit): "
        "RocksDB keeps every table file of the store open, about one per 64 MB; raise the limit "
        "(systemd LimitNOFILE=, ulimit -Hn) for a store of more than a few tens of GB");
  }
  Result<std::unique_ptr<Store>> store = Store::Open(config.data_dir, config.store);
  if (!store.ok()) {
    Log("cannot open the store: " + store.status().ToString());
    return false;
  }
  d->store = std::move(store).value();
  return true;
}

// The status answer's parts the servers know (refusals, limits, connections).
void AddServerStatus(const IngestServer& ingest_server, const ZapHandler* zap,
                     ShardStatus* status) {
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
}

// The ZAP handler, the ingest and query servers: bound and serving when it returns Ok.
Status StartServers(const AggregatorConfig& config, const CurveKeyFile& server_key,
                    const std::vector<ClientKey>& clients, Daemon* d) {
  // Bound before the servers: libzmq admits every CURVE client of a context without one.
  if (!config.insecure_plaintext) {
    d->zap = std::make_unique<ZapHandler>(&d->context, clients,
                                          ZapOptions{.max_connections = config.max_connections});
    if (Status s = d->zap->Start(); !s.ok()) return s;
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
  ingest_options.access = d->zap.get();
  ingest_options.handshake_timeout = config.handshake_timeout;
  d->ingest = std::make_unique<IngestServer>(&d->context, d->store.get(), ingest_options);
  // Per second for the self-metrics, running totals for --metrics; neither: not recorded.
  const bool prometheus = config.metrics != "off";
  d->latencies = std::make_unique<QueryLatencies>(std::function<int64_t()>{},
                                                  /*by_second=*/config.self_metrics);
  QueryServerOptions query_options{config.query_endpoint, config.name,
                                   config.self_metrics || prometheus ? d->latencies.get() : nullptr,
                                   config.query_workers, config.query_limits};
  query_options.curve_secret_key = server_key.secret_key;
  query_options.access = d->zap.get();
  query_options.handshake_timeout = config.handshake_timeout;
  query_options.add_status = [ingest = d->ingest.get(), zap = d->zap.get()](ShardStatus* status) {
    AddServerStatus(*ingest, zap, status);
  };
  d->query = std::make_unique<QueryServer>(&d->context, d->store.get(), std::move(query_options));
  if (Status s = d->ingest->Start(); !s.ok()) return s;
  return d->query->Start();
}

// The self-metrics each second and for a Prometheus scrape (--metrics). A bad --metrics
// address is InvalidArgument.
Status StartSelfMetrics(const AggregatorConfig& config, Daemon* d) {
  if (config.self_metrics) {
    d->self_metrics = std::make_unique<AggregatorSelfMetrics>(
        d->parts(), AggregatorSelfMetricsOptions{.host = config.host, .shard = config.name});
    d->self_metrics->Start();
  }
  if (config.metrics == "off") return Status::Ok();
  // Read afresh at each request, on its own thread.
  Result<HostPort> where = ParseHostPort(config.metrics);  // validated already
  Result<std::unique_ptr<MetricsHttpServer>> started = MetricsHttpServer::StartText(
      MetricsHttpOptions{where->host, where->port, "trailmap-aggregator"},
      [parts = d->parts(), shard = config.name] { return AggregatorPrometheusText(parts, shard); });
  if (!started.ok()) return started.status();
  d->metrics_http = std::move(*started);
  return Status::Ok();
}

// SIGHUP: the clients file and the cluster file read again.
void Reload(const std::string& cluster_path, const CurveKeyFile& server_key,
            AggregatorConfig* config, Daemon* d) {
  // The clients file read again: new handshakes and every request from now on follow it (a
  // removed key's connections lose their rights); a file that does not read keeps the old list.
  // An empty file is refused unless it says it means to be (ZapHandler::ReloadKeysFrom).
  if (d->zap) {
    Result<std::string> reloaded = d->zap->ReloadKeysFrom(config->clients);
    Log("SIGHUP: " + (reloaded.ok() ? *reloaded : reloaded.status().message()));
  }
  // The cluster file read again (core/cluster.h ReloadCluster): the owner groups of the
  // pre-aggregates follow an epoch an operator added; a file refused keeps the old cluster.
  if (!config->store.aggregates.cluster) {
    if (!d->zap) Log("SIGHUP: no cluster file to read again (started without --cluster)");
    return;
  }
  std::optional<Cluster> next =
      ReloadClusterOnSignal(cluster_path, *config->store.aggregates.cluster, UnixSecondsNow());
  if (!next) return;
  if (const ClusterMember* me = next->Find(config->name); me != nullptr &&
                                                          !me->server_key.empty() && d->zap &&
                                                          me->server_key != server_key.public_key) {
    Log("SIGHUP: the cluster file names server key " + me->server_key + " for this aggregator (" +
        me->name + "), but it runs with " + server_key.public_key +
        ": clients that read the file fail to connect until it is restarted with that pair");
  }
  config->store.aggregates.cluster = *next;
  d->store->SetCluster(std::move(*next));
}

// Until SIGINT or SIGTERM (returned); SIGHUP reloads.
int WaitForSignals(const sigset_t& signals, const std::string& cluster_path,
                   const CurveKeyFile& server_key, AggregatorConfig* config, Daemon* d) {
  int signal = 0;
  for (;;) {
    sigwait(&signals, &signal);
    if (signal != SIGHUP) return signal;
    Reload(cluster_path, server_key, config, d);
  }
}

// Takes the daemon down: the readers of the parts first, then the servers, then the store.
void Stop(int signal, Daemon* d) {
  Log(std::string("stopping on ") + (signal == SIGINT ? "SIGINT" : "SIGTERM"));
  d->metrics_http.reset();  // it reads the parts: stopped before any of them
  d->self_metrics.reset();
  d->ingest->Stop();
  d->query->Stop();
  if (d->zap) d->zap->Stop();
  const IngestCounters c = d->ingest->counters();
  const uint64_t saturated = d->store->SaturatedMerges();
  d->store.reset();
  Log("stopped: " + std::to_string(c.applied) + " batches applied, " + std::to_string(c.duplicate) +
      " duplicate, " + std::to_string(c.out_of_order) + " out of order, " +
      std::to_string(c.rejected) + " rejected, " + std::to_string(c.refused_by_key) +
      " refused for their key, " + std::to_string(saturated) + " merges saturated");
}

int Run(int argc, char** argv) {
  Flags flags;
  std::unique_ptr<CLI::App> app = MakeApp(&flags);
  try {
    app->parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app->exit(e);
  } catch (const CLI::ParseError& e) {
    return Usage(e.what());
  }
  AggregatorConfig config;
  if (Status s = MergeFlags(*app, flags, &config); !s.ok()) return Usage(s.message());
  CurveKeyFile server_key;
  std::vector<ClientKey> clients;
  if (Status s = LoadKeys(flags, &config, &server_key, &clients); !s.ok()) {
    return Usage(s.message());
  }
  if (config.name.empty()) config.name = DefaultName(Hostname(), config.ingest_endpoint);
  if (config.host.empty()) config.host = Hostname();

  const sigset_t signals = BlockSignals();
  Daemon d;
  if (!OpenStore(config, &d)) return 1;
  if (Status s = StartServers(config, server_key, clients, &d); !s.ok()) {
    Log(s.ToString());
    return 1;
  }
  if (Status s = StartSelfMetrics(config, &d); !s.ok()) {
    Log(s.ToString());
    return s.code() == Status::Code::kInvalidArgument ? kUsageError : 1;
  }
  Log("started " + config.name + ": ingest " + d.ingest->endpoint() + ", query " +
      d.query->endpoint() + ", data " + config.data_dir + ", self-metrics " +
      (d.self_metrics ? "as host " + config.host : std::string("off")) + ", Prometheus " +
      (d.metrics_http ? d.metrics_http->url() : std::string("off")) + ", " +
      (d.zap ? "CURVE with " + std::to_string(clients.size()) + " client keys of " + config.clients
             : std::string("PLAINTEXT")));
  Stop(WaitForSignals(signals, flags.cluster_path, server_key, &config, &d), &d);
  return 0;
}

}  // namespace
}  // namespace trailmap::aggregator

int main(int argc, char** argv) {
  trailmap::SetLogProgram("trailmap-aggregator");
  trailmap::KeepFreedMemory();  // each query's memory stays for the next: core/huge_heap.h
  return trailmap::aggregator::Run(argc, argv);
}
