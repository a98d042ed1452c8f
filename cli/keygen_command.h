// `trailmap keygen NAME`: makes a CURVE key pair (zmq_curve_keypair) and writes it as NAME.key
// (name, public and secret key; mode 0600, created exclusively so an existing key is never
// overwritten) and NAME.pub (name and public key), in the format of core/curve_keys.h. Prints
// the clients-file line to list the key with on the aggregators. Exit 0, 1 when a file cannot be
// written (or exists), 2 on a bad NAME.
#pragma once

#include <string>

#include "cli/cli_common.h"

namespace trailmap {

struct KeygenFlags {
  std::string name;       // the key's name: NAME.key, NAME.pub, and its name on the aggregator
  std::string dir = ".";  // where the two files go
};

CLI::App* AddKeygenCommand(CLI::App* app, KeygenFlags* flags);
int RunKeygen(const KeygenFlags& flags, const CliContext& context);

}  // namespace trailmap
