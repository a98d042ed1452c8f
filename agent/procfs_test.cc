#include "agent/procfs.h"

#include <gtest/gtest.h>

namespace trailmap::procfs {
namespace {

TEST(ProcStat, ReadsTheAggregateCpuLine) {
  Result<CpuTimes> t = ParseProcStat(
      "cpu  1563551 64925 136206 562530 5742 0 2291 442 0 0\n"
      "cpu0 1 2 3 4 5 6 7 8 0 0\n"
      "intr 123\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->user, 1563551u);
  EXPECT_EQ(t->nice, 64925u);
  EXPECT_EQ(t->system, 136206u);
  EXPECT_EQ(t->idle, 562530u);
  EXPECT_EQ(t->iowait, 5742u);
  EXPECT_EQ(t->softirq, 2291u);
  EXPECT_EQ(t->steal, 442u);
  EXPECT_EQ(t->total(), 1563551u + 64925 + 136206 + 562530 + 5742 + 2291 + 442);
}

TEST(ProcStat, OldKernelsStopAfterIdle) {
  Result<CpuTimes> t = ParseProcStat("cpu 1 2 3 4\n");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->total(), 10u);
}

TEST(ProcStat, HostileInput) {
  EXPECT_EQ(ParseProcStat("intr 1\n").status().message(), "/proc/stat: no 'cpu' line");
  EXPECT_EQ(ParseProcStat("cpu 1 2\n").status().message(),
            "/proc/stat line 1: field 'system': missing");
  EXPECT_EQ(ParseProcStat("x\ncpu 1 2 3 4 5 6 7 12x\n").status().message(),
            "/proc/stat line 2: field 'steal': '12x' is not a number");
  // 2^64 does not fit: refused, not wrapped.
  EXPECT_EQ(ParseProcStat("cpu 18446744073709551616 0 0 0\n").status().message(),
            "/proc/stat line 1: field 'user': '18446744073709551616' is not a number (or is "
            "past 2^64)");
  EXPECT_TRUE(ParseProcStat("cpu 18446744073709551615 0 0 0\n").ok());
  EXPECT_FALSE(ParseProcStat("").ok());
}

constexpr const char* kCatStat =
    "18597 (cat) R 18587 18587 12569 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 1 0 1170854 3133440 408 "
    "18446744073709551615 94003537809408 94003537829289 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

TEST(PidStat, ReadsTheFieldsThatMatter) {
  Result<PidStat> s = ParsePidStat(kCatStat);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->comm, "cat");
  EXPECT_EQ(s->utime, 7u);
  EXPECT_EQ(s->stime, 3u);
  EXPECT_EQ(s->starttime, 1170854u);
  EXPECT_EQ(s->num_threads, 1u);
  EXPECT_EQ(s->vsize, 3133440u);
  EXPECT_EQ(s->rss_pages, 408u);
}

TEST(PidStat, NamesWithSpacesAndParentheses) {
  // The name runs to the LAST ')': "(a) b)" is "a) b", and the fields after it still line up.
  Result<PidStat> s =
      ParsePidStat("42 ((a) b)) S 1 1 1 0 -1 0 0 0 0 0 11 22 0 0 20 0 1 0 99 4096 2 0 0\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->comm, "(a) b)");
  EXPECT_EQ(s->utime, 11u);
  EXPECT_EQ(s->stime, 22u);
  EXPECT_EQ(s->rss_pages, 2u);
  Result<PidStat> odd = ParsePidStat("7 (x) 1 2) R 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 9 8 1\n");
  ASSERT_TRUE(odd.ok()) << odd.status().ToString();
  EXPECT_EQ(odd->comm, "x) 1 2");
  EXPECT_EQ(odd->utime, 5u);
}

TEST(PidStat, HostileInput) {
  EXPECT_EQ(ParsePidStat("42 no parens").status().message(),
            "/proc/PID/stat: no '(comm)' in '42 no parens'");
  // Truncated after utime: stime is missing.
  EXPECT_EQ(ParsePidStat("42 (a) S 1 1 1 0 -1 0 0 0 0 0 11").status().message(),
            "/proc/PID/stat line 1: field 'field 15': missing");
  EXPECT_EQ(
      ParsePidStat("42 (a) S 1 1 1 0 -1 0 0 0 0 0 -11 0 0 0 20 0 1 0 9 8 1").status().message(),
      "/proc/PID/stat line 1: field 'field 14': '-11' is not a number");
  EXPECT_FALSE(ParsePidStat("42 (a)").ok());
  EXPECT_FALSE(ParsePidStat(")(").ok());
}

TEST(Schedstat, PerProcessAndHost) {
  Result<SchedStat> p = ParsePidSchedstat("558493 81511 2\n");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->run_ns, 558493u);
  EXPECT_EQ(p->wait_ns, 81511u);
  EXPECT_EQ(p->timeslices, 2u);
  EXPECT_EQ(ParsePidSchedstat("1 2").status().message(),
            "/proc/PID/schedstat line 1: field 'timeslices': missing");

