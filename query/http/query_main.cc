// trailmap-query: the HTTP node. It answers the JSON/SVG/PNG API (query/http/api.h) from the
// aggregators the CLI would ask — the same flags, environment and config file — with the same
// fan-out and views. main() reads the clock, the environment and the flags, listens, and serves
// until SIGINT or SIGTERM; SIGHUP reads the token file and the cluster file again (core/cluster.h
// ReloadCluster).
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "core/clock.h"
#include "core/huge_heap.h"
#include "core/log.h"
#include "core/open_files.h"
#include "core/self_metrics.h"
#include "core/units.h"
#include "net/cluster_file.h"
#include "net/curve_keys.h"
#include "query/fetch/request_checks.h"
#include "query/http/api.h"
#include "query/http/server.h"
#include "query/http/tokens.h"

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

constexpr const char* kUsage =
    "trailmap-query: the web page and HTTP API of a trailmap cluster.\n"
    "Usage: trailmap-query [--listen HOST:PORT] [--aggregators HOST:PORT,... | --cluster FILE]\n"
    "                      [--config FILE] [--timeout 5s] [--workers 8] [--max-queue 64]\n"
    "                      [--max-connections 512] [--stream-keepalive 10s]\n"
    "                      [--key FILE --server-key FILE | --insecure-plaintext]\n"
    "                      [--tokens FILE | --insecure-no-auth]\n"
    "       trailmap-query --hash-token NAME < token   (prints the token file line for NAME)\n"
    "  --listen       where to serve HTTP (default 127.0.0.1:7402; a host name such as localhost\n"
    "                 resolves to its first IPv4 address); an address that is not loopback needs\n"
    "                 --tokens or --insecure-no-auth\n"
    "  --aggregators  aggregator QUERY endpoints (default port 7401); else $TRAILMAP_AGGREGATORS,\n"
    "                 else `aggregators` in the config file, else 127.0.0.1:7401\n"
    "  --config       TOML file with aggregators = [\"HOST:PORT\", ...] (default $TRAILMAP_CONFIG\n"
    "                 or ~/.config/trailmap/trailmap.toml)\n"
    "  --cluster      cluster file (members, zones, replication, epochs; default\n"
    "                 $TRAILMAP_CLUSTER): with replication > 1 every host-second is counted once,\n"
    "                 from the first of its owners that answers; re-read by every request\n"
    "  --timeout      how long a request waits for every shard's answer, unless it says\n"
    "                 (timeout=); at most 60s, here and in a request\n"
    "  --workers      threads that run requests at once\n"
    "  --max-queue    requests that may wait for a worker; past it 503 with Retry-After: 1\n"
    "  --max-connections  connections open at once; past it a new one is closed at once\n"
    "                 (default 512, or fewer to fit the open-file limit: half of a limit below\n"
    "                 256, else all but 128 of it)\n"
    "  --stream-keepalive  a live stream that sent nothing for this long sends an SSE comment\n"
    "  --tokens       file of bearer tokens (a line each: NAME SHA256HEX-OF-THE-TOKEN); every\n"
    "                 request but the page's files then needs \"Authorization: Bearer TOKEN\"\n"
    "                 (401 otherwise),\n"
    "                 and the page asks for the token (or takes it from #token=... in its URL)\n"
    "  --hash-token   reads a token from standard input and prints its line for the token file:\n"
    "                 head -c 24 /dev/urandom | base64 > alice.token\n"
    "                 trailmap-query --hash-token alice < alice.token >> tokens.txt\n"
    "                 (or: printf '%s' \"$TOKEN\" | sha256sum)\n"
    "  --insecure-no-auth  serve the API without tokens on an address that is not loopback:\n"
    "                 anyone who reaches it reads everything (logged as a warning)\n"
    "  --key          its CURVE key, NAME.key from trailmap keygen (default $TRAILMAP_KEY); the\n"
    "                 aggregators list it with the query right\n"
    "  --server-key   the aggregators' public key, their .pub (default $TRAILMAP_SERVER_KEY)\n"
    "  --insecure-plaintext  query without encryption or authentication (lab only)\n"
    "Endpoints: GET /api/heatmap, /api/columns, /api/trails, /api/line, /api/stats, /api/flame,\n"
    "/api/metrics, /api/fields, with the CLI's long options as parameters (metric=, from=, ...).\n"
    "Stop with SIGINT or SIGTERM; SIGHUP reads the token file and the cluster file again.\n";

// A whole number within [low, high], else nullopt.
std::optional<long> Number(const std::string& text, long low, long high) {
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n < low || n > high) return std::nullopt;
  return n;
}

// Malloc arenas the workers share: each keeps up to 64 MiB free (KeepFreedMemory), so few.
constexpr int kArenas = 2;
// Resident memory past which a request's end gives the free pages back (ReleaseFreedMemory): an
// outsized answer's peak does not stay.
constexpr uint64_t kKeepResident = uint64_t{256} << 20;

