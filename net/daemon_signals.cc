#include "net/daemon_signals.h"

#include <pthread.h>

#include <cerrno>
#include <ctime>

namespace trailmap {

DaemonSignals::DaemonSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  sigaddset(&set_, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
}

int DaemonSignals::Wait() const {
  int signal = 0;
  while (sigwait(&set_, &signal) != 0) {
  }
  return signal;
}

int DaemonSignals::WaitFor(std::chrono::milliseconds timeout) const {
  const timespec wait{static_cast<time_t>(timeout.count() / 1000),
                      static_cast<long>(timeout.count() % 1000) * 1'000'000};
  const int signal = sigtimedwait(&set_, nullptr, &wait);
  return signal > 0 ? signal : 0;  // -1: timed out (EAGAIN) or interrupted (EINTR)
}

std::string DaemonSignals::Name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(signal);
  }
}

}  // namespace trailmap
