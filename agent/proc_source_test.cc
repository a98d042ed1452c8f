#include "agent/proc_source.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

namespace trailmap {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// "metric{fields}" -> value of every scalar of `second`, and "metric{fields}" -> "count/sum"
// of every histogram.
struct Taken {
  std::map<std::string, double> scalars;
  std::map<std::string, std::string> histograms;
  bool has(const std::string& key) const { return scalars.count(key) > 0; }
};

Taken TakeSecond(Bucketizer* b, int64_t second) {
  Taken out;
  CompletedSeconds done = b->TakeAll(100000);
  for (const SecondDelta& s : done.seconds) {
    if (s.time != second) continue;
    for (const ScalarValue& v : s.scalars) {
      const SeriesDef& d = done.series.at(v.series);
      out.scalars[d.metric + "{" + d.fields + "}"] = v.value;
    }
    for (const HistogramDelta& h : s.histograms) {
      const SeriesDef& d = done.series.at(h.series);
      Result<Histogram> hist = Histogram::Decode(h.encoded);
      out.histograms[d.metric + "{" + d.fields + "}"] =
          std::to_string(hist->count()) + "/" + std::to_string(static_cast<uint64_t>(hist->sum()));
    }
  }
  return out;
}

class FixtureTree {
 public:
  FixtureTree() {
    root_ = fs::temp_directory_path() / ("trailmap-proc-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "proc/self");
    fs::create_directories(root_ / "proc/net");
    fs::create_directories(root_ / "cgroup/app");
  }
  ~FixtureTree() { fs::remove_all(root_); }
  void Write(const std::string& path, const std::string& text) {
    fs::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text;
  }
  std::string proc() const { return (root_ / "proc").string(); }
  std::string cgroup() const { return (root_ / "cgroup").string(); }

 private:
  fs::path root_;
};

// A /proc/PID/stat line with the given name, ticks, start time, vsize and RSS pages.
std::string PidStatLine(int pid, const std::string& comm, uint64_t utime, uint64_t stime,
                        uint64_t start, uint64_t vsize, uint64_t rss, int threads = 1) {
  return std::to_string(pid) + " (" + comm + ") S 1 1 1 0 -1 0 0 0 0 0 " + std::to_string(utime) +
         " " + std::to_string(stime) + " 0 0 20 0 " + std::to_string(threads) + " 0 " +
         std::to_string(start) + " " + std::to_string(vsize) + " " + std::to_string(rss) +
         " 18446744073709551615 0 0\n";
}

std::string IoText(uint64_t rchar, uint64_t wchar, uint64_t syscr, uint64_t syscw) {
  return "rchar: " + std::to_string(rchar) + "\nwchar: " + std::to_string(wchar) +
         "\nsyscr: " + std::to_string(syscr) + "\nsyscw: " + std::to_string(syscw) +
         "\nread_bytes: 0\nwrite_bytes: 0\ncancelled_write_bytes: 0\n";
}

constexpr const char* kNetHeader =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n";

TEST(ProcSource, FixtureTreeGivesExactRates) {
  FixtureTree t;
  const long tps = sysconf(_SC_CLK_TCK);
  const long page = sysconf(_SC_PAGESIZE);
  // Pass 1.
  t.Write("proc/stat", "cpu  100 0 100 800 0 0 0 0 0 0\n");
  t.Write("proc/vmstat", "pgmajfault 10\npgscan_kswapd 5\npgsteal_kswapd 2\n");
  t.Write("proc/net/dev",
          std::string(kNetHeader) + " eth0: 1000 10 0 0 0 0 0 0 500 5 0 0 0 0 0 0\n");
  t.Write("proc/diskstats",
          " 254 0 vda 100 0 800 0 50 0 400 0 0 1000 0\n 254 1 vda1 1 0 8 0 1 0 8 0 0 1 0\n");
  t.Write("proc/self/mounts", "/dev/vda / ext4 rw 0 0\nproc /proc proc rw 0 0\n");
  t.Write("proc/self/cgroup", "0::/app\n");
  t.Write("cgroup/app/memory.max", "536870912\n");
  t.Write("proc/schedstat", "version 15\ncpu0 0 0 0 0 0 0 1000 5000 10\n");
  t.Write("proc/10/stat", PidStatLine(10, "web (x) y", 10, 10, 500, 1 << 20, 100));
  t.Write("proc/10/schedstat", "1000 2000 10\n");
  t.Write("proc/10/io", IoText(0, 0, 0, 0));
  t.Write("proc/11/stat", PidStatLine(11, "web (x) y", 0, 0, 600, 1 << 20, 50));
  t.Write("proc/11/schedstat", "0 0 0\n");
  t.Write("proc/11/io", IoText(0, 0, 0, 0));
  t.Write("proc/12/stat", PidStatLine(12, "db", 0, 0, 700, 4096, 10));
  t.Write("proc/12/schedstat", "0 0 0\n");
  t.Write("proc/12/io", IoText(1000, 0, 10, 0));
  fs::create_directories(t.proc() + "/13");  // listed, then gone: vanished, not an error
  t.Write("proc/16/stat", PidStatLine(16, "idle", 5, 5, 800, 4096, 7));
  t.Write("proc/16/schedstat", "100 0 1\n");
  t.Write("proc/17/stat", PidStatLine(17, "mt", 0, 0, 900, 4096, 3, 4));
  t.Write("proc/17/schedstat", "100 0 1\n");
  t.Write("proc/16/io", IoText(0, 0, 0, 0));
  t.Write("proc/17/io", IoText(0, 0, 0, 0));

  Bucketizer b;
  ProcSourceOptions options;
  options.root = t.proc();
  options.cgroup_root = t.cgroup();
  ProcSource source(options, &b);
  const Clock::time_point t0 = Clock::now();
  source.Collect(100, t0);
  Taken first = TakeSecond(&b, 100);
  // Gauges only on the first pass: no rates, no cpu.usage.
  EXPECT_FALSE(first.has("cpu.usage{mode=user}"));
  EXPECT_FALSE(first.has("cpu.process.usage{execname=web_(x)_y}"));
  EXPECT_EQ(first.scalars["mem.rss{execname=web_(x)_y}"], 150.0 * page);
  EXPECT_EQ(first.scalars["mem.virtual{execname=web_(x)_y}"], 2.0 * (1 << 20));
  EXPECT_EQ(first.scalars["mem.rss.total{}"], 170.0 * page);
  EXPECT_EQ(first.scalars["mem.limit{}"], 536870912.0);
  EXPECT_TRUE(first.has("fs.size{mount=/}"));
  EXPECT_FALSE(first.has("fs.size{mount=/proc}"));
  EXPECT_EQ(source.counters().vanished, 1u);
  EXPECT_EQ(source.counters().processes, 5u);

  // Pass 2, two seconds later: every counter moved; pid 11 was replaced by a new process
  // with the same pid (another start time), so it yields gauges but no rate.
  t.Write("proc/stat", "cpu  150 0 130 1000 20 0 0 0 0 0\n");                    // +300 jiffies
  t.Write("proc/vmstat", "pgmajfault 30\npgscan_kswapd 5\npgsteal_kswapd 1\n");  // steal reset
  t.Write("proc/net/dev",
          std::string(kNetHeader) + " eth0: 3000 30 0 0 0 0 0 0 900 9 0 0 0 0 0 0\n");
  t.Write("proc/diskstats",
          " 254 0 vda 140 0 1200 0 70 0 800 0 0 1600 0\n 254 1 vda1 1 0 8 0 1 0 8 0 0 1 0\n");
  t.Write("proc/schedstat", "version 15\ncpu0 0 0 0 0 0 0 3000 9000 30\n");
  t.Write("proc/10/stat", PidStatLine(10, "web (x) y", 10 + tps, 10 + tps, 500, 1 << 20, 100));
  t.Write("proc/10/schedstat", "3000 6000 14\n");  // 4000 ns over 4 timeslices
  t.Write("proc/10/io", IoText(4000, 2000, 8, 4));
  t.Write("proc/11/stat", PidStatLine(11, "web (x) y", 5 * tps, 0, 601, 1 << 20, 50));
  t.Write("proc/11/schedstat", "50000 0 3\n");  // the new process ran
  t.Write("proc/12/stat", PidStatLine(12, "db", tps / 2, tps / 2, 700, 4096, 10));
  t.Write("proc/12/schedstat", "1000000000 0 5\n");
  // pid 16 is single-threaded and did not run (schedstat unchanged): its stat is not read, so
  // its RSS stays what it was (7 pages), CPU 0. pid 17 has 4 threads: its leader's schedstat
  // does not show the others running, so it is read in full and its CPU counts.
  t.Write("proc/16/stat", PidStatLine(16, "idle", 5, 5, 800, 4096, 99));
  t.Write("proc/17/stat", PidStatLine(17, "mt", tps, tps, 900, 4096, 3, 4));
  t.Write("proc/12/io", IoText(3000, 0, 14, 0));
  source.Collect(102, t0 + std::chrono::seconds(2));
  Taken second = TakeSecond(&b, 102);

  EXPECT_DOUBLE_EQ(second.scalars["cpu.usage{mode=user}"], 50.0 / 3);
  EXPECT_DOUBLE_EQ(second.scalars["cpu.usage{mode=system}"], 10.0);
  EXPECT_DOUBLE_EQ(second.scalars["cpu.usage{mode=idle}"], 200.0 / 3);
  EXPECT_DOUBLE_EQ(second.scalars["cpu.usage{mode=iowait}"], 20.0 / 3);
  EXPECT_EQ(second.scalars["cpu.usage{mode=steal}"], 0.0);
  // pid 10 used 2 s of CPU over 2 s: 100% of one CPU; the new pid 11 adds nothing yet.
  EXPECT_DOUBLE_EQ(second.scalars["cpu.process.usage{execname=web_(x)_y}"], 100.0);
  EXPECT_DOUBLE_EQ(second.scalars["cpu.process.usage{execname=db}"], 50.0);
  EXPECT_EQ(second.scalars["mem.rss{execname=idle}"], 7.0 * page);
  EXPECT_FALSE(second.has("cpu.process.usage{execname=idle}"));  // 0: not sent
  EXPECT_DOUBLE_EQ(second.scalars["cpu.process.usage{execname=mt}"], 100.0);
  EXPECT_EQ(second.histograms["cpu.runq.latency{execname=web_(x)_y}"], "4/4000");
  EXPECT_EQ(second.histograms["cpu.host.runq.latency{}"], "20/4000");  // 200 ns x 20 slices
  EXPECT_DOUBLE_EQ(second.scalars["fs.process.reads{execname=web_(x)_y}"], 4.0);
  EXPECT_DOUBLE_EQ(second.scalars["fs.process.writes{execname=web_(x)_y}"], 2.0);
  EXPECT_DOUBLE_EQ(second.scalars["fs.process.read_bytes{execname=web_(x)_y}"], 2000.0);
  EXPECT_DOUBLE_EQ(second.scalars["fs.process.write_bytes{execname=web_(x)_y}"], 1000.0);
  EXPECT_DOUBLE_EQ(second.scalars["fs.process.reads{execname=db}"], 2.0);
  EXPECT_FALSE(second.has("fs.process.writes{execname=db}"));  // 0: per-name rates of 0 not sent
  EXPECT_DOUBLE_EQ(second.scalars["mem.pgmajfault{}"], 10.0);
  EXPECT_DOUBLE_EQ(second.scalars["mem.pgscan{}"], 0.0);
  EXPECT_FALSE(second.has("mem.pgsteal{}"));  // went backwards: a reset, no value
  EXPECT_EQ(source.counters().resets, 1u);
  EXPECT_DOUBLE_EQ(second.scalars["net.rx.bytes{interface=eth0}"], 1000.0);
  EXPECT_DOUBLE_EQ(second.scalars["net.tx.bytes{interface=eth0}"], 200.0);
  EXPECT_DOUBLE_EQ(second.scalars["net.rx.packets{interface=eth0}"], 10.0);
  EXPECT_DOUBLE_EQ(second.scalars["net.tx.packets{interface=eth0}"], 2.0);
  EXPECT_DOUBLE_EQ(second.scalars["disk.reads{device=vda}"], 20.0);
  EXPECT_DOUBLE_EQ(second.scalars["disk.writes{device=vda}"], 10.0);
  EXPECT_DOUBLE_EQ(second.scalars["disk.read_bytes{device=vda}"], 200.0 * 512);
  EXPECT_DOUBLE_EQ(second.scalars["disk.write_bytes{device=vda}"], 200.0 * 512);
  EXPECT_DOUBLE_EQ(second.scalars["disk.service_time{device=vda}"], 600e6 / 60);  // 10 ms
  EXPECT_FALSE(second.has("disk.reads{device=vda1}"));                            // a partition
  EXPECT_EQ(source.counters().parse_errors, 0u);
}

TEST(ProcSource, BoundsProcessNamesAndSumsTheRest) {
  FixtureTree t;
  t.Write("proc/stat", "cpu 1 1 1 1\n");
  for (int pid = 1; pid <= 5; ++pid) {
    t.Write("proc/" + std::to_string(pid) + "/stat",
            PidStatLine(pid, "p" + std::to_string(pid), 0, 0, 1, 0, pid * 10));
  }
  t.Write("proc/6/stat", "6 (broken");  // parse error: counted, the others go on
  Bucketizer b;
  ProcSourceOptions options;
  options.root = t.proc();
  options.cgroup_root = t.cgroup();
  options.max_process_names = 2;
  ProcSource source(options, &b);
  source.Collect(100, Clock::now());
  Taken got = TakeSecond(&b, 100);
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  // The two biggest (no CPU yet, so by RSS) keep their names; p1..p3 are summed.
  EXPECT_EQ(got.scalars["mem.rss{execname=p5}"], 50 * page);
  EXPECT_EQ(got.scalars["mem.rss{execname=p4}"], 40 * page);
  EXPECT_EQ(got.scalars["mem.rss{execname=(other)}"], 60 * page);
  EXPECT_FALSE(got.has("mem.rss{execname=p1}"));
  EXPECT_EQ(source.counters().parse_errors, 1u);
  EXPECT_EQ(source.counters().processes, 5u);
}

// ---- against this machine's real /proc ----

// A child named `name` that touches `bytes` of memory (0: none), says so by closing the write
// end of a pipe, then spins (`burn`) or sleeps until killed. Returns once it is ready.
pid_t StartChild(const char* name, size_t bytes, bool burn) {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t pid = fork();
  if (pid != 0) {
    close(ready[1]);
    char byte;
    while (read(ready[0], &byte, 1) > 0) {
    }  // EOF: the child closed its end
    close(ready[0]);
    return pid;
  }
  close(ready[0]);
  prctl(PR_SET_NAME, name);
  if (bytes > 0) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) _exit(1);
    std::memset(p, 1, bytes);
  }
  close(ready[1]);
  volatile uint64_t spin = 0;
  while (burn) spin = spin + 1;
  while (true) pause();
}

