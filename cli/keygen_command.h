// `trailmap keygen NAME`: makes a CURVE key pair (zmq_curve_keypair) and writes it as NAME.key
// (name, public and secret key; mode 0600, created exclusively so an existing key is never
// overwritten) and NAME.pub (name and public key), in the format of net/curve_keys.h, in --dir
// (made with mode 0700 when missing). The pair is written whole or not at all: when either file
// exists nothing is written, and a NAME.key whose NAME.pub cannot be written is removed. Prints
// the clients-file line to list the key with on the aggregators. Needs no key of its own (main()
// runs it before reading TRAILMAP_KEY and TRAILMAP_SERVER_KEY). Exit 0, 1 when a file cannot be
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
