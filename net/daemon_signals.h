// DaemonSignals: how a daemon takes SIGINT and SIGTERM (stop) and SIGHUP (read its files again).
//
// One thread takes them, synchronously: main() constructs DaemonSignals before it starts any
// thread, which blocks the three in the calling thread; every thread started afterwards inherits
// the mask, so the signals stay pending until Wait or WaitFor takes them, and no handler runs
// at an arbitrary point of another thread. The agent waits with a timeout between its flushes,
// the aggregator and trailmap-query in a thread of their own.
//
// Not copyable; Wait and WaitFor may be called from any thread that blocks the three.
#pragma once

#include <signal.h>

#include <chrono>
#include <string>

namespace trailmap {

class DaemonSignals {
 public:
  // Blocks SIGINT, SIGTERM and SIGHUP in the calling thread.
  DaemonSignals();
  DaemonSignals(const DaemonSignals&) = delete;
  DaemonSignals& operator=(const DaemonSignals&) = delete;

  // Waits for one of the three and returns it.
  int Wait() const;
  // Waits at most `timeout` for one of the three; returns it, or 0 when none came.
  int WaitFor(std::chrono::milliseconds timeout) const;

  // SIGINT and SIGTERM stop a daemon; SIGHUP does not.
  static bool Stops(int signal) { return signal == SIGINT || signal == SIGTERM; }
  // "SIGINT", "SIGTERM", "SIGHUP", or "signal N".
  static std::string Name(int signal);

 private:
  sigset_t set_;
};

}  // namespace trailmap
