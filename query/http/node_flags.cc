#include "query/http/node_flags.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <optional>

#include "core/units.h"
#include "query/fetch/request_checks.h"

namespace trailmap {
namespace {

constexpr char kDescription[] =
    "trailmap-query: the web page and HTTP API of a trailmap cluster. It asks the aggregators the "
    "`trailmap` program would ask (the same flags, environment and config file), with the same "
    "fan-out and views.\n"
    "Examples:\n"
    "  trailmap-query --cluster /etc/trailmap/cluster.toml --key node.key --server-key agg.pub\n"
    "  trailmap-query --listen 0.0.0.0:7402 --tokens tokens.txt --aggregators 10.0.0.5\n"
    "  trailmap-query --hash-token alice < alice.token >> tokens.txt";

constexpr char kFooter[] =
    "API: GET /api/heatmap, /api/heatmap/live (server-sent events), /api/columns, /api/trails,\n"
    "/api/line, /api/stats, /api/flame, /api/outliers, /api/subsecond, /api/metrics,\n"
    "/api/fields, with the CLI's long options as parameters (metric=, from=, ...); /api/self and\n"
    "/metrics (Prometheus text) are the node's own counters; every other path is the web page\n"
    "(docs/http-api.md).\n"
    "Stop with SIGINT or SIGTERM; SIGHUP reads the token file and the cluster file again.";

// A whole number within [low, high], else nullopt.
std::optional<long> Number(const std::string& text, long low, long high) {
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n < low || n > high) return std::nullopt;
  return n;
}

Status CheckNumber(const char* flag, const std::string& text, long low, long high, long* out) {
  const std::optional<long> n = Number(text, low, high);
  if (!n) {
    return Status::InvalidArgument(std::string(flag) + " " + text + ": give a number from " +
                                   std::to_string(low) + " to " + std::to_string(high));
  }
  *out = *n;
  return Status::Ok();
}

}  // namespace

void AddNodeFlags(CLI::App* app, NodeFlags* flags) {
  app->description(kDescription);
  app->footer(kFooter);
  app->add_option("--listen", flags->server.listen,
                  "where to serve HTTP (default 127.0.0.1:7402; a host name such as localhost "
                  "resolves to its first IPv4 address); an address that is not loopback needs "
                  "--tokens or --insecure-no-auth")
      ->type_name("HOST:PORT");
  app->add_option("-a,--aggregators", flags->defaults.aggregators,
                  "the aggregators' query endpoints (default port 7401): a cluster of one zone "
                  "and R=1, asked as listed; else $TRAILMAP_CLUSTER, $TRAILMAP_AGGREGATORS, "
                  "`aggregators` in the config file, 127.0.0.1:7401, the first that is set. "
                  "Not with --cluster")
      ->type_name("HOST:PORT,...");
  app->add_option("--cluster", flags->defaults.cluster,
                  "cluster file (TOML: every aggregator with its zone and endpoints, the "
                  "replication R, the epochs; default $TRAILMAP_CLUSTER): read at start and again "
                  "on SIGHUP (a file that does not read keeps the old cluster); with R > 1 every "
                  "host-second is counted once, from the first of its owners that answers. Not "
                  "with --aggregators")
      ->type_name("FILE");
  app->add_option("--config", flags->defaults.config,
                  "TOML file with aggregators = [\"HOST:PORT\", ...], read once at start "
                  "(default $TRAILMAP_CONFIG or ~/.config/trailmap/trailmap.toml)")
      ->type_name("FILE");
  app->add_option("--timeout", flags->defaults.timeout,
                  "how long a request waits for every shard's answer, unless it says "
                  "(timeout=); at most 60s, here and in a request (default 5s)")
      ->type_name("DURATION");
  app->add_option("--workers", flags->workers,
                  "threads that run requests at once, 1 to 256 (default 8)")
      ->type_name("N");
  app->add_option("--max-queue", flags->max_queue,
                  "requests that may wait for a worker, 1 to 100000 (default 64); past it 503 "
                  "with Retry-After: 1")
      ->type_name("N");
  app->add_option("--max-connections", flags->max_connections,
                  "connections open at once, 1 to 1000000; past it a new one is closed at once "
                  "(default 512, or fewer to fit the open-file limit: half of a limit below 256, "
                  "else all but 128 of it)")
      ->type_name("N");
  app->add_option("--stream-keepalive", flags->stream_keepalive,
                  "a live stream that sent nothing for this long sends an SSE comment, 10ms to "
                  "1h (default 10s)")
      ->type_name("DURATION");
  app->add_option("--tokens", flags->tokens,
                  "file of bearer tokens (a line each: NAME SHA256HEX-OF-THE-TOKEN); every "
                  "request but the page's files then needs \"Authorization: Bearer TOKEN\" (401 "
                  "otherwise), and the page asks for the token (or takes it from #token=... in "
                  "its URL)")
      ->type_name("FILE");
  app->add_option("--hash-token", flags->hash_token,
                  "read a token from standard input and print its line for the token file, then "
                  "exit: head -c 24 /dev/urandom | base64 > alice.token; trailmap-query "
                  "--hash-token alice < alice.token >> tokens.txt (or: printf '%s' \"$TOKEN\" | "
                  "sha256sum)")
      ->type_name("NAME");
  app->add_flag("--insecure-no-auth", flags->server.insecure_no_auth,
                "serve the API without tokens on an address that is not loopback: anyone who "
                "reaches it reads everything (logged as a warning)");
  AddClientKeyFlags(app, &flags->keys, "this node");
}

Status CheckNodeFlags(NodeFlags* flags) {
  if (!flags->defaults.timeout.empty()) {
    const std::string& value = flags->defaults.timeout;
    if (!ParseDuration(value).ok()) {
      return Status::InvalidArgument("--timeout " + value + ": give e.g. 5s, 500ms");
    }
    ViewRequest check;
    check.timeout = value;
    if (Status s = CheckViewRequest(check); !s.ok()) return s;
  }
  long n = 0;
  if (!flags->workers.empty()) {
    if (Status s = CheckNumber("--workers", flags->workers, 1, 256, &n); !s.ok()) return s;
    flags->server.workers = static_cast<int>(n);
  }
  if (!flags->max_queue.empty()) {
    if (Status s = CheckNumber("--max-queue", flags->max_queue, 1, 100'000, &n); !s.ok()) return s;
    flags->server.max_queue = static_cast<int>(n);
  }
  if (!flags->max_connections.empty()) {
    if (Status s = CheckNumber("--max-connections", flags->max_connections, 1, 1'000'000, &n);
        !s.ok()) {
      return s;
    }
    flags->server.max_connections = static_cast<size_t>(n);
  }
  if (!flags->stream_keepalive.empty()) {
    const Result<uint64_t> ns = ParseDuration(flags->stream_keepalive);
    if (!ns.ok() || *ns < 10'000'000 || *ns > 3'600'000'000'000) {
      return Status::InvalidArgument("--stream-keepalive " + flags->stream_keepalive +
                                     ": give a duration from 10ms to 1h");
    }
    flags->server.stream_keepalive = std::chrono::milliseconds(*ns / 1'000'000);
  }
  if (!flags->tokens.empty() && flags->server.insecure_no_auth) {
    return Status::InvalidArgument("--tokens and --insecure-no-auth: give one");
  }
  return Status::Ok();
}

std::string NodeClusterPath(const ViewRequest& defaults, const QueryContext& base) {
  if (!defaults.cluster.empty()) return defaults.cluster;
  return defaults.aggregators.empty() ? base.env_cluster : "";
}

}  // namespace trailmap
