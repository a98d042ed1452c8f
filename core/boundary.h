// CatchAtBoundary: what a thread's body does with an exception that would cross its boundary.
//
// An exception that escapes a std::thread's body ends the process (std::terminate), and one that
// escapes an Asio handler unwinds io_context::run, which then serves no one. Expected failures
// are Status values (core/status.h), so what arrives here is a bug or a resource failure nothing
// below expected: it is logged, naming the thread ("perf: unexpected error: ..."), and counted
// in `*failures`, a counter the daemon exports as a self-metric. The caller decides what comes
// next; a daemon's loops run their body again after a pause, so its other parts keep running
// and the counter, not a silent gap, shows what happened.
//
//   thread_ = std::thread([this] {
//     while (!CatchAtBoundary("perf", &thread_failures_, [this] { Run(); })) {
//       if (!SleepFor(kPause)) return;  // stopping
//     }
//   });
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "core/log.h"

namespace trailmap {

// Calls body(): true when it returned, false when it threw (logged and counted).
template <typename Body>
bool CatchAtBoundary(std::string_view what, std::atomic<uint64_t>* failures, Body&& body) {
  try {
    body();
    return true;
  } catch (const std::exception& e) {
    Log(std::string(what) + ": unexpected error: " + e.what());
  } catch (...) {
    Log(std::string(what) + ": unexpected error (not a std::exception)");
  }
  if (failures != nullptr) failures->fetch_add(1, std::memory_order_relaxed);
  return false;
}

}  // namespace trailmap
