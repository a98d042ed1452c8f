// procfs: pure parsers of the Linux /proc (and cgroup) text the proc source reads.
//
// Each function takes the whole text of one file and returns its numbers, or an InvalidArgument
// naming the file, the line and the field that is wrong ("/proc/stat line 1: field 'steal':
// '12x' is not a number"). A number past 2^64 is an error, never wrapped or clamped. Fields a
// newer kernel appends are ignored; fields an older kernel lacks read as 0 where the layout
// allows it (documented per function).
//
// Pure functions on string_view; no I/O, no state, no allocation beyond the results.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trailmap::procfs {

// /proc/stat "cpu" line: jiffies (USER_HZ) per mode, summed over all CPUs.
struct CpuTimes {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  // guest and guest_nice are already included in user and nice, so they are not kept.
  uint64_t total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
};
// The aggregate "cpu " line of /proc/stat; needs at least user..idle (older kernels stop there).
Result<CpuTimes> ParseProcStat(std::string_view text);

// /proc/PID/stat. `comm` may hold spaces and parentheses ("(a) b)" is the name "a) b"): it runs
// from the first '(' to the LAST ')' of the line.
struct PidStat {
  std::string comm;
  uint64_t utime = 0, stime = 0;  // clock ticks (field 14, 15)
  uint64_t num_threads = 0;       // field 20
  uint64_t starttime = 0;         // clock ticks after boot (field 22): tells a reused pid apart
  uint64_t vsize = 0;             // bytes (field 23)
  uint64_t rss_pages = 0;         // pages (field 24)
};
Result<PidStat> ParsePidStat(std::string_view text);

// /proc/PID/schedstat: "on-cpu ns, run-queue wait ns, timeslices" of the thread-group leader.
struct SchedStat {
  uint64_t run_ns = 0, wait_ns = 0, timeslices = 0;
};
Result<SchedStat> ParsePidSchedstat(std::string_view text);
// /proc/schedstat (version 15+): the "cpuN" lines' run-queue wait (field 8, ns) and timeslices
// (field 9), summed over CPUs. wait_ns and timeslices are set; run_ns is field 7 (rq_cpu_time).
Result<SchedStat> ParseHostSchedstat(std::string_view text);

// /proc/PID/io: logical I/O (through the page cache or not).
struct PidIo {
  uint64_t rchar = 0, wchar = 0, syscr = 0, syscw = 0;
};
Result<PidIo> ParsePidIo(std::string_view text);

// /proc/vmstat page counters. pgscan and pgsteal sum the reclaimers (kswapd, direct,
// khugepaged, proactive), NOT the by-type breakdowns (_anon, _file), which count the same pages
// again. A counter the kernel lacks reads as 0.
struct VmStat {
  uint64_t pgmajfault = 0, pgscan = 0, pgsteal = 0;
};
Result<VmStat> ParseVmstat(std::string_view text);

// /proc/net/dev, one entry per interface.
struct NetDevice {
  std::string name;
  uint64_t rx_bytes = 0, rx_packets = 0, tx_bytes = 0, tx_packets = 0;
};
Result<std::vector<NetDevice>> ParseNetDev(std::string_view text);

// /proc/diskstats, one entry per line (partitions included; see IsWholeDisk).
struct DiskStat {
  std::string name;
  uint64_t reads = 0, read_sectors = 0, writes = 0, write_sectors = 0;  // sectors of 512 B
  uint64_t io_ticks_ms = 0;  // field 13: ms the device had I/O in flight
};
Result<std::vector<DiskStat>> ParseDiskstats(std::string_view text);
// False for loop*, ram*, zram* and for a partition: a name that is another listed device's
// name followed by digits, or by 'p' and digits (sda1 of sda, nvme0n1p2 of nvme0n1).
bool IsWholeDisk(std::string_view name, const std::vector<DiskStat>& all);

// /proc/self/mounts (octal escapes such as "\040" for a space are decoded).
struct Mount {
  std::string device, dir, fstype;
};
Result<std::vector<Mount>> ParseMounts(std::string_view text);
// True for filesystems that hold no user data (proc, sysfs, cgroup, tmpfs, devtmpfs, ...).
bool IsPseudoFilesystem(std::string_view fstype);

// /proc/self/cgroup: the v2 path ("0::/a/b" -> "/a/b") and the v1 memory controller's path
// ("4:memory:/a" -> "/a"); an absent one is "".
struct CgroupPaths {
  std::string unified, memory;
};
CgroupPaths ParseProcCgroup(std::string_view text);
// memory.max (v2: a number or "max") or memory.limit_in_bytes (v1: a number, 2^62 and more
// meaning no limit). nullopt = no limit.
Result<std::optional<uint64_t>> ParseMemoryLimit(std::string_view text);

// A process name as a field value: printable ASCII without space or ','; anything else (a space
// too) becomes '_',
// an empty name becomes "(none)", and at most `max_bytes` bytes are kept.
std::string FieldSafeName(std::string_view name, size_t max_bytes = 64);

}  // namespace trailmap::procfs
