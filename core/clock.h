// Wall time, read in one place. A module that tests drive takes an injected clock (a
// std::function returning unix seconds; empty = the system clock): NowSeconds(clock) reads it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

namespace trailmap {

inline int64_t UnixSecondsNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline int64_t UnixMillisNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The injected clock when there is one, else the system's: unix seconds.
inline int64_t NowSeconds(const std::function<int64_t()>& clock) {
  return clock ? clock() : UnixSecondsNow();
}

}  // namespace trailmap
