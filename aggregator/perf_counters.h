// DisableRocksDbPerfCounters: called first on every thread that scans for a query. RocksDB counts
// each key, block and comparison it handles into a thread-local PerfContext unless the thread's
// perf level says not to, and a new thread starts at kEnableCount. In a shared librocksdb each
// such count is a __tls_get_addr call and a call to the context's TLS initializer: ~9% of a
// region query's aggregator CPU (perf, docs/BENCHMARKS.md). Nothing here reads those counts.
#pragma once

#include <rocksdb/perf_level.h>

namespace trailmap::aggregator {

inline void DisableRocksDbPerfCounters() { rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable); }

}  // namespace trailmap::aggregator
