#include "aggregator/store/store_health.h"

#include <algorithm>
#include <exception>

#include "core/log.h"

namespace trailmap::aggregator {
namespace {

const char* ReasonName(rocksdb::BackgroundErrorReason reason) {
  switch (reason) {
    case rocksdb::BackgroundErrorReason::kFlush:
      return "flush";
    case rocksdb::BackgroundErrorReason::kCompaction:
      return "compaction";
    case rocksdb::BackgroundErrorReason::kWriteCallback:
      return "a write";
    case rocksdb::BackgroundErrorReason::kMemTable:
      return "a memtable";
    case rocksdb::BackgroundErrorReason::kManifestWrite:
      return "a manifest write";
    case rocksdb::BackgroundErrorReason::kFlushNoWAL:
      return "flush";
    case rocksdb::BackgroundErrorReason::kManifestWriteNoWAL:
      return "a manifest write";
  }
  return "the background";
}

}  // namespace

void BackgroundErrors::OnBackgroundError(rocksdb::BackgroundErrorReason reason,
                                         rocksdb::Status* error) {
  try {
    Set(ReasonName(reason), error ? error->ToString() : "unknown");
  } catch (const std::exception& e) {
    // Nothing may cross into RocksDB; the error still shows in every failed write.
  }
}

void BackgroundErrors::OnErrorRecoveryEnd(const rocksdb::BackgroundErrorRecoveryInfo& info) {
  try {
    if (!info.new_bg_error.ok()) return;
    std::lock_guard lock(mu_);
    ClearLocked("by itself");
  } catch (const std::exception& e) {
  }
}

void BackgroundErrors::Set(const std::string& reason, const std::string& error) {
  std::lock_guard lock(mu_);
  ++errors_;
  const bool first = current_.empty();
  current_ = "background error in " + reason + ": " + error;
  if (first) {
    resume_after_ = Clock::time_point{};  // Resume at once
    backoff_ = std::chrono::seconds(1);
    Log("rocksdb: " + current_ + "; writes fail (and are not acked) until it recovers");
  }
}

void BackgroundErrors::ClearLocked(const std::string& how) {
  if (current_.empty()) return;
  Log("rocksdb: recovered " + how + " from the " + current_ + "; writes go on");
  current_.clear();
  ++recoveries_;
}

std::string BackgroundErrors::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

uint64_t BackgroundErrors::errors() const {
  std::lock_guard lock(mu_);
  return errors_;
}

uint64_t BackgroundErrors::recoveries() const {
  std::lock_guard lock(mu_);
  return recoveries_;
}

bool BackgroundErrors::ResumeDue(Clock::time_point now) const {
  std::lock_guard lock(mu_);
  return !current_.empty() && now >= resume_after_;
}

void BackgroundErrors::ResumeDone(const rocksdb::Status& status, Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (status.ok()) {
    ClearLocked("(DB::Resume)");
    return;
  }
  if (backoff_ == std::chrono::seconds(1) || backoff_ == kMaxResumeBackoff) {
    Log("rocksdb: resume failed, retrying in " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(backoff_).count()) +
        " s: " + status.ToString());
  }
  resume_after_ = now + backoff_;
  backoff_ = std::min<Clock::duration>(backoff_ * 2, kMaxResumeBackoff);
}

}  // namespace trailmap::aggregator
