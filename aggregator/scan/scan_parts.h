// RunScanParts: RunParts (core/parallel.h) for a query's scans, each part's thread first turning
// off RocksDB's perf counting. RocksDB counts each key, block and comparison it handles into a
// thread-local PerfContext unless the thread's perf level says not to, and a new thread starts
// at kEnableCount. While RocksDB was a shared library each such count was a __tls_get_addr call
// and a call to the context's TLS initializer: ~9% of a region query's aggregator CPU (perf,
// docs/BENCHMARKS.md); it is linked statically since, and the counts are still not wanted.
// Nothing here reads them.
#pragma once

#include <rocksdb/perf_level.h>

#include "core/parallel.h"

namespace trailmap::aggregator {

template <typename Fn>
void RunScanParts(int parts, Fn&& fn) {
  RunParts(parts, [&fn](int part) {
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
    fn(part);
  });
}

}  // namespace trailmap::aggregator
