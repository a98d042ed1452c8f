#include "net/client_keys.h"

#include <CLI/CLI.hpp>

#include "core/log.h"

namespace trailmap {

void AddClientKeyFlags(CLI::App* app, ClientKeyFlags* flags, const std::string& who) {
  app->add_option("--key", flags->key,
                  who + "'s CURVE key, NAME.key from trailmap keygen (default $TRAILMAP_KEY)")
      ->type_name("FILE");
  app->add_option("--server-key", flags->server_key,
                  "the aggregators' public key, their .pub (default $TRAILMAP_SERVER_KEY)")
      ->type_name("FILE");
  app->add_flag("--insecure-plaintext", flags->insecure_plaintext,
                "connect without encryption or authentication (lab only: the aggregators must "
                "run with it too; logs a warning)");
}

Result<CurveClient> ClientCurve(ClientKeyFlags flags, bool need_keys) {
  ClientKeyPathsFromEnvironment(flags.insecure_plaintext, &flags.key, &flags.server_key);
  Result<CurveClient> curve =
      ResolveCurveClient(flags.key, flags.server_key, flags.insecure_plaintext);
  if (!curve.ok()) return curve.status();
  if (need_keys) {
    if (Status s = curve->Usable(); !s.ok()) return s;
  }
  if (curve->plaintext) Log(kPlaintextWarning);
  return curve;
}

}  // namespace trailmap