  Result<SchedStat> h = ParseHostSchedstat(
      "version 15\ntimestamp 4295\n"
      "cpu0 0 0 100 50 30 20 9000 700 40\n"
      "domain0 3 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29\n"
      "cpu1 0 0 100 50 30 20 1000 300 10\n");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->run_ns, 10000u);
  EXPECT_EQ(h->wait_ns, 1000u);
  EXPECT_EQ(h->timeslices, 50u);
  EXPECT_EQ(ParseHostSchedstat("version 15\n").status().message(),
            "/proc/schedstat: no 'cpuN' line");
  EXPECT_EQ(ParseHostSchedstat("cpu0 0 0 1 2 3\n").status().message(),
            "/proc/schedstat line 1: field 'field 6': missing");
}

TEST(PidIo, ReadsLogicalIo) {
  Result<PidIo> io = ParsePidIo(
      "rchar: 6976\nwchar: 10\nsyscr: 12\nsyscw: 1\nread_bytes: 0\nwrite_bytes: 0\n"
      "cancelled_write_bytes: 0\n");
  ASSERT_TRUE(io.ok());
  EXPECT_EQ(io->rchar, 6976u);
  EXPECT_EQ(io->wchar, 10u);
  EXPECT_EQ(io->syscr, 12u);
  EXPECT_EQ(io->syscw, 1u);
  EXPECT_EQ(ParsePidIo("rchar: 1\n").status().message(),
            "/proc/PID/io: lacks rchar, wchar, syscr or syscw");
  EXPECT_EQ(ParsePidIo("rchar: 1\nwchar: x\n").status().message(),
            "/proc/PID/io line 2: field 'wchar': 'x' is not a number");
}

TEST(Vmstat, SumsReclaimersNotTheByTypeBreakdown) {
  Result<VmStat> vm = ParseVmstat(
      "nr_free_pages 5\npgmajfault 6570\n"
      "pgsteal_kswapd 10\npgsteal_direct 5\npgsteal_khugepaged 0\npgsteal_proactive 1\n"
      "pgscan_kswapd 20\npgscan_direct 7\npgscan_khugepaged 0\npgscan_proactive 0\n"
      "pgscan_direct_throttle 99\npgscan_anon 25\npgscan_file 2\npgsteal_anon 15\n"
      "pgsteal_file 1\n");
  ASSERT_TRUE(vm.ok());
  EXPECT_EQ(vm->pgmajfault, 6570u);
  EXPECT_EQ(vm->pgscan, 27u);
  EXPECT_EQ(vm->pgsteal, 16u);
  EXPECT_EQ(ParseVmstat("pgmajfault\n").status().message(),
            "/proc/vmstat line 1: field 'pgmajfault': missing");
}

TEST(NetDev, PerInterface) {
  Result<std::vector<NetDevice>> d = ParseNetDev(
      "Inter-|   Receive                                                |  Transmit\n"
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
      "drop fifo colls carrier compressed\n"
      "    lo: 8232953166 3384013    0    0    0     0          0         0 8232953166 3384013    "
      "0    0    0     0       0          0\n"
      "  eth0:100 2 0 0 0 0 0 0 300 4 0 0 0 0 0 0\n");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[0].name, "lo");
  EXPECT_EQ((*d)[0].rx_bytes, 8232953166u);
  EXPECT_EQ((*d)[1].name, "eth0");
  EXPECT_EQ((*d)[1].rx_bytes, 100u);
  EXPECT_EQ((*d)[1].rx_packets, 2u);
  EXPECT_EQ((*d)[1].tx_bytes, 300u);
  EXPECT_EQ((*d)[1].tx_packets, 4u);
  EXPECT_EQ(ParseNetDev("h\nh\n eth0: 1 2 3\n").status().message(),
            "/proc/net/dev line 3: field 'rx drop': missing");
  EXPECT_EQ(ParseNetDev("h\nh\n eth0 1 2 3\n").status().message(),
            "/proc/net/dev line 3: no 'name:' in ' eth0 1 2 3'");
}