void StopChild(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

uint64_t ProcStatTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result<procfs::PidStat> s = procfs::ParsePidStat(text);
  return s.ok() ? s->utime + s->stime : 0;
}

// RSS of `pid` in bytes, from /proc/PID/stat.
uint64_t ParsePidRss(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result<procfs::PidStat> s = procfs::ParsePidStat(text);
  return s.ok() ? s->rss_pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

procfs::CpuTimes HostCpuTimes() {
  std::ifstream in("/proc/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result<procfs::CpuTimes> t = procfs::ParseProcStat(text);
  return t.ok() ? *t : procfs::CpuTimes{};
}

uint64_t MemTotalBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemTotal:") return kib * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

TEST(ProcSourceRealProc, PlausibleAndConsistentWithProcAndPs) {
  constexpr size_t kBytes = 64 << 20;
  // A forked child starts with this process's pages mapped (copy on write), and they count in
  // its RSS too (a lot under ASan).
  const double inherited = static_cast<double>(ParsePidRss(getpid()));
  const pid_t rss_child = StartChild("tm-rss64", kBytes, false);
  const pid_t burn_child = StartChild("tm-burn", 0, true);
  Bucketizer b;
  ProcSource source(ProcSourceOptions{}, &b);
  const procfs::CpuTimes stat_before = HostCpuTimes();
  const uint64_t burn_before = ProcStatTicks(burn_child);
  const Clock::time_point t0 = Clock::now();
  source.Collect(1000, t0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  const Clock::time_point t1 = Clock::now();
  source.Collect(1001, t1);
  const uint64_t burn_after = ProcStatTicks(burn_child);
  const procfs::CpuTimes stat_after = HostCpuTimes();
  const double wall = std::chrono::duration<double>(t1 - t0).count();
  Taken got = TakeSecond(&b, 1001);

  // cpu.usage: every mode within [0, 100], together 100.
  double sum = 0;
  int modes = 0;
  for (const auto& [key, value] : got.scalars) {
    if (key.rfind("cpu.usage{", 0) != 0) continue;
    EXPECT_GE(value, 0.0) << key;
    EXPECT_LE(value, 100.0) << key;
    sum += value;
    ++modes;
  }
  EXPECT_EQ(modes, 8);
  EXPECT_NEAR(sum, 100.0, 0.01);
  // ... and agree with /proc/stat read directly around the two passes (the windows differ by
  // the few ms the reads take).
  const double total = static_cast<double>(stat_after.total() - stat_before.total());
  EXPECT_NEAR(got.scalars["cpu.usage{mode=idle}"],
              100.0 * static_cast<double>(stat_after.idle - stat_before.idle) / total, 5.0);
  EXPECT_NEAR(got.scalars["cpu.usage{mode=user}"],
              100.0 * static_cast<double>(stat_after.user - stat_before.user) / total, 5.0);

  // The spinning child: what the source says agrees with its /proc/PID/stat read directly.
  const double direct = 100.0 * static_cast<double>(burn_after - burn_before) /
                        static_cast<double>(sysconf(_SC_CLK_TCK)) / wall;
  ASSERT_TRUE(got.has("cpu.process.usage{execname=tm-burn}"));
  const double burn = got.scalars["cpu.process.usage{execname=tm-burn}"];
  EXPECT_NEAR(burn, direct, 10.0) << "direct " << direct;
  // ~100 on an idle machine; the CI machine shares 2 cores between many jobs, so only "it ran"
  // is asserted here, and the exact figure is checked against /proc/PID/stat above.
  EXPECT_GE(burn, 5.0);
  EXPECT_LE(burn, 105.0);  // one thread cannot use more than one CPU (+ tick rounding)

  // The 64 MiB child: at least 64 MiB, and what ps says. ps reads VmRSS from /proc/PID/status
  // (the kernel's exact per-CPU sum); /proc/PID/stat, which the source reads because it is
  // cheaper and has CPU and vsize too, gives the approximate counter: here within a few percent
  // (measured 1.6 MiB apart at 64 MiB on this 2-CPU VM).
  ASSERT_TRUE(got.has("mem.rss{execname=tm-rss64}"));
  const double rss = got.scalars["mem.rss{execname=tm-rss64}"];
  EXPECT_GE(rss, static_cast<double>(kBytes));
  EXPECT_LE(rss, static_cast<double>(kBytes) + inherited + 16 * 1024 * 1024);
  FILE* ps = popen(("ps -o rss=,comm= -p " + std::to_string(rss_child)).c_str(), "r");
  ASSERT_NE(ps, nullptr);
  unsigned long long ps_kib = 0;
  char comm[64] = {};
  ASSERT_EQ(std::fscanf(ps, "%llu %63s", &ps_kib, comm), 2);
  pclose(ps);
  EXPECT_STREQ(comm, "tm-rss64");
  EXPECT_NEAR(rss, static_cast<double>(ps_kib) * 1024, 0.05 * rss);

  // Totals: RSS summed over processes is at least the child's and at most the machine's memory.
  EXPECT_GE(got.scalars["mem.rss.total{}"], rss);
  EXPECT_LE(got.scalars["mem.rss.total{}"], static_cast<double>(MemTotalBytes()));
  EXPECT_TRUE(got.has("fs.size{mount=/}"));
  EXPECT_LE(got.scalars["fs.used{mount=/}"], got.scalars["fs.size{mount=/}"]);
  EXPECT_TRUE(got.has("net.rx.bytes{interface=lo}"));
  EXPECT_GT(source.counters().processes, 3u);
  EXPECT_EQ(source.counters().parse_errors, 0u);
  StopChild(rss_child);
  StopChild(burn_child);
}

TEST(ProcSourceRealProc, ThreadRunsPassesOnItsOwn) {
  Bucketizer b;
  ProcSourceOptions options;
  options.sample_offset = std::chrono::milliseconds(500);
  ProcSource source(options, &b);
  source.Start();
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (source.counters().passes < 2 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  source.Stop();
  EXPECT_GE(source.counters().passes, 2u);
  EXPECT_GT(b.counters().scalars, 10u);
}

}  // namespace
}  // namespace trailmap
