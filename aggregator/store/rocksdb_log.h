// RocksDB's info log (the LOG file in the data directory), written so that a full disk cannot
// stop the aggregator. RocksDB's own logger goes through a WritableFileWriter; once one of its
// writes fails (ENOSPC), Debian's RocksDB 7.8 (built with assertions) aborts at the next line it
// logs or when it closes the file. This one appends each line with one write(2) and lets a failed
// write go (counted in dropped()): the lines lost are only RocksDB's own diary.
// Warnings and errors also go to the aggregator's log (core/log.h) as "rocksdb: ...", so a merge
// that saturated or a failing compaction is seen where the operator looks.
#pragma once

#include <rocksdb/env.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace trailmap::aggregator {

class RocksDbLog : public rocksdb::Logger {
 public:
  // Appends to `path` (created if missing). A LOG of more than `rotate_bytes` is first renamed
  // to `path`.old (replacing an older one), as RocksDB's keep_log_file_num would, once per open.
  explicit RocksDbLog(const std::string& path, uint64_t rotate_bytes = 64ull << 20);
  ~RocksDbLog() override;

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override;
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override;

  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 protected:
  rocksdb::Status CloseImpl() override;

 private:
  void Write(rocksdb::InfoLogLevel level, const char* format, va_list ap);

  int fd_ = -1;
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace trailmap::aggregator
