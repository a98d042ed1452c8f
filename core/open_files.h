// RaiseOpenFileLimit: a daemon's soft limit on open descriptors (RLIMIT_NOFILE) raised to its
// hard limit. The agent's proc source keeps three /proc/PID files open per process
// (agent/proc_source.h); the aggregator's RocksDB keeps every table file open, so its
// descriptors follow the live files (docs/BENCHMARKS.md, the 2-hour soak: 43 -> ~90 with 1.9 GB
// of tables), and a soft limit of 1,024 (a common default) is within reach of a store's days of
// seconds. Call it once at start; the returned soft limit is for the log.
#pragma once

#include <cstdint>

namespace trailmap {

// The soft RLIMIT_NOFILE now in effect: the hard limit when raising it succeeded, else what it
// was (0 when it cannot be read).
uint64_t RaiseOpenFileLimit();

// The soft RLIMIT_NOFILE in effect (0 when it cannot be read).
uint64_t OpenFileLimit();

}  // namespace trailmap
