// ProcSource: this host's own metrics, read from /proc (and the cgroup filesystem) once per
// interval and handed to the Bucketizer, on by default in trailmap-agent.
//
// Every metric, its kind, unit and fields (execname is the process name from /proc/PID/stat,
// made field-safe by procfs::FieldSafeName; processes of one name are summed):
//
//   metric                  kind     unit       fields     what, from where
//   cpu.usage               scalar   %          mode       share of all CPUs' time in each mode
//                                                          (user nice system idle iowait irq
//                                                          softirq steal; sums to 100), /proc/stat
//   cpu.process.usage       scalar   %          execname   utime+stime as % of ONE CPU (a busy
//                                                          two-thread process shows 200)
//   cpu.runq.latency        latency  ns         execname   run-queue wait per timeslice of the
//                                                          thread-group leader, recorded as
//                                                          wait/timeslices with count=timeslices,
//                                                          /proc/PID/schedstat
//   cpu.host.runq.latency   latency  ns         -          the same for the whole host,
//                                                          /proc/schedstat (absent on kernels
//                                                          without CONFIG_SCHEDSTATS: logged once)
//   mem.rss                 scalar   B          execname   resident set (pages x page size)
//   mem.rss.total           scalar   B          -          sum of every process's RSS (shared
//                                                          pages count once per process)
//   mem.virtual             scalar   B          execname   virtual memory reserved (vsize)
//   mem.limit               scalar   B          -          the agent's cgroup memory limit
//                                                          (v2 memory.max, v1
//                                                          memory.limit_in_bytes); only if set
//   mem.pgmajfault          scalar   pages/s    -          major faults (pages paged in), vmstat
//   mem.pgscan, mem.pgsteal scalar   pages/s    -          pages scanned / reclaimed, vmstat
//   net.rx.bytes, .tx.bytes scalar   B/s        interface  /proc/net/dev
//   net.rx.packets, .tx.packets      packets/s  interface
//   fs.process.reads        scalar   ops/s      execname   read syscalls (syscr), /proc/PID/io
//   fs.process.writes       scalar   ops/s      execname   write syscalls (syscw)
//   fs.process.read_bytes   scalar   B/s        execname   logical bytes read (rchar)
//   fs.process.write_bytes  scalar   B/s        execname   logical bytes written (wchar)
//   fs.size, fs.used,       scalar   B          mount      statvfs of every real mount in
//   fs.free, fs.avail                                      /proc/self/mounts (pseudo filesystems
//                                                          skipped); avail = free to non-root
//   disk.reads, disk.writes scalar   ops/s      device     /proc/diskstats, whole disks only
//   disk.read_bytes, .write_bytes    B/s        device     (no partitions, loop or ram devices)
//   disk.service_time       scalar   ns         device     time busy / ops completed, in a
//                                                          second with at least one op
//
// The per-name rates (cpu.process.usage, fs.process.*) are sent only when not 0 (most names
// are idle most seconds, and every series costs an entry in each batch's table): for these an
// absent value means 0. Everything else is sent every pass, zeros included.
//
// Counters become per-second rates from deltas over the time between two passes (steady
// clock), so the first pass yields gauges only. A counter that goes backwards (a reset, a wrap,
// an interface re-created) yields nothing for that pass and counts in `resets`. A pid whose
// start time changed is a new process. A process that exits between the listing and the read
// (ENOENT/ESRCH) is normal: counted in `vanished`, not an error; a file that cannot be read for
// another reason (EACCES on /proc/PID/io of another user) is skipped and counted in
// `unreadable`; a file that does not parse is counted in `parse_errors` and logged (the first
// few). Per-process metrics start with a process's second pass.
//
// Process names are bounded: with more than `max_process_names` distinct names in a pass, the
// busiest (CPU, then RSS) keep their name and the rest are summed into execname=(other).
//
// Cost: one pass over /proc per interval. Each process's stat, schedstat and io files stay open
// between passes and are re-read with pread from offset 0: opening a /proc file costs more than
// generating its text (measured 5-6 us against 0.7-4 us), so the source holds 3 descriptors per
// process (main() raises RLIMIT_NOFILE; out of descriptors, processes are skipped, counted and
// logged once). Each pass reads a process's schedstat first (0.7 us): when a single-threaded
// process's run time did not move, it did not run, and its stat (4 us: the kernel sums every
// thread's CPU time) and io are not read; its last RSS, virtual size and name stand, and CPU 0.
// Every process is read in full at least every 8th pass (staggered by pid), so a sleeper's RSS
// (which reclaim can shrink) is at most 8 s old, and the cumulative io and run-queue counters
// lose nothing: what a sleeper gained shows up in a later second. A multi-threaded process is
// read in full every pass (its leader's schedstat does not see the other threads run).
// Buffers and per-pid state are reused.
//
// Threading: Start() runs passes on its own thread, each at `sample_offset` before an interval
// boundary and attributed to the second it ends in; Stop() (or the destructor) joins it.
// Collect() runs one pass on the caller's thread (tests, the benchmark); do not mix the two.
// counters() may be called from any thread. The bucketizer must outlive the source.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "agent/procfs.h"
#include "ingest/bucketizer.h"

