// The passes of ProcSource (agent/proc_source.h): the host's files, every process, the mounts
// and the cgroup memory limit. Kept apart from the thread and file plumbing in proc_source.cc.
#include <dirent.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "agent/proc_source.h"
#include "agent/proc_source_state.h"

namespace trailmap {
namespace {

constexpr uint64_t kRefreshPasses = 8;

constexpr const char* kModes[] = {"user",   "nice", "system",  "idle",
                                  "iowait", "irq",  "softirq", "steal"};

bool IsPid(const char* name) {
  if (*name == '\0') return false;
  for (const char* p = name; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
  }
  return true;
}

// (cur - prev) / dt into *rate; false, and one more reset counted, when the counter went back.
bool Rate(uint64_t cur, uint64_t prev, double dt, uint64_t* resets, double* rate) {
  if (cur < prev) {
    ++*resets;
    return false;
  }
  *rate = static_cast<double>(cur - prev) / dt;
  return true;
}

}  // namespace

void ProcSource::CollectHost(int64_t second, double dt) {
  Prev& p = *prev_;
  if (ReadRoot("stat")) {
    Result<procfs::CpuTimes> cpu = procfs::ParseProcStat(buf_);
    if (!cpu.ok()) {
      ParseError(cpu.status());
    } else {
      if (p.cpu) {
        const procfs::CpuTimes& a = *p.cpu;
        const procfs::CpuTimes& b = *cpu;
        const uint64_t before[] = {a.user,   a.nice, a.system,  a.idle,
                                   a.iowait, a.irq,  a.softirq, a.steal};
        const uint64_t after[] = {b.user,   b.nice, b.system,  b.idle,
                                  b.iowait, b.irq,  b.softirq, b.steal};
        uint64_t total = 0;
        bool back = false;
        for (size_t i = 0; i < 8; ++i) {
          back |= after[i] < before[i];
          if (!back) total += after[i] - before[i];
        }
        if (back) {
          ++p.resets;
        } else if (total > 0) {
          for (size_t i = 0; i < 8; ++i) {
            fields_.assign("mode=").append(kModes[i]);
            Emit("cpu.usage", fields_,
                 100.0 * static_cast<double>(after[i] - before[i]) / static_cast<double>(total),
                 second);
          }
        }
      }
      p.cpu = *cpu;
    }
  }
  if (!p.no_host_schedstat) {
    bool missing = false;
    if (ReadRoot("schedstat", &missing)) {
      Result<procfs::SchedStat> s = procfs::ParseHostSchedstat(buf_);
      if (!s.ok()) {
        ParseError(s.status());
      } else {
        if (p.sched && s->timeslices >= p.sched->timeslices && s->wait_ns >= p.sched->wait_ns) {
          const uint64_t slices = s->timeslices - p.sched->timeslices;
          if (slices > 0) {
            EmitLatency("cpu.host.runq.latency", "", (s->wait_ns - p.sched->wait_ns) / slices,
                        slices, second);
          }
        } else if (p.sched) {
          ++p.resets;
        }
        p.sched = *s;
      }
    } else if (missing) {
      p.no_host_schedstat = true;
      Unavailable(options_.root +
                  "/schedstat: absent (a kernel without CONFIG_SCHEDSTATS); "
                  "cpu.host.runq.latency is off");
    }
  }
  if (ReadRoot("vmstat")) {
    Result<procfs::VmStat> vm = procfs::ParseVmstat(buf_);
    if (!vm.ok()) {
      ParseError(vm.status());
    } else {
      double r = 0;
      if (p.vm && dt > 0) {
        if (Rate(vm->pgmajfault, p.vm->pgmajfault, dt, &p.resets, &r))
          Emit("mem.pgmajfault", "", r, second);
        if (Rate(vm->pgscan, p.vm->pgscan, dt, &p.resets, &r)) Emit("mem.pgscan", "", r, second);
        if (Rate(vm->pgsteal, p.vm->pgsteal, dt, &p.resets, &r)) Emit("mem.pgsteal", "", r, second);
      }
      p.vm = *vm;
    }
  }
  if (ReadRoot("net/dev")) {
    Result<std::vector<procfs::NetDevice>> devices = procfs::ParseNetDev(buf_);
    if (!devices.ok()) {
      ParseError(devices.status());
    } else {
      for (const procfs::NetDevice& d : *devices) {
        auto [it, added] = p.net.try_emplace(d.name, d);
        if (!added && dt > 0) {
          const procfs::NetDevice& o = it->second;
          fields_.assign("interface=").append(procfs::FieldSafeName(d.name));
          double r = 0;
          if (Rate(d.rx_bytes, o.rx_bytes, dt, &p.resets, &r))
            Emit("net.rx.bytes", fields_, r, second);
          if (Rate(d.tx_bytes, o.tx_bytes, dt, &p.resets, &r))
            Emit("net.tx.bytes", fields_, r, second);
          if (Rate(d.rx_packets, o.rx_packets, dt, &p.resets, &r))
            Emit("net.rx.packets", fields_, r, second);
          if (Rate(d.tx_packets, o.tx_packets, dt, &p.resets, &r))
            Emit("net.tx.packets", fields_, r, second);
        }
        it->second = d;
      }
    }
  }
  if (ReadRoot("diskstats")) {
    Result<std::vector<procfs::DiskStat>> disks = procfs::ParseDiskstats(buf_);
    if (!disks.ok()) {
      ParseError(disks.status());
    } else {
      for (const procfs::DiskStat& d : *disks) {
        if (!procfs::IsWholeDisk(d.name, *disks)) continue;
        auto [it, added] = p.disks.try_emplace(d.name, d);
        if (!added && dt > 0) {
          const procfs::DiskStat& o = it->second;
          fields_.assign("device=").append(procfs::FieldSafeName(d.name));
          double r = 0;
          if (Rate(d.reads, o.reads, dt, &p.resets, &r)) Emit("disk.reads", fields_, r, second);
          if (Rate(d.writes, o.writes, dt, &p.resets, &r)) Emit("disk.writes", fields_, r, second);
          if (Rate(d.read_sectors, o.read_sectors, dt, &p.resets, &r))
            Emit("disk.read_bytes", fields_, r * 512, second);
          if (Rate(d.write_sectors, o.write_sectors, dt, &p.resets, &r))
            Emit("disk.write_bytes", fields_, r * 512, second);
          if (d.reads + d.writes > o.reads + o.writes && d.io_ticks_ms >= o.io_ticks_ms) {
            Emit("disk.service_time", fields_,
                 1e6 * static_cast<double>(d.io_ticks_ms - o.io_ticks_ms) /
                     static_cast<double>(d.reads + d.writes - o.reads - o.writes),
                 second);
          }
        }
        it->second = d;
      }
    }
  }
}

void ProcSource::CollectProcesses(int64_t second, double dt) {
  Prev& p = *prev_;
  DIR* dir = opendir(options_.root.c_str());
  if (dir == nullptr) {
    ++p.unreadable;
    Unavailable(options_.root + ": cannot list processes (skipped)");
    return;
  }
  const int dfd = dirfd(dir);
  const double tps = static_cast<double>(ticks_per_second_);
  char path[300];  // a d_name is at most 255 bytes
  uint64_t processes = 0, rss_total = 0;
  while (const dirent* entry = readdir(dir)) {
    if (!IsPid(entry->d_name)) continue;
    const uint64_t pid = std::strtoull(entry->d_name, nullptr, 10);
    Prev::Proc& proc = p.procs[static_cast<int>(pid)];
    const bool full = (pid + p.pass) % kRefreshPasses == 0;  // this pass reads it in full

    // 1. schedstat: cheap, and it says whether the (leader) thread ran since the last pass.
    std::optional<procfs::SchedStat> sched;
    bool sched_reopened = true;
    int sched_error = 0;
    if (!p.no_pid_schedstat) {
      std::snprintf(path, sizeof path, "%s/schedstat", entry->d_name);
      if (!ReadKept(&proc.fds[1], dfd, path, /*count_missing=*/false)) {
        sched_error = last_error_;
      } else {
        sched_reopened = opened_;
        Result<procfs::SchedStat> s = procfs::ParsePidSchedstat(buf_);
        if (s.ok()) {
          sched = *s;
        } else {
          ParseError(Status::InvalidArgument("pid " + std::string(entry->d_name) + ": " +
                                             s.status().message()));
        }
      }
    }
    if (proc.pass != 0 && proc.threads == 1 && !full && sched && !sched_reopened &&
        proc.have_sched && sched->run_ns == proc.sched.run_ns) {
      // A single-threaded process that did not run: its last full read stands, CPU 0.
      proc.pass = p.pass;
      ++processes;
      PerName& n = p.names[proc.name];
      if (n.pass != p.pass) n.Reset(p.pass);
      n.rss += proc.rss;
      n.vsize += proc.vsize;
      rss_total += proc.rss;
      n.has_cpu = true;
      n.has_io |= proc.have_io;
      continue;
    }

    // 2. stat: name, CPU time of all threads, memory.
    std::snprintf(path, sizeof path, "%s/stat", entry->d_name);
    if (!ReadKept(&proc.fds[0], dfd, path)) continue;  // gone: the entry is forgotten below
    Result<procfs::PidStat> st = procfs::ParsePidStat(buf_);
    if (!st.ok()) {
      ParseError(Status::InvalidArgument("pid " + std::string(entry->d_name) + ": " +
                                         st.status().message()));
      continue;
    }
    if (sched_error == ENOENT && !p.no_pid_schedstat) {
      p.no_pid_schedstat = true;  // stat is there, schedstat is not: CONFIG_SCHED_INFO off
      Unavailable(options_.root + "/PID/schedstat: absent; cpu.runq.latency is off");
    }
    ++processes;
    const bool known = proc.pass != 0 && proc.starttime == st->starttime;
    if (!known) {  // a new process (or a new one with a reused pid): no deltas yet
      int fds[3] = {proc.fds[0], proc.fds[1], proc.fds[2]};
      proc = Prev::Proc{0, st->starttime};
      std::copy(fds, fds + 3, proc.fds);
    }
    proc.pass = p.pass;
    proc.name.assign(procfs::FieldSafeName(st->comm));
    PerName& n = p.names[proc.name];
    if (n.pass != p.pass) n.Reset(p.pass);
    proc.threads = st->num_threads;
    proc.rss = st->rss_pages * static_cast<uint64_t>(page_size_);
    proc.vsize = st->vsize;
    n.rss += proc.rss;
    n.vsize += proc.vsize;
    rss_total += proc.rss;
    const uint64_t ticks = st->utime + st->stime;
    double r = 0;
    if (known && dt > 0 && Rate(ticks, proc.cpu_ticks, dt, &p.resets, &r)) {
      n.cpu_pct += 100.0 * r / tps;
      n.has_cpu = true;
    }
    const bool ran = !known || ticks != proc.cpu_ticks;
    proc.cpu_ticks = ticks;

    // 3. Run-queue wait since the last read of schedstat.
    if (sched) {
      if (known && proc.have_sched && sched->timeslices > proc.sched.timeslices &&
          sched->wait_ns >= proc.sched.wait_ns) {
        const uint64_t slices = sched->timeslices - proc.sched.timeslices;
        n.runq.emplace_back((sched->wait_ns - proc.sched.wait_ns) / slices, slices);
      }
      proc.sched = *sched;
      proc.have_sched = true;
    }

    // 4. io, when the process ran (its counters are cumulative; see the header).
    if (proc.io_denied) continue;
    if (!ran && proc.have_io && !full) {
      n.has_io = true;  // it did not run: 0 this second (anything pending shows later)
      continue;
    }
    std::snprintf(path, sizeof path, "%s/io", entry->d_name);
    if (!ReadKept(&proc.fds[2], dfd, path)) {
      proc.io_denied = last_error_ == EACCES || last_error_ == EPERM;
      continue;
    }
    Result<procfs::PidIo> io = procfs::ParsePidIo(buf_);
    if (!io.ok()) {
      ParseError(Status::InvalidArgument("pid " + std::string(entry->d_name) + ": " +
                                         io.status().message()));
      continue;
    }
    if (known && proc.have_io && dt > 0) {
      const procfs::PidIo& o = proc.io;
      double rr = 0, wr = 0, rb = 0, wb = 0;
      if (Rate(io->syscr, o.syscr, dt, &p.resets, &rr) &&
          Rate(io->syscw, o.syscw, dt, &p.resets, &wr) &&
          Rate(io->rchar, o.rchar, dt, &p.resets, &rb) &&
          Rate(io->wchar, o.wchar, dt, &p.resets, &wb)) {
        n.reads += rr;
        n.writes += wr;
        n.read_bytes += rb;
        n.write_bytes += wb;
        n.has_io = true;
      }
    }
    proc.io = *io;
    proc.have_io = true;
  }
  closedir(dir);
  for (auto it = p.procs.begin(); it != p.procs.end();) {  // forget the pids that are gone
    if (it->second.pass == p.pass) {
      ++it;
    } else {
      Prev::Forget(&it->second);
      it = p.procs.erase(it);
    }
  }
  p.processes = processes;
  Emit("mem.rss.total", "", static_cast<double>(rss_total), second);
  EmitNames(second);
}

void ProcSource::EmitNames(int64_t second) {
  Prev& p = *prev_;
  std::vector<std::pair<const std::string*, PerName*>>& active = p.active;
  active.clear();
  for (auto& [name, n] : p.names) {
    if (n.pass == p.pass) active.emplace_back(&name, &n);
  }
  PerName& other = p.other;
  other.Reset(p.pass);
  bool folded = false;
  if (active.size() > options_.max_process_names) {
    auto busier = [](const std::pair<const std::string*, PerName*>& a,
                     const std::pair<const std::string*, PerName*>& b) {
      if (a.second->cpu_pct != b.second->cpu_pct) return a.second->cpu_pct > b.second->cpu_pct;
      return a.second->rss > b.second->rss;
    };
    std::nth_element(active.begin(), active.begin() + options_.max_process_names, active.end(),
                     busier);
    for (size_t i = options_.max_process_names; i < active.size(); ++i) {
      other.AddFrom(*active[i].second);
    }
    active.resize(options_.max_process_names);
    folded = true;
  }
  static const std::string kOther = "(other)";
  if (folded) active.emplace_back(&kOther, &other);
  for (const auto& [name, n] : active) {
    fields_.assign("execname=").append(*name);
    Emit("mem.rss", fields_, static_cast<double>(n->rss), second);
    Emit("mem.virtual", fields_, static_cast<double>(n->vsize), second);
    // Per-name rates of 0 are not sent: most names are idle most seconds, and each series
    // costs its table entry in every batch. An absent value of these metrics means 0.
    if (n->has_cpu && n->cpu_pct > 0) Emit("cpu.process.usage", fields_, n->cpu_pct, second);
    if (n->has_io) {
      if (n->reads > 0) Emit("fs.process.reads", fields_, n->reads, second);
      if (n->writes > 0) Emit("fs.process.writes", fields_, n->writes, second);
      if (n->read_bytes > 0) Emit("fs.process.read_bytes", fields_, n->read_bytes, second);
      if (n->write_bytes > 0) Emit("fs.process.write_bytes", fields_, n->write_bytes, second);
    }
    for (const auto& [wait, slices] : n->runq) {
      EmitLatency("cpu.runq.latency", fields_, wait, slices, second);
    }
  }
  if (p.pass % 64 == 0) {  // forget names not seen for a minute or so
    for (auto it = p.names.begin(); it != p.names.end();) {
      it = p.pass - it->second.pass > 64 ? p.names.erase(it) : std::next(it);
    }
  }
}

void ProcSource::CollectMounts(int64_t second) {
  if (!ReadRoot("self/mounts")) return;
  Result<std::vector<procfs::Mount>> mounts = procfs::ParseMounts(buf_);
  if (!mounts.ok()) {
    ParseError(mounts.status());
    return;
  }
  std::vector<const std::string*> devices;  // a filesystem mounted twice is counted once
  for (const procfs::Mount& m : *mounts) {
    if (procfs::IsPseudoFilesystem(m.fstype)) continue;
    if (std::any_of(devices.begin(), devices.end(),
                    [&m](const std::string* d) { return *d == m.device; })) {
      continue;
    }
    devices.push_back(&m.device);
    struct statvfs vfs {};
    if (statvfs(m.dir.c_str(), &vfs) != 0) {
      ++prev_->unreadable;
      Unavailable("statvfs " + m.dir + ": " + std::strerror(errno) + " (skipped)");
      continue;
    }
    const double unit = static_cast<double>(vfs.f_frsize);
    fields_.assign("mount=").append(procfs::FieldSafeName(m.dir, 200));
    Emit("fs.size", fields_, unit * static_cast<double>(vfs.f_blocks), second);
    Emit("fs.used", fields_, unit * static_cast<double>(vfs.f_blocks - vfs.f_bfree), second);
    Emit("fs.free", fields_, unit * static_cast<double>(vfs.f_bfree), second);
    Emit("fs.avail", fields_, unit * static_cast<double>(vfs.f_bavail), second);
  }
}

void ProcSource::CollectMemoryLimit(int64_t second) {
  bool missing = false;
  if (!ReadRoot("self/cgroup", &missing)) return;
  const procfs::CgroupPaths paths = procfs::ParseProcCgroup(buf_);
  const std::string& root = options_.cgroup_root;
  const std::string candidates[] = {
      paths.unified.empty() ? "" : root + paths.unified + "/memory.max",
      paths.memory.empty() ? "" : root + "/memory" + paths.memory + "/memory.limit_in_bytes",
      root + "/memory/memory.limit_in_bytes",
      root + "/memory.max",
  };
  for (const std::string& file : candidates) {
    if (file.empty()) continue;
    missing = false;
    if (!ReadRoot(file, &missing)) continue;
    Result<std::optional<uint64_t>> limit = procfs::ParseMemoryLimit(buf_);
    if (!limit.ok()) {
      ParseError(Status::InvalidArgument(file + ": " + limit.status().message()));
    } else if (limit->has_value()) {
      Emit("mem.limit", "", static_cast<double>(**limit), second);
    }
    return;  // the first file that exists decides
  }
}

}  // namespace trailmap
