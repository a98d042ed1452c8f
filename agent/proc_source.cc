#include "agent/proc_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "agent/proc_source_state.h"
#include "core/boundary.h"
#include "core/clock.h"
#include "core/log.h"

namespace trailmap {
namespace {

struct MetricInfo {
  const char* metric;
  MetricKind kind;
  const char* unit;
  const char* description;
};

// The table in the header, as SeriesDefs (descriptions travel to the aggregator's catalog).
constexpr MetricInfo kMetrics[] = {
    {"cpu.usage", MetricKind::kScalar, "%",
     "share of all CPUs' time spent in each mode (/proc/stat)"},
    {"cpu.process.usage", MetricKind::kScalar, "%",
     "CPU time of the processes of one name, % of one CPU"},
    {"cpu.runq.latency", MetricKind::kLatency, "ns",
     "run-queue wait per timeslice, per process name (/proc/PID/schedstat)"},
    {"cpu.host.runq.latency", MetricKind::kLatency, "ns",
     "run-queue wait per timeslice, whole host (/proc/schedstat)"},
    {"mem.rss", MetricKind::kScalar, "B", "resident memory of the processes of one name"},
    {"mem.rss.total", MetricKind::kScalar, "B", "resident memory summed over every process"},
    {"mem.virtual", MetricKind::kScalar, "B",
     "virtual memory reserved by the processes of one name"},
    {"mem.limit", MetricKind::kScalar, "B", "the agent's cgroup memory limit (max RSS)"},
    {"mem.pgmajfault", MetricKind::kScalar, "pages/s",
     "major page faults: pages paged in (/proc/vmstat)"},
    {"mem.pgscan", MetricKind::kScalar, "pages/s", "pages scanned for reclaim (/proc/vmstat)"},
    {"mem.pgsteal", MetricKind::kScalar, "pages/s", "pages reclaimed (/proc/vmstat)"},
    {"net.rx.bytes", MetricKind::kScalar, "B/s", "bytes received per interface (/proc/net/dev)"},
    {"net.tx.bytes", MetricKind::kScalar, "B/s", "bytes sent per interface (/proc/net/dev)"},
    {"net.rx.packets", MetricKind::kScalar, "packets/s", "packets received per interface"},
    {"net.tx.packets", MetricKind::kScalar, "packets/s", "packets sent per interface"},
    {"fs.process.reads", MetricKind::kScalar, "ops/s",
     "read syscalls of the processes of one name (/proc/PID/io)"},
    {"fs.process.writes", MetricKind::kScalar, "ops/s",
     "write syscalls of the processes of one name"},
    {"fs.process.read_bytes", MetricKind::kScalar, "B/s",
     "bytes read by the processes of one name (rchar)"},
    {"fs.process.write_bytes", MetricKind::kScalar, "B/s",
     "bytes written by the processes of one name (wchar)"},
    {"fs.size", MetricKind::kScalar, "B", "size of each mounted filesystem (statvfs)"},
    {"fs.used", MetricKind::kScalar, "B", "space used on each mounted filesystem"},
    {"fs.free", MetricKind::kScalar, "B", "space free on each mounted filesystem"},
    {"fs.avail", MetricKind::kScalar, "B", "space available to non-root users (quota) per mount"},
    {"disk.reads", MetricKind::kScalar, "ops/s", "reads completed per disk (/proc/diskstats)"},
    {"disk.writes", MetricKind::kScalar, "ops/s", "writes completed per disk"},
    {"disk.read_bytes", MetricKind::kScalar, "B/s", "bytes read per disk"},
    {"disk.write_bytes", MetricKind::kScalar, "B/s", "bytes written per disk"},
    {"disk.service_time", MetricKind::kScalar, "ns",
     "average service time per I/O: time busy / ops"},
};

}  // namespace

ProcSource::ProcSource(ProcSourceOptions options, Bucketizer* bucketizer)
    : options_(std::move(options)),
      bucketizer_(bucketizer),
      prev_(std::make_unique<Prev>()),
      page_size_(sysconf(_SC_PAGESIZE)),
      ticks_per_second_(sysconf(_SC_CLK_TCK)) {
  for (const MetricInfo& m : kMetrics) {
    defs_.emplace(m.metric, SeriesDef{m.metric, m.kind, m.unit, "", m.description});
  }
  buf_.reserve(4096);
}

ProcSource::~ProcSource() { Stop(); }

void ProcSource::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });  // joined by Stop(), before `this` goes away
}

void ProcSource::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

ProcCounters ProcSource::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

