#include "agent/perf_source.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

extern char** environ;

namespace trailmap {
namespace {

struct Collected {
  std::mutex mu;
  std::vector<StackSample> samples;
  size_t size() {
    std::lock_guard<std::mutex> lock(mu);
    return samples.size();
  }
  StackSink Sink() {
    return [this](StackSample&& s) {
      std::lock_guard<std::mutex> lock(mu);
      samples.push_back(std::move(s));
    };
  }
};

// Why perf cannot be used here, or "" when `perf record` works.
std::string PerfUnusable() {
  const std::string dir = ::testing::TempDir();
  const std::string cmd = "perf record -q -F 99 -a -g -e cpu-clock -k CLOCK_REALTIME -o " + dir +
                          "/probe.data -- true >" + dir + "/probe.err 2>&1";
  const int rc = std::system(cmd.c_str());
  std::remove((dir + "/probe.data").c_str());
  if (rc == 0) return "";
  std::ifstream err(dir + "/probe.err");
  std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  return "perf record failed (exit " + std::to_string(rc) + "): " + text.substr(0, 300);
}

// A fresh directory for one test's temp files.
std::string FreshDir() {
  std::string t = ::testing::TempDir() + "/perfsrc-XXXXXX";
  if (mkdtemp(t.data()) == nullptr) return ::testing::TempDir();
  return t;
}

int CountEntries(const std::string& dir) {
  int n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..") ++n;
    }
    closedir(d);
  }
  return n;
}