TEST(Diskstats, DevicesAndPartitions) {
  Result<std::vector<DiskStat>> d = ParseDiskstats(
      "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
      " 254       0 vda 1000 5 8000 300 2000 10 16000 900 0 1100 1200 0 0 0 0 0 0\n"
      " 254       1 vda1 10 0 80 3 20 0 160 9 0 11 12\n"
      " 259       0 nvme0n1 1 0 8 1 0 0 0 0 0 1 1\n"
      " 259       1 nvme0n1p2 1 0 8 1 0 0 0 0 0 1 1\n"
      " 253       0 dm-0 1 0 8 1 0 0 0 0 0 1 1\n");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->size(), 6u);
  const DiskStat& vda = (*d)[1];
  EXPECT_EQ(vda.name, "vda");
  EXPECT_EQ(vda.reads, 1000u);
  EXPECT_EQ(vda.read_sectors, 8000u);
  EXPECT_EQ(vda.writes, 2000u);
  EXPECT_EQ(vda.write_sectors, 16000u);
  EXPECT_EQ(vda.io_ticks_ms, 1100u);
  std::string whole;
  for (const DiskStat& s : *d) {
    if (IsWholeDisk(s.name, *d)) whole += s.name + " ";
  }
  EXPECT_EQ(whole, "vda nvme0n1 dm-0 ");
  EXPECT_EQ(ParseDiskstats(" 254 0 vda 1 2 3\n").status().message(),
            "/proc/diskstats line 1: field 'stat 4': missing");
}

TEST(Mounts, DecodesEscapesAndKnowsPseudoFilesystems) {
  Result<std::vector<Mount>> m = ParseMounts(
      "proc /proc proc rw,relatime 0 0\n"
      "/dev/vda / ext4 rw,relatime 0 0\n"
      "/dev/vdb /mnt/my\\040disk xfs rw 0 0\n");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->size(), 3u);
  EXPECT_EQ((*m)[2].dir, "/mnt/my disk");
  EXPECT_EQ((*m)[2].fstype, "xfs");
  EXPECT_TRUE(IsPseudoFilesystem((*m)[0].fstype));
  EXPECT_FALSE(IsPseudoFilesystem("ext4"));
  EXPECT_EQ(ParseMounts("/dev/vda /\n").status().message(),
            "/proc/self/mounts line 1: want 'device dir fstype ...'");
}

TEST(Cgroup, PathsAndLimits) {
  CgroupPaths p = ParseProcCgroup(
      "9:name=systemd:/\n4:memory:/process_api/3274\n2:cpu,cpuacct:/\n0::/user.slice\n");
  EXPECT_EQ(p.unified, "/user.slice");
  EXPECT_EQ(p.memory, "/process_api/3274");
  EXPECT_EQ(ParseProcCgroup("5:cpu,memory:/a\n").memory, "/a");
  EXPECT_EQ(ParseProcCgroup("garbage\n").memory, "");

  EXPECT_EQ(ParseMemoryLimit("max\n")->has_value(), false);
  EXPECT_EQ(ParseMemoryLimit("9223372036854771712\n")->has_value(), false);  // v1 unlimited
  EXPECT_EQ(ParseMemoryLimit("536870912\n")->value(), 536870912u);
  EXPECT_EQ(ParseMemoryLimit("lots\n").status().message(),
            "memory.max line 1: field 'limit': 'lots' is not a number");
}

TEST(FieldSafeName, MakesAnyNameAFieldValue) {
  EXPECT_EQ(FieldSafeName("nginx"), "nginx");
  EXPECT_EQ(FieldSafeName("(a) b)"), "(a)_b)");
  EXPECT_EQ(FieldSafeName("kworker/0:1,x\x01"), "kworker/0:1_x_");
  EXPECT_EQ(FieldSafeName(""), "(none)");
  EXPECT_EQ(FieldSafeName(std::string(100, 'a')).size(), 64u);
}

}  // namespace
}  // namespace trailmap::procfs
