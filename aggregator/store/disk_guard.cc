#include "aggregator/store/disk_guard.h"

#include <sys/statvfs.h>

#include <cstdint>

#include "core/log.h"

namespace trailmap::aggregator {

Status DiskGuard::Check() {
  if (min_free_mb_ == 0 || dir_.empty()) return Status::Ok();
  struct statvfs fs;
  if (statvfs(dir_.c_str(), &fs) != 0) return Status::Ok();  // cannot tell: let RocksDB try
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  const uint64_t reserve = static_cast<uint64_t>(min_free_mb_) << 20;
  const std::string where = std::to_string(free_bytes >> 20) + " MiB free under " + dir_ +
                            ", reserve " + std::to_string(min_free_mb_) + " MiB";
  if (free_bytes < reserve) {
    if (!low_.exchange(true)) {
      Log("disk full: " + where +
          " (store.min_free_mb); writes are refused, not acked, until "
          "space returns (agents keep their batches and resend)");
    }
    return Status::ResourceExhausted("disk full: " + where);
  }
  if (low_.exchange(false)) Log("disk space returned: " + where + "; writes resume");
  return Status::Ok();
}

}  // namespace trailmap::aggregator
