// perf script text for the sub-second tests: one record a call.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace trailmap::testing {

// A perf script record of `comm` at unix time `second`.`micros`, in `func` called by main.
inline std::string PerfRecord(const char* comm, int64_t second, int micros, const char* func) {
  char head[128];
  snprintf(head, sizeof head, "%s 42/42 [000] %lld.%06d: 10101010 cpu-clock: \n", comm,
           static_cast<long long>(second), micros);
  return std::string(head) + "\tffff " + func + "+0x1 (/usr/bin/app)\n\t1 main (/usr/bin/app)\n\n";
}

}  // namespace trailmap::testing