void ProcSource::Loop() {
  using namespace std::chrono;
  const int64_t interval = options_.interval.count();
  const int64_t offset = std::min<int64_t>(options_.sample_offset.count(), interval - 1);
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const int64_t now_ms = UnixMillisNow();
    int64_t at = (now_ms / interval + 1) * interval - offset;
    if (at - now_ms < 10) at += interval;  // just ran this interval's pass
    wake_.wait_until(lock, system_clock::time_point(milliseconds(at)),
                     [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    const int64_t second = UnixSecondsNow();
    // A bug: logged and counted, and the agent's other sources (and the next pass) run on.
    std::atomic<uint64_t> failed{0};
    CatchAtBoundary("proc: pass failed", &failed,
                    [this, second] { Collect(second, steady_clock::now()); });
    lock.lock();
    counters_.thread_failures += failed.load();
  }
}

void ProcSource::Emit(const char* metric, std::string_view fields, double value, int64_t second) {
  SeriesDef& def = defs_.at(metric);
  def.fields.assign(fields);
  if (def.kind == MetricKind::kScalar) bucketizer_->SetScalar(second, def, value);
}

void ProcSource::EmitLatency(const char* metric, std::string_view fields, uint64_t value,
                             uint64_t count, int64_t second) {
  SeriesDef& def = defs_.at(metric);
  def.fields.assign(fields);
  bucketizer_->Add(second, def, value, count);
}

void ProcSource::ParseError(const Status& status) {
  if (prev_->parse_errors++ < options_.log_first_errors) Log("proc: " + status.message());
}

void ProcSource::Unavailable(const std::string& what) {
  Prev& p = *prev_;
  if (std::find(p.logged.begin(), p.logged.end(), what) != p.logged.end()) return;
  p.logged.push_back(what);
  Log("proc: " + what);
}

// Reads all of `fd` from offset 0 into buf_ (procfs regenerates the text on each read from 0);
// 0 or the errno.
int ProcSource::ReadFd(int fd) {
  buf_.clear();
  while (true) {
    const size_t used = buf_.size();
    if (buf_.capacity() - used < 1024) buf_.reserve(buf_.capacity() * 2);
    buf_.resize(buf_.capacity());
    const ssize_t n = pread(fd, buf_.data() + used, buf_.size() - used, static_cast<off_t>(used));
    if (n <= 0) {
      buf_.resize(used);
      return n < 0 ? errno : 0;
    }
    const bool short_read = static_cast<size_t>(n) < buf_.size() - used;
    buf_.resize(used + static_cast<size_t>(n));
    // A short read is the end: procfs hands over all the text it has in one read when the buffer
    // is big enough, and asking again at a later offset would make it generate the text again.
    if (short_read) return 0;
  }
}

bool ProcSource::ReadKept(int* fd, int dirfd, const char* path, bool count_missing) {
  int& error = last_error_;
  error = 0;
  for (bool fresh = false; !fresh;) {
    if (*fd < 0) {
      *fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
      fresh = true;
      if (*fd < 0) {
        error = errno;
        break;
      }
    }
    error = ReadFd(*fd);
    opened_ = fresh;
    if (error == 0) return true;
    close(*fd);
    *fd = -1;
    // ESRCH on a descriptor kept from an earlier pass: that process is gone, and the pid may
    // now be another one's: open again. Any other error, or on a fresh descriptor: give up.
    if (error != ESRCH) break;
  }
  if (error == ENOENT || error == ESRCH) {
    if (count_missing) ++prev_->vanished;
  } else {
    ++prev_->unreadable;
    if (prev_->unreadable <= options_.log_first_errors) {
      Log("proc: " + options_.root + "/" + path + ": " + std::strerror(error) +
          " (skipped; the first few are logged)");
    }
    if (error == EMFILE || error == ENFILE) {
      Unavailable("out of file descriptors for /proc/PID files (" +
                  std::string(std::strerror(error)) +
                  "); processes are skipped: raise RLIMIT_NOFILE");
    }
  }
  return false;
}

bool ProcSource::ReadRoot(const std::string& path, bool* missing) {
  const std::string full = path.front() == '/' ? path : options_.root + "/" + path;
  buf_.clear();
  const int fd = open(full.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (missing != nullptr) {
      *missing = true;
      return false;
    }
    ++prev_->unreadable;
    Unavailable(full + ": " + std::strerror(errno) + " (skipped)");
    return false;
  }
  char chunk[4096];
  ssize_t n;
  while ((n = read(fd, chunk, sizeof chunk)) > 0) buf_.append(chunk, static_cast<size_t>(n));
  close(fd);
  return true;
}

void ProcSource::Collect(int64_t second, std::chrono::steady_clock::time_point now) {
  const auto started = std::chrono::steady_clock::now();
  Prev& p = *prev_;
  ++p.pass;
  const double dt =
      p.have_time ? std::chrono::duration<double>(now - p.time).count() : 0;  // 0: no rates
  CollectHost(second, dt > 0 ? dt : 0);
  if (options_.per_process) CollectProcesses(second, dt > 0 ? dt : 0);
  CollectMounts(second);
  CollectMemoryLimit(second);
  p.time = now;
  p.have_time = true;

  std::lock_guard<std::mutex> lock(mu_);
  counters_.passes = p.pass;
  counters_.processes = p.processes;
  counters_.vanished = p.vanished;
  counters_.unreadable = p.unreadable;
  counters_.parse_errors = p.parse_errors;
  counters_.resets = p.resets;
  counters_.last_pass_us =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::steady_clock::now() - started)
                                .count());
}

}  // namespace trailmap
