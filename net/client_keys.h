// The CURVE keys a client program connects with, from its flags and the environment: one way for
// the agent, `trailmap`, trailmap-query and the load generator.
//
//   --key FILE             the client's own NAME.key (trailmap keygen)     else $TRAILMAP_KEY
//   --server-key FILE      the aggregators' .pub                           else
//   $TRAILMAP_SERVER_KEY
//   --insecure-plaintext   neither: no encryption, no authentication (lab only); the environment's
//                          keys are then ignored, so an exported key is no usage error
//
// Key files and their errors are net/curve_keys.h's.
#pragma once

#include <string>

#include "core/status.h"
#include "net/curve_keys.h"

namespace CLI {
class App;
}

namespace trailmap {

struct ClientKeyFlags {
  std::string key;                  // --key: "" = $TRAILMAP_KEY
  std::string server_key;           // --server-key: "" = $TRAILMAP_SERVER_KEY
  bool insecure_plaintext = false;  // --insecure-plaintext
};

// Adds --key, --server-key and --insecure-plaintext to `app`, into *flags; `who` names the
// key's holder in the help ("this agent").
void AddClientKeyFlags(CLI::App* app, ClientKeyFlags* flags, const std::string& who);

// The keys `flags` name, a path not given taken from the environment; InvalidArgument naming the
// flag and file when they do not load (ResolveCurveClient). With `need_keys`, no keys and no
// plaintext is an error too (CurveClient::Usable's message): for programs that connect at once.
// A program that may never connect (the CLI's collapse) leaves it false, and a query then fails
// with that message. Logs kPlaintextWarning with --insecure-plaintext.
Result<CurveClient> ClientCurve(ClientKeyFlags flags, bool need_keys);

}  // namespace trailmap
