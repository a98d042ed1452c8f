// What the command tests share: a CliContext as main() builds it, with a fixed clock, no config
// file and the output captured.
#pragma once

#include <sstream>
#include <zmq.hpp>

#include "cli/cli_common.h"

namespace trailmap::testing {

struct CliHarness {
  zmq::context_t zmq;
  std::ostringstream out, err;
  CliContext context;
  CliHarness() {
    context.zmq = &zmq;
    context.now = 1'700'000'060;
    context.home = "/nonexistent-home";
    context.curve.plaintext = true;  // the fake aggregators are plaintext
    context.out = &out;
    context.err = &err;
  }
};

}  // namespace trailmap::testing
