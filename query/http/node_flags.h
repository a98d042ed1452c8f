// trailmap-query's command line, on CLI11 as every trailmap program's:
//
//   trailmap-query [--listen HOST:PORT] [--aggregators HOST:PORT,... | --cluster FILE]
//                  [--config FILE] [--timeout 5s] [--workers 8] [--max-queue 64]
//                  [--max-connections 512] [--stream-keepalive 10s]
//                  [--key FILE --server-key FILE | --insecure-plaintext]
//                  [--tokens FILE | --insecure-no-auth]
//   trailmap-query --hash-token NAME < token     (prints the token file line for NAME)
//
// Numbers and durations are taken as text and checked by CheckNodeFlags, so every refusal names
// the flag, what was given and what to give ("--workers 0: give a number from 1 to 256").
// Where the aggregators come from when neither --aggregators nor --cluster is given is
// query/fetch/endpoints.h's (the environment, the config file, 127.0.0.1:7401), as for the CLI.
#pragma once

#include <string>

#include "core/status.h"
#include "net/client_keys.h"
#include "query/fetch/view_request.h"
#include "query/http/server.h"

namespace CLI {
class App;
}

namespace trailmap {

struct NodeFlags {
  HttpServerOptions server;  // --listen, --insecure-no-auth; the numbers below once checked
  // --aggregators, --config, --cluster and --timeout: every request's defaults (ApiOptions).
  ViewRequest defaults;
  std::string tokens;      // --tokens FILE: bearer tokens required ("" = none)
  std::string hash_token;  // --hash-token NAME: print NAME's token file line, serve nothing
  ClientKeyFlags keys;     // --key, --server-key, --insecure-plaintext

  // As typed; CheckNodeFlags reads them into `server` ("" = the default).
  std::string workers, max_queue, max_connections, stream_keepalive;
};

// The program's description, every flag with its help, and a footer naming the API's paths.
void AddNodeFlags(CLI::App* app, NodeFlags* flags);

// After parsing: the numbers and durations into flags->server, and what no single flag can
// check (--tokens with --insecure-no-auth, --timeout against the requests' limit).
// InvalidArgument naming the flag.
Status CheckNodeFlags(NodeFlags* flags);

// The cluster file the node reads at start and again on SIGHUP: --cluster, else
// $TRAILMAP_CLUSTER unless --aggregators gives the list (query/fetch/endpoints.h's precedence);
// "" when the aggregators come from a list.
std::string NodeClusterPath(const ViewRequest& defaults, const QueryContext& base);

}  // namespace trailmap
