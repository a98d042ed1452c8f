// DiskGuard: the free space a data directory's file system must keep before the store writes.
//
// RocksDB must never meet ENOSPC itself: Debian's RocksDB 7.8 is built with assertions, and the
// first WAL append that fails with ENOSPC aborts the process (WritableFileWriter,
// `sync_without_flush_called_`). So every write first asks Check: below the reserve the write is
// refused (not written, so not acked; the agents resend) until space returns. The reserve leaves
// room for flushes and compactions of what is already written. The fall below the reserve and the
// return above it are logged once each.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <utility>

#include "core/status.h"

namespace trailmap::aggregator {

class DiskGuard {
 public:
  // `min_free_mb` = 0 (or an empty `dir`) checks nothing.
  DiskGuard(std::string dir, size_t min_free_mb)
      : dir_(std::move(dir)), min_free_mb_(min_free_mb) {}

  // Ok when the file system under the directory has the reserve free (or cannot tell: then
  // RocksDB may try); ResourceExhausted "disk full: N MiB free under DIR, reserve M MiB" when not.
  Status Check();
  // Whether the last Check found the disk below its reserve.
  bool low() const { return low_.load(std::memory_order_relaxed); }

 private:
  const std::string dir_;
  const size_t min_free_mb_;
  std::atomic<bool> low_{false};
};

}  // namespace trailmap::aggregator