namespace trailmap {

struct ProcSourceOptions {
  std::string root = "/proc";                  // where stat, PID/..., net/dev ... are read
  std::string cgroup_root = "/sys/fs/cgroup";  // where the memory limit is looked for
  std::chrono::milliseconds interval{1000};    // between passes; 1000..3600000 in the config
  bool per_process = true;                     // false: host-wide metrics only (no PID files)
  size_t max_process_names = 200;              // beyond: summed into execname=(other)
  // A pass runs this long before each interval boundary, so a pass measures (almost exactly)
  // the second it is attributed to, and that second is complete when the agent ships it.
  std::chrono::milliseconds sample_offset{100};
  uint64_t log_first_errors = 5;  // parse errors and unavailable files logged
};

struct ProcCounters {
  uint64_t passes = 0;
  uint64_t processes = 0;        // processes read in the last pass
  uint64_t vanished = 0;         // exited between listing and reading
  uint64_t unreadable = 0;       // files skipped for a reason other than the process exiting
  uint64_t parse_errors = 0;     // files that did not parse
  uint64_t resets = 0;           // counters that went backwards
  uint64_t last_pass_us = 0;     // wall time of the last pass
  uint64_t thread_failures = 0;  // passes that failed unexpectedly (logged; the next one runs)
};

class ProcSource {
 public:
  ProcSource(ProcSourceOptions options, Bucketizer* bucketizer);
  ~ProcSource();  // Stop()
  ProcSource(const ProcSource&) = delete;
  ProcSource& operator=(const ProcSource&) = delete;

  void Start();
  void Stop();

  // One pass now: gauges and the rates since the previous pass, recorded at `second`.
  void Collect(int64_t second, std::chrono::steady_clock::time_point now);
  ProcCounters counters() const;

 private:
  struct Prev;     // the counters of the previous pass, per host, device and pid
  struct PerName;  // one process name's sums within a pass
  void CollectHost(int64_t second, double dt);
  void CollectProcesses(int64_t second, double dt);
  void CollectMounts(int64_t second);
  void CollectMemoryLimit(int64_t second);
  // Reads root/`path` (or dirfd-relative) into buf_; false (counted) if it cannot.
  bool ReadRoot(const std::string& path, bool* missing = nullptr);
  // Reads dirfd-relative `path` through *fd, kept open between passes (opened when -1, closed
  // and set to -1 when the process is gone); false (counted) if it cannot.
  // `count_missing`: count ENOENT/ESRCH as a vanished process (false when another file of the
  // same process decides that).
  bool ReadKept(int* fd, int dirfd, const char* path, bool count_missing = true);
  int ReadFd(int fd);
  void ParseError(const Status& status);
  void Unavailable(const std::string& what);
  void Emit(const char* metric, std::string_view fields, double value, int64_t second);
  void EmitLatency(const char* metric, std::string_view fields, uint64_t value, uint64_t count,
                   int64_t second);
  void EmitNames(int64_t second);  // the per-name sums of the pass, bounded
  void Loop();

  const ProcSourceOptions options_;
  Bucketizer* const bucketizer_;
  std::unique_ptr<Prev> prev_;
  std::string buf_;      // the file being parsed
  std::string fields_;   // scratch: a canonical field set
  std::string name_;     // scratch: a process name
  int last_error_ = 0;   // errno of the last ReadKept that failed
  bool opened_ = false;  // the last ReadKept opened its file (rather than re-reading it)
  // metric (the static names in proc_source.cc) -> its SeriesDef, whose fields are reused.
  std::unordered_map<std::string_view, SeriesDef> defs_;
  long page_size_, ticks_per_second_;

  mutable std::mutex mu_;
  ProcCounters counters_;  // guarded by mu_ for readers; written by the pass thread
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace trailmap