// After a request: the heap's free pages back to the kernel when the process holds more than
// `bytes`. One thread at a time (`releasing`); the others go on.
void ReleaseMemoryAbove(uint64_t bytes, std::atomic<bool>* releasing) {
  trailmap::Result<trailmap::ProcessStats> p = trailmap::ReadProcessStats();
  if (!p.ok() || p->rss_bytes <= bytes || releasing->exchange(true)) return;
  trailmap::ReleaseFreedMemory();
  *releasing = false;
}

// How long a stop waits for the requests still running.
constexpr std::chrono::milliseconds kStopGrace{2000};

int Usage(const std::string& message) {
  std::cerr << "trailmap-query: " << message << "\n" << kUsage;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace trailmap;
  SetLogProgram("trailmap-query");
  // Each request's memory stays for the next (core/huge_heap.h), in at most kArenas arenas.
  KeepFreedMemory(size_t{64} << 20, kArenas);
  RaiseOpenFileLimit();  // each connection and each shard's socket is a descriptor
  HttpServerOptions server_options;
  ApiOptions api;
  std::string tokens_path;
  std::string key_path, server_key_path;
  bool insecure_plaintext = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (arg == "--insecure-no-auth") {
      server_options.insecure_no_auth = true;
      continue;
    }
    if (arg == "--insecure-plaintext") {
      insecure_plaintext = true;
      continue;
    }
    std::string value;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return Usage(arg + " needs a value");
    }
    if (arg == "--listen") {
      server_options.listen = value;
    } else if (arg == "--aggregators" || arg == "-a") {
      api.defaults.aggregators = value;
    } else if (arg == "--config") {
      api.defaults.config = value;
    } else if (arg == "--cluster") {
      api.defaults.cluster = value;
    } else if (arg == "--timeout") {
      if (!ParseDuration(value).ok()) return Usage("--timeout " + value + ": give e.g. 5s, 500ms");
      api.defaults.timeout = value;
      ViewRequest check;
      check.timeout = value;
      if (Status s = CheckViewRequest(check); !s.ok()) return Usage(s.message());
    } else if (arg == "--tokens") {
      tokens_path = value;
    } else if (arg == "--hash-token") {
      // The token from standard input, less a final newline (as `echo` and files end).
      std::string token((std::istreambuf_iterator<char>(std::cin)),
                        std::istreambuf_iterator<char>());
      while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
      if (token.empty()) return Usage("--hash-token " + value + ": no token on standard input");
      if (value.find_first_of(" \t\n") != std::string::npos) {
        return Usage("--hash-token " + value + ": a name without blanks");
      }
      std::cout << TokenFileLine(value, token) << "\n";
      return 0;
    } else if (arg == "--key") {
      key_path = value;
    } else if (arg == "--server-key") {
      server_key_path = value;
    } else if (arg == "--workers") {
      const std::optional<long> n = Number(value, 1, 256);
      if (!n) return Usage("--workers " + value + ": give a number from 1 to 256");
      server_options.workers = static_cast<int>(*n);
    } else if (arg == "--max-queue") {
      const std::optional<long> n = Number(value, 1, 100'000);
      if (!n) return Usage("--max-queue " + value + ": give a number from 1 to 100000");
      server_options.max_queue = static_cast<int>(*n);
    } else if (arg == "--max-connections") {
      const std::optional<long> n = Number(value, 1, 1'000'000);
      if (!n) return Usage("--max-connections " + value + ": give a number from 1 to 1000000");
      server_options.max_connections = static_cast<size_t>(*n);
    } else if (arg == "--stream-keepalive") {
      const Result<uint64_t> ns = ParseDuration(value);
      if (!ns.ok() || *ns < 10'000'000 || *ns > 3'600'000'000'000) {
        return Usage("--stream-keepalive " + value + ": give a duration from 10ms to 1h");
      }
      server_options.stream_keepalive = std::chrono::milliseconds(*ns / 1'000'000);
    } else {
      return Usage("unknown flag " + arg);
    }
  }

  std::optional<BearerTokens> tokens;
  if (!tokens_path.empty()) {
    Result<BearerTokens> loaded = BearerTokens::Load(tokens_path);
    if (!loaded.ok()) return Usage("--tokens: " + loaded.status().message());
    tokens = std::move(loaded).value();
    server_options.tokens = &*tokens;
    if (server_options.insecure_no_auth) return Usage("--tokens and --insecure-no-auth: give one");
  }

  zmq::context_t zmq_context(1);
  QueryContext base;
  base.zmq = &zmq_context;
  base.env_aggregators = Env("TRAILMAP_AGGREGATORS");
  base.env_config = Env("TRAILMAP_CONFIG");
  base.home = Env("HOME");
  base.env_cluster = Env("TRAILMAP_CLUSTER");
  ClientKeyPathsFromEnvironment(insecure_plaintext, &key_path, &server_key_path);
  Result<CurveClient> curve = ResolveCurveClient(key_path, server_key_path, insecure_plaintext);
  if (curve.ok() && !curve->Usable().ok()) curve = curve->Usable();
  if (!curve.ok()) return Usage(curve.status().message());
  base.curve = std::move(curve).value();
  if (base.curve.plaintext) Log(kPlaintextWarning);
  Result<Cluster> cluster = QueryCluster(base, api.defaults);
  if (!cluster.ok()) return Usage(cluster.status().message());
  // Each request resolves the same list again; a config file read once is enough. A cluster
  // file is read at start and again on SIGHUP (core/cluster.h ReloadCluster), so an epoch an
  // operator adds is asked without a restart, and a file that does not read keeps the old one.
  const std::string cluster_path =
      api.defaults.cluster.empty() ? base.env_cluster : api.defaults.cluster;
  std::mutex cluster_mu;
  std::shared_ptr<const Cluster> current;  // guarded by cluster_mu; null without a cluster file
  if (!cluster_path.empty()) current = std::make_shared<const Cluster>(*cluster);
  std::string list;
  for (const ClusterMember& m : cluster->members) list += (list.empty() ? "" : ",") + m.query;
  if (api.defaults.cluster.empty() && base.env_cluster.empty()) {
    api.defaults.aggregators = list;
  } else {
    list = (api.defaults.cluster.empty() ? base.env_cluster : api.defaults.cluster) + " (" + list +
           ", replication " + std::to_string(cluster->replication) + ")";
  }

  // The signals are waited for by one thread; every other thread (the workers too) blocks them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);  // read the token and cluster files again
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::atomic<bool> releasing{false};  // ReleaseMemoryAbove's
  HttpHandler handler = [&base, &api, &cluster_mu, &current, &releasing](
                            std::string_view method, std::string_view target,
                            const HttpRequestInfo& info) {
    if (method != "GET") return ErrorReply(405, "only GET is served");
    QueryContext context = base;
    context.now = UnixSecondsNow();
    context.cancelled = info.cancelled;
    context.received = info.received;
    {
      std::lock_guard lock(cluster_mu);
      context.cluster = current;
    }
    HttpReply reply = HandleApi(target, context, api);
    ReleaseMemoryAbove(kKeepResident, &releasing);
    return reply;
  };
  Result<std::unique_ptr<HttpServer>> server = HttpServer::Listen(server_options, handler);
  if (!server.ok()) {
    std::cerr << "trailmap-query: " << server.status().message() << "\n";
    return server.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
  }
  std::string host = server_options.listen.substr(0, server_options.listen.rfind(':'));
  if (server_options.listen.find(':') == std::string::npos) host = server_options.listen;
  std::cout << "trailmap-query: serving http://" << host << ":" << (*server)->port() << "/ from "
            << list << std::endl;
  if (tokens) {
    Log("the API needs a bearer token: " + std::to_string(tokens->size()) + " listed in " +
        tokens_path);
  } else if (server_options.insecure_no_auth) {
    Log("WARNING: --insecure-no-auth: the API is open to anyone who reaches " +
        server_options.listen + " (give --tokens FILE to require bearer tokens)");
  }
  Log("serving http://" + host + ":" + std::to_string((*server)->port()) + "/ from " + list);

  std::thread waiter([&signals, &cluster_path, &cluster_mu, &current, &tokens, &tokens_path,
                      s = server->get()]() {
    int signal = 0;
    while (sigwait(&signals, &signal) == 0 && signal == SIGHUP) {
      // The token file read again: a token removed is refused from the next request on; a file
      // that does not read keeps the tokens as they were.
      if (tokens) {
        Result<BearerTokens> next = BearerTokens::Load(tokens_path);
        if (!next.ok()) {
          Log("SIGHUP: " + next.status().message() + "; kept the " +
              std::to_string(tokens->size()) + " tokens as they were");
        } else {
          Log("SIGHUP: token file " + tokens_path + " read again: " + std::to_string(next->size()) +
              " tokens (were " + std::to_string(tokens->size()) + ")");
          tokens = *next;  // this thread's copy, for the counts above
          s->ReplaceTokens(std::move(next).value());
        }
      }
      std::shared_ptr<const Cluster> now_asked;
      {
        std::lock_guard lock(cluster_mu);
        now_asked = current;
      }
      if (!now_asked) {
        if (!tokens) Log("SIGHUP: no cluster file to read again");
        continue;
      }
      std::optional<Cluster> next =
          ReloadClusterOnSignal(cluster_path, *now_asked, UnixSecondsNow());
      if (!next) continue;
      auto shared = std::make_shared<const Cluster>(std::move(*next));
      std::lock_guard lock(cluster_mu);
      current = std::move(shared);
    }
    Log("stopping on signal " + std::to_string(signal));
    s->Stop();
  });
  (*server)->Run();
  // Run returns only after Stop: the waiter has finished.
  waiter.join();
  // The requests still running stop waiting for their shards: every ZeroMQ call on the context
  // fails from now on (ETERM), so each fan-out returns at once and its worker ends. One that is
  // still busy after kStopGrace (drawing a large image) is not waited for.
  zmq_context.shutdown();
  std::thread([] {
    std::this_thread::sleep_for(kStopGrace);
    Log("requests still running " + std::to_string(kStopGrace.count()) +
        " ms after the signal: exiting without them");
    std::_Exit(0);
  }).detach();
  server->reset();  // joins the workers
  return 0;
}
