// ProcSource's state between passes (agent/proc_source.h): private to proc_source.cc and
// proc_collect.cc.
#pragma once

#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "agent/proc_source.h"
#include "agent/procfs.h"

namespace trailmap {

// One process name's sums within a pass; `pass` says which pass they belong to, so entries
// (and the capacity of `runq`) are reused from pass to pass.
struct ProcSource::PerName {
  uint64_t pass = 0;  // the pass these sums belong to
  bool has_cpu = false, has_io = false;
  double cpu_pct = 0;
  uint64_t rss = 0, vsize = 0;
  double reads = 0, writes = 0, read_bytes = 0, write_bytes = 0;
  std::vector<std::pair<uint64_t, uint64_t>> runq;  // (wait per timeslice, timeslices)

  void Reset(uint64_t p) {
    pass = p;
    has_cpu = has_io = false;
    cpu_pct = reads = writes = read_bytes = write_bytes = 0;
    rss = vsize = 0;
    runq.clear();  // keeps its capacity
  }
  void AddFrom(const PerName& o) {
    has_cpu |= o.has_cpu;
    has_io |= o.has_io;
    cpu_pct += o.cpu_pct;
    rss += o.rss;
    vsize += o.vsize;
    reads += o.reads;
    writes += o.writes;
    read_bytes += o.read_bytes;
    write_bytes += o.write_bytes;
    runq.insert(runq.end(), o.runq.begin(), o.runq.end());
  }
};

// The counters of the previous pass (host, devices, pids) and what the source has learnt.
struct ProcSource::Prev {
  uint64_t pass = 0;
  bool have_time = false;
  std::chrono::steady_clock::time_point time;
  std::optional<procfs::CpuTimes> cpu;
  std::optional<procfs::SchedStat> sched;
  std::optional<procfs::VmStat> vm;
  std::unordered_map<std::string, procfs::NetDevice> net;
  std::unordered_map<std::string, procfs::DiskStat> disks;
  struct Proc {
    uint64_t pass = 0, starttime = 0, cpu_ticks = 0;
    bool have_sched = false, have_io = false;
    bool io_denied = false;  // PID/io said EACCES once: not asked again (counted once)
    procfs::SchedStat sched;
    procfs::PidIo io;
    int fds[3] = {-1, -1, -1};  // PID/stat, PID/schedstat, PID/io, kept open; closed by Forget
    // From the last full read, for the passes that skip it (a single-threaded sleeper).
    uint64_t threads = 0, rss = 0, vsize = 0;
    std::string name;
  };
  std::unordered_map<int, Proc> procs;
  std::unordered_map<std::string, PerName> names;
  bool no_host_schedstat = false;   // /proc/schedstat is absent: not tried again
  bool no_pid_schedstat = false;    // /proc/PID/schedstat is absent: not tried again
  std::vector<std::string> logged;  // unavailable things already logged once
  // Scratch of EmitNames, kept for its capacity.
  std::vector<std::pair<const std::string*, PerName*>> active;
  PerName other;
  uint64_t resets = 0, vanished = 0, unreadable = 0, parse_errors = 0, processes = 0;

  static void Forget(Proc* proc) {
    for (int& fd : proc->fds) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
  }
  ~Prev() {
    for (auto& [pid, proc] : procs) Forget(&proc);
  }
};

}  // namespace trailmap
