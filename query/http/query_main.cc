// trailmap-query: the HTTP node. It answers the JSON/SVG/PNG API (query/http/api.h) from the
// aggregators the CLI would ask — the same flags, environment and config file — with the same
// fan-out and views. main() reads the clock, the environment and the flags (node_flags.h),
// listens, and serves until SIGINT or SIGTERM; SIGHUP reads the token file and the cluster file
// again (net/cluster_file.h ReloadCluster).
#include <CLI/CLI.hpp>
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

#include "core/boundary.h"
#include "core/clock.h"
#include "core/huge_heap.h"
#include "core/log.h"
#include "core/open_files.h"
#include "core/self_metrics.h"
#include "net/cluster_file.h"
#include "net/command_line.h"
#include "net/daemon_signals.h"
#include "query/fetch/query_environment.h"
#include "query/http/api.h"
#include "query/http/node_flags.h"
#include "query/http/server.h"
#include "query/http/tokens.h"

namespace trailmap {
namespace {

// Malloc arenas the workers share: each keeps up to 64 MiB free (KeepFreedMemory), so few.
constexpr int kArenas = 2;
// Resident memory past which a request's end gives the free pages back (ReleaseFreedMemory): an
// outsized answer's peak does not stay.
constexpr uint64_t kKeepResident = uint64_t{256} << 20;
// How long a stop waits for the requests still running.
constexpr std::chrono::milliseconds kStopGrace{2000};

// After a request: the heap's free pages back to the kernel when the process holds more than
// `bytes`. One thread at a time (`releasing`); the others go on.
void ReleaseMemoryAbove(uint64_t bytes, std::atomic<bool>* releasing) {
  Result<ProcessStats> p = ReadProcessStats();
  if (!p.ok() || p->rss_bytes <= bytes || releasing->exchange(true)) return;
  ReleaseFreedMemory();
  *releasing = false;
}

int Usage(const std::string& message) {
  std::cerr << "trailmap-query: " << message << "\nRun with --help for more information.\n";
  return 2;
}

// --hash-token NAME: the token from standard input, less a final newline (as `echo` and files
// end), as its line of the token file.
int HashToken(const std::string& name) {
  std::string token((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  if (token.empty()) return Usage("--hash-token " + name + ": no token on standard input");
  if (name.find_first_of(" \t\n") != std::string::npos) {
    return Usage("--hash-token " + name + ": a name without blanks");
  }
  std::cout << TokenFileLine(name, token) << "\n";
  return 0;
}

// What every request reads and SIGHUP replaces: the cluster, when it came from a file.
struct SharedCluster {
  std::string path;  // "" when the aggregators came from a list: nothing to read again
  std::mutex mu;
  std::shared_ptr<const Cluster> current;  // guarded by mu; null without a file

  std::shared_ptr<const Cluster> Get() {
    std::lock_guard lock(mu);
    return current;
  }
  void Set(std::shared_ptr<const Cluster> next) {
    std::lock_guard lock(mu);
    current = std::move(next);
  }
};

// The aggregators the node asks, read once: a cluster file is kept (and read again on SIGHUP),
// a list becomes every request's default, so a config file is read once. Returns what the
// start-up line says they are.
Result<std::string> ResolveAggregators(const QueryContext& base, ViewRequest* defaults,
                                       SharedCluster* cluster) {
  Result<Cluster> resolved = QueryCluster(base, *defaults);
  if (!resolved.ok()) return resolved.status();
  cluster->path = NodeClusterPath(*defaults, base);
  std::string list;
  for (const ClusterMember& m : resolved->members) list += (list.empty() ? "" : ",") + m.query;
  if (cluster->path.empty()) {
    defaults->aggregators = list;
    return list;
  }
  cluster->current = std::make_shared<const Cluster>(*resolved);
  return cluster->path + " (" + list + ", replication " + std::to_string(resolved->replication) +
         ")";
}

// SIGHUP: the token file read again (a token removed is refused from the next request on; a
// file that does not read keeps the tokens as they were), then the cluster file.
void ReadFilesAgain(const std::string& tokens_path, std::optional<BearerTokens>* tokens,
                    HttpServer* server, SharedCluster* cluster) {
  if (*tokens) {
    Result<BearerTokens> next = BearerTokens::Load(tokens_path);
    if (!next.ok()) {
      Log("SIGHUP: " + next.status().message() + "; kept the " + std::to_string((*tokens)->size()) +
          " tokens as they were");
    } else {
      Log("SIGHUP: token file " + tokens_path + " read again: " + std::to_string(next->size()) +
          " tokens (were " + std::to_string((*tokens)->size()) + ")");
      *tokens = *next;  // the waiter's copy, for the counts above
      server->ReplaceTokens(std::move(next).value());
    }
  }
  const std::shared_ptr<const Cluster> now_asked = cluster->Get();
  if (!now_asked) {
    if (!*tokens) Log("SIGHUP: no cluster file to read again");
    return;
  }
  std::optional<Cluster> next = ReloadClusterOnSignal(cluster->path, *now_asked, UnixSecondsNow());
  if (next) cluster->Set(std::make_shared<const Cluster>(std::move(*next)));
}

// Every request: a copy of the base context with the request's clock, cancellation and cluster.
HttpHandler ApiHandler(const QueryContext* base, const ApiOptions* api, SharedCluster* cluster,
                       std::atomic<bool>* releasing) {
  return [base, api, cluster, releasing](std::string_view method, std::string_view target,
                                         const HttpRequestInfo& info) {
    if (method != "GET") return ErrorReply(405, "only GET is served");
    QueryContext context = *base;
    context.now = UnixSecondsNow();
    context.cancelled = info.cancelled;
    context.received = info.received;
    context.cluster = cluster->Get();
    HttpReply reply = HandleApi(target, context, *api);
    ReleaseMemoryAbove(kKeepResident, releasing);
    return reply;
  };
}

void Announce(const HttpServerOptions& options, const HttpServer& server,
              const std::string& aggregators, const std::optional<BearerTokens>& tokens,
              const std::string& tokens_path) {
  std::string host = options.listen.substr(0, options.listen.rfind(':'));
  if (options.listen.find(':') == std::string::npos) host = options.listen;
  std::cout << "trailmap-query: serving http://" << host << ":" << server.port() << "/ from "
            << aggregators << std::endl;
  if (tokens) {
    Log("the API needs a bearer token: " + std::to_string(tokens->size()) + " listed in " +
        tokens_path);
  } else if (options.insecure_no_auth) {
    Log("WARNING: --insecure-no-auth: the API is open to anyone who reaches " + options.listen +
        " (give --tokens FILE to require bearer tokens)");
  }
  Log("serving http://" + host + ":" + std::to_string(server.port()) + "/ from " + aggregators);
}

// Takes the signals until SIGINT or SIGTERM, then stops the server. A SIGHUP that fails
// unexpectedly is logged and counted, and the waiter goes on: the node must still stop.
void WaitForSignals(const DaemonSignals& signals, const std::string& tokens_path,
                    std::optional<BearerTokens> tokens, HttpServer* server,
                    SharedCluster* cluster) {
  int signal = 0;
  std::atomic<uint64_t> failures{0};
  while (!DaemonSignals::Stops(signal = signals.Wait())) {
    CatchAtBoundary("SIGHUP", &failures, [&tokens_path, &tokens, server, cluster] {
      ReadFilesAgain(tokens_path, &tokens, server, cluster);
    });
  }
  Log("stopping on " + DaemonSignals::Name(signal));
  server->Stop();
}

int Serve(NodeFlags flags) {
  std::optional<BearerTokens> tokens;
  if (!flags.tokens.empty()) {
    Result<BearerTokens> loaded = BearerTokens::Load(flags.tokens);
    if (!loaded.ok()) return Usage("--tokens: " + loaded.status().message());
    tokens = std::move(loaded).value();
    flags.server.tokens = &*tokens;
  }
  zmq::context_t zmq_context(1);
  QueryContext base;
  if (Status s = SetUpQueryContext(flags.keys, /*need_keys=*/true, &zmq_context, &base); !s.ok()) {
    return Usage(s.message());
  }
  ApiOptions api;
  api.defaults = flags.defaults;
  SharedCluster cluster;
  Result<std::string> aggregators = ResolveAggregators(base, &api.defaults, &cluster);
  if (!aggregators.ok()) return Usage(aggregators.status().message());

  // Before any thread starts: the signals are taken by the waiter alone.
  const DaemonSignals signals;
  std::atomic<bool> releasing{false};  // ReleaseMemoryAbove's
  Result<std::unique_ptr<HttpServer>> server =
      HttpServer::Listen(flags.server, ApiHandler(&base, &api, &cluster, &releasing));
  if (!server.ok()) {
    std::cerr << "trailmap-query: " << server.status().message() << "\n";
    return server.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
  }
  Announce(flags.server, **server, *aggregators, tokens, flags.tokens);
  std::thread waiter([&signals, &flags, &tokens, s = server->get(), &cluster] {
    WaitForSignals(signals, flags.tokens, tokens, s, &cluster);
  });
  (*server)->Run();
  waiter.join();  // Run returns only after Stop: the waiter has finished
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

}  // namespace
}  // namespace trailmap

int main(int argc, char** argv) {
  using namespace trailmap;
  SetLogProgram("trailmap-query");
  // Each request's memory stays for the next (core/huge_heap.h), in at most kArenas arenas.
  KeepFreedMemory(size_t{64} << 20, kArenas);
  RaiseOpenFileLimit();  // each connection and each shard's socket is a descriptor
  CLI::App app{"", "trailmap-query"};
  NodeFlags flags;
  AddNodeFlags(&app, &flags);
  if (const int code = ParseCommandLine(&app, argc, argv); code >= 0) return code;
  if (!flags.hash_token.empty()) return HashToken(flags.hash_token);
  if (Status s = CheckNodeFlags(&flags); !s.ok()) return Usage(s.message());
  return Serve(std::move(flags));
}
