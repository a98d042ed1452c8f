#include "aggregator/store/rocksdb_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <ctime>

#include "core/log.h"

namespace trailmap::aggregator {
namespace {

const char* LevelName(rocksdb::InfoLogLevel level) {
  switch (level) {
    case rocksdb::InfoLogLevel::DEBUG_LEVEL: return "DEBUG";
    case rocksdb::InfoLogLevel::INFO_LEVEL: return "INFO";
    case rocksdb::InfoLogLevel::WARN_LEVEL: return "WARN";
    case rocksdb::InfoLogLevel::ERROR_LEVEL: return "ERROR";
    case rocksdb::InfoLogLevel::FATAL_LEVEL: return "FATAL";
    case rocksdb::InfoLogLevel::HEADER_LEVEL: return "HEADER";
    default: return "?";
  }
}

}  // namespace

RocksDbLog::RocksDbLog(const std::string& path, uint64_t rotate_bytes)
    : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) > rotate_bytes) {
    (void)::rename(path.c_str(), (path + ".old").c_str());
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

RocksDbLog::~RocksDbLog() { (void)CloseImpl(); }

rocksdb::Status RocksDbLog::CloseImpl() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  return rocksdb::Status::OK();
}

void RocksDbLog::Logv(const char* format, va_list ap) {
  Write(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
}

void RocksDbLog::Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) {
  if (level < GetInfoLogLevel()) return;
  Write(level, format, ap);
}

void RocksDbLog::Write(rocksdb::InfoLogLevel level, const char* format, va_list ap) {
  char line[4096];
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1'000'000;
  std::tm tm;
  gmtime_r(&seconds, &tm);
  int n = std::snprintf(line, sizeof line, "%04d/%02d/%02d-%02d:%02d:%02d.%06lld [%s] ",
                        tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                        tm.tm_sec, static_cast<long long>(micros), LevelName(level));
  const size_t head = static_cast<size_t>(n);
  va_list copy;
  va_copy(copy, ap);
  n = std::vsnprintf(line + head, sizeof line - head - 1, format, copy);
  va_end(copy);
  size_t size = head + (n < 0 ? 0 : std::min<size_t>(static_cast<size_t>(n), sizeof line - head - 2));
  if (size > 0 && line[size - 1] != '\n') line[size++] = '\n';
  if (level >= rocksdb::InfoLogLevel::WARN_LEVEL && level != rocksdb::InfoLogLevel::HEADER_LEVEL) {
    Log("rocksdb: " + std::string(line + head, size - head - 1));
  }
  if (fd_ < 0 || ::write(fd_, line, size) != static_cast<ssize_t>(size)) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace trailmap::aggregator