bool WaitFor(const std::function<bool()>& done, int ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

TEST(PerfSource, ValidatesOptions) {
  PerfSourceOptions o;
  EXPECT_TRUE(ValidatePerfSourceOptions(o).ok());
  o.callgraph = "stack";
  EXPECT_EQ(ValidatePerfSourceOptions(o).message(),
            "perf callgraph must be fp, dwarf or lbr, got 'stack'");
  o = {};
  o.frequency = 0;
  EXPECT_EQ(ValidatePerfSourceOptions(o).message(),
            "perf frequency must be from 1 to 10000 Hz, got 0");
  o = {};
  o.window_ms = 50;
  EXPECT_FALSE(ValidatePerfSourceOptions(o).ok());
  PerfSource bad(o, [](StackSample&&) {});
  EXPECT_FALSE(bad.Start().ok());
}

// A busy child spinning in trailmap_test_busy_loop must show up under its own pid with the
// share and the sample count its CPU time implies at 99 Hz.
TEST(PerfSource, RealPerfSeesTheBusyFunction) {
  if (const std::string why = PerfUnusable(); !why.empty()) GTEST_SKIP() << why;
  Collected got;
  PerfSourceOptions o;
  o.window_ms = 1000;
  o.temp_dir = FreshDir();
  PerfSource source(o, got.Sink());
  ASSERT_TRUE(source.Start().ok());
  // A first window delivered: perf is past its start-up and recording.
  ASSERT_TRUE(WaitFor([&] { return source.stats().windows >= 1; }, 15'000))
      << source.stats().last_error;

  const int64_t t0 = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  pid_t pid = -1;
  const char* argv[] = {TRAILMAP_TEST_BUSY, "1.2", "10", nullptr};
  ASSERT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  int status = 0;
  rusage usage{};
  ASSERT_EQ(wait4(pid, &status, 0, &usage), pid);
  ASSERT_TRUE(WIFEXITED(status));
  const double cpu_seconds = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 +
                             usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
  const int64_t t1 = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();

  const std::string pid_field = "pid=" + std::to_string(pid);
  auto busy_total = [&] {
    std::lock_guard<std::mutex> lock(got.mu);
    uint64_t n = 0;
    for (const StackSample& s : got.samples) {
      if (s.fields.find(pid_field) != std::string::npos) n += s.count;
    }
    return n;
  };
  // Windows arrive in time order: once a sample two seconds past the child's end is in, every
  // window holding the child's samples has been read.
  auto latest_second = [&] {
    std::lock_guard<std::mutex> lock(got.mu);
    int64_t latest = 0;
    for (const StackSample& s : got.samples) latest = std::max(latest, s.second);
    return latest;
  };
  ASSERT_TRUE(WaitFor([&] { return latest_second() >= t1 + 2; }, 15'000));
  const uint64_t before = busy_total();
  WaitFor([&] { return latest_second() >= t1 + 3; }, 3'000);
  EXPECT_EQ(busy_total(), before) << "the busy child's samples were still arriving";
  source.Stop();

  uint64_t total = 0, in_loop = 0;
  {
    std::lock_guard<std::mutex> lock(got.mu);
    for (const StackSample& s : got.samples) {
      EXPECT_EQ(s.metric, "cpu.stacks");
      EXPECT_FALSE(s.frames.empty());
      if (s.fields.find(pid_field) == std::string::npos) continue;
      EXPECT_EQ(s.fields, "execname=trailmap-test-b," + pid_field);  // comm is cut at 15 bytes
      EXPECT_GE(s.second, t0 - 1);
      EXPECT_LE(s.second, t1);
      total += s.count;
      for (const std::string& f : s.frames) {
        if (f == "trailmap_test_busy_loop") {
          in_loop += s.count;
          break;
        }
      }
    }
  }
  const PerfSourceStats st = source.stats();
  EXPECT_EQ(st.failures, 0u) << st.last_error;
  EXPECT_GT(st.samples, total);  // other processes were sampled too
  const double expected = 99 * cpu_seconds;
  printf("busy child: %.2f CPU s, %llu samples (99 Hz x CPU s = %.0f), %llu in the loop\n",
         cpu_seconds, static_cast<unsigned long long>(total), expected,
         static_cast<unsigned long long>(in_loop));
  EXPECT_GT(cpu_seconds, 1.0) << "the busy child got under 1.2 CPU s in 10 s";
  EXPECT_GE(static_cast<double>(total), 0.6 * expected) << "cpu " << cpu_seconds;
  EXPECT_LE(static_cast<double>(total), 1.4 * expected + 5) << "cpu " << cpu_seconds;
  EXPECT_GT(in_loop * 2, total) << in_loop << " of " << total;

  EXPECT_TRUE(st.last_error.empty());
  EXPECT_EQ(CountEntries(o.temp_dir), 0) << "window files or the private directory were left";
}

// Stop() in the middle of sampling: perf stopped, every child reaped, every file removed.
TEST(PerfSource, StopReapsEveryChildAndRemovesItsFiles) {
  if (const std::string why = PerfUnusable(); !why.empty()) GTEST_SKIP() << why;
  Collected got;
  PerfSourceOptions o;
  o.window_ms = 500;
  o.temp_dir = FreshDir();
  PerfSource source(o, got.Sink());
  ASSERT_TRUE(source.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return source.stats().windows >= 2; }, 15'000))
      << source.stats().last_error;
  EXPECT_EQ(CountEntries(o.temp_dir), 1) << "the private directory";
  source.Stop();
  int status = 0;
  errno = 0;
  EXPECT_EQ(waitpid(-1, &status, WNOHANG), -1) << "a child is left";
  EXPECT_EQ(errno, ECHILD);
  EXPECT_EQ(CountEntries(o.temp_dir), 0);
  const size_t delivered = got.size();
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  EXPECT_EQ(got.size(), delivered) << "nothing arrives after Stop";
}

TEST(PerfSource, MissingPerfDegradesAndRetries) {
  Collected got;
  PerfSourceOptions o;
  o.perf_path = "/nonexistent/perf";
  o.backoff_min_ms = 50;
  o.backoff_max_ms = 100;
  o.temp_dir = FreshDir();
  PerfSource source(o, got.Sink());
  ASSERT_TRUE(source.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return source.stats().failures >= 3; }, 5000));
  const PerfSourceStats st = source.stats();
  EXPECT_NE(st.last_error.find("cannot run '/nonexistent/perf'"), std::string::npos)
      << st.last_error;
  EXPECT_NE(st.last_error.find("apt-get install linux-perf"), std::string::npos) << st.last_error;
  source.Stop();
  EXPECT_EQ(CountEntries(o.temp_dir), 0);
  EXPECT_EQ(st.windows, 0u);
  EXPECT_TRUE(got.samples.empty());
}

// A "perf" that refuses like the real one does when perf_event_paranoid forbids it.
TEST(PerfSource, ForbiddenPerfNamesTheSysctl) {
  const std::string fake = ::testing::TempDir() + "/fake-perf.sh";
  {
    std::ofstream out(fake);
    out << "#!/bin/sh\n"
           "echo 'Error:' >&2\n"
           "echo 'Access to performance monitoring and observability operations is limited.' >&2\n"
           "echo 'perf_event_paranoid setting is 4:' >&2\n"
           "exit 255\n";
  }
  chmod(fake.c_str(), 0755);
  Collected got;
  PerfSourceOptions o;
  o.perf_path = fake;
  o.backoff_min_ms = 50;
  o.backoff_max_ms = 50;
  o.temp_dir = FreshDir();
  PerfSource source(o, got.Sink());
  ASSERT_TRUE(source.Start().ok());
  ASSERT_TRUE(WaitFor([&] { return source.stats().failures >= 2; }, 5000));
  const PerfSourceStats st = source.stats();
  EXPECT_NE(st.last_error.find("perf record exited with status 255"), std::string::npos)
      << st.last_error;
  EXPECT_NE(st.last_error.find("sysctl kernel.perf_event_paranoid=-1"), std::string::npos)
      << st.last_error;
  source.Stop();
  EXPECT_TRUE(got.samples.empty());
}

}  // namespace
}  // namespace trailmap
