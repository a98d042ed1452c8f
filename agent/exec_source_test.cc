#include "agent/exec_source.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

#include "agent/agent_config.h"

namespace trailmap {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kNow = 1'700'000'000;

ExecSpec LatencySpec() {
  ExecSpec spec;
  spec.metric = "syscall.latency";
  spec.kind = MetricKind::kLatency;
  spec.unit = "ns";
  spec.fields = {{"source", "bpf"}};
  spec.shell = "true";
  return spec;
}

// "second value fields" or "refused REASON: message".
std::string Parse(std::string_view line, const ExecSpec& spec) {
  ExecReject reason = ExecReject::kShape;
  Result<ExecEvent> e = ParseExecLine(line, spec, kNow, &reason);
  if (!e.ok())
    return std::string("refused ") + ExecRejectName(reason) + ": " + e.status().message();
  return std::to_string(e->second) + " " +
         (spec.kind == MetricKind::kScalar ? std::to_string(e->scalar) : std::to_string(e->value)) +
         " " + e->fields;
}

TEST(ExecLine, Table) {
  const ExecSpec lat = LatencySpec();
  const std::pair<const char*, const char*> cases[] = {
      {"850us", "1700000000 850000 source=bpf"},
      {"1500 op=read", "1700000000 1500 op=read,source=bpf"},
      {"  10ms\top=write  ", "1700000000 10000000 op=write,source=bpf"},
      {"1699999990.75 1.5s op=read", "1699999990 1500000000 op=read,source=bpf"},
      {"", "refused shape: no value: want '[time] value [key=value ...]'"},
      {"op=read", "refused shape: no value: want '[time] value [key=value ...]'"},
      {"1 2 3",
       "refused shape: more than 'time value' before the fields at '3': want '[time] "
       "value [key=value ...]'"},
      {"5ms op=read 7ms",
       "refused shape: '7ms' after a field: want '[time] value [key=value "
       "...]'"},
      {"fast", "refused bad_value: value 'fast': "},
      {"-5ms", "refused bad_value: value '-5ms': "},
      {"99999999999999999999999ms", "refused bad_value: value '99999999999999999999999ms': "},
      {"yesterday 5ms", "refused bad_time: time 'yesterday' is not unix seconds"},
      {"1600000000 5ms",
       "refused bad_time: time '1600000000' is more than a day old or more "
       "than a minute ahead"},
      {"5ms op=a,b", "refused bad_field: field 'op' value has a space, ',' or non-printable byte"},
      {"5ms source=x", "refused bad_field: "},  // repeats the spec's field
      {"5ms b@d=1", "refused bad_field: field key 'b@d' has a character outside [A-Za-z0-9_.-]"},
  };
  for (const auto& [line, want] : cases) {
    const std::string got = Parse(line, lat);
    // Unit errors come from core/units.h; only their start is pinned here.
    EXPECT_EQ(got.substr(0, std::string(want).size()), want) << "line '" << line << "'";
  }
  ExecSpec scalar = LatencySpec();
  scalar.kind = MetricKind::kScalar;
  scalar.unit = "%";
  scalar.fields.clear();
  EXPECT_EQ(Parse("42.5 cpu=0", scalar), "1700000000 42.500000 cpu=0");
  EXPECT_EQ(Parse("nan", scalar), "refused bad_value: value 'nan' is not a finite number");
  ExecSpec size = scalar;
  size.kind = MetricKind::kSize;
  size.unit = "B";
  EXPECT_EQ(Parse("4KiB", size), "1700000000 4096 ");
}

TEST(ExecSpec, Validation) {
  ExecSpec s = LatencySpec();
  EXPECT_TRUE(ValidateExecSpec(s, "exec[0]").ok());
  s.argv = {"bpftrace"};
  EXPECT_EQ(ValidateExecSpec(s, "exec[0]").message(),
            "exec[0]: command must be a string (run by /bin/sh -c) or a non-empty array of "
            "strings (run directly)");
  s = LatencySpec();
  s.unit = "ms";
  EXPECT_EQ(ValidateExecSpec(s, "exec[1]").message(),
            "exec[1]: a latency metric's unit is ns (values like 10ms are converted), got 'ms'");
  s = LatencySpec();
  s.metric = "bad metric";
  EXPECT_FALSE(ValidateExecSpec(s, "exec[2]").ok());
}

std::map<std::string, uint64_t> HistogramCounts(Bucketizer* b) {
  std::map<std::string, uint64_t> out;
  CompletedSeconds done = b->TakeAll(100000);
  for (const SecondDelta& s : done.seconds) {
    for (const HistogramDelta& h : s.histograms) {
      const SeriesDef& d = done.series.at(h.series);
      out[d.metric + "{" + d.fields + "}"] += Histogram::Decode(h.encoded)->count();
    }
  }
  return out;
}

bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

TEST(ExecSource, ShellCommandGoodAndBadLines) {
  Bucketizer b;
  ExecSpec spec = LatencySpec();
  spec.shell =
      "printf '5ms op=read\\n7ms op=read\\n# a comment\\n\\nslow op=read\\n"
      "1ms op=write\\n1 2 3\\n'; echo oops >&2; printf '3ms op=write\\n'; sleep 30";
  spec.restart_min = std::chrono::milliseconds(50);
  ExecSource source(spec, {}, &b);
  source.Start();
  ASSERT_TRUE(WaitUntil([&source] { return source.counters().lines_accepted == 4; },
                        std::chrono::seconds(10)));
  ASSERT_TRUE(WaitUntil([&source] { return source.counters().stderr_lines == 1; },
                        std::chrono::seconds(5)));
  const auto started = Clock::now();
  source.Stop();  // the command still sleeps: Stop ends its process group
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(3));
  const ExecCounters c = source.counters();
  EXPECT_EQ(c.starts, 1u);
  EXPECT_EQ(c.lines_rejected, 2u);
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(ExecReject::kBadValue)], 1u);
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(ExecReject::kShape)], 1u);
  EXPECT_EQ(c.last_status, -SIGTERM);
  const auto counts = HistogramCounts(&b);
  EXPECT_EQ(counts.at("syscall.latency{op=read,source=bpf}"), 2u);
  EXPECT_EQ(counts.at("syscall.latency{op=write,source=bpf}"), 2u);
}

TEST(ExecSource, ArgvRunsWithoutAShellAndTheLastLineNeedsNoNewline) {
  Bucketizer b;
  ExecSpec spec = LatencySpec();
  spec.shell.clear();
  // Without a shell, '$HOME' and ';' reach printf as they are: one refused line.
  spec.argv = {"printf", "2ms k=$HOME;x\\n4ms k=v"};
  spec.restart_min = std::chrono::milliseconds(5000);
  ExecSource source(spec, {}, &b);
  source.Start();
  ASSERT_TRUE(
      WaitUntil([&source] { return source.counters().exits == 1; }, std::chrono::seconds(10)));
  source.Stop();
  const ExecCounters c = source.counters();
  EXPECT_EQ(c.lines_accepted, 2u);  // "k=$HOME;x" is a valid field value, taken literally
  EXPECT_EQ(c.last_status, 0);
  const auto counts = HistogramCounts(&b);
  EXPECT_EQ(counts.at("syscall.latency{k=$HOME;x,source=bpf}"), 1u);
  EXPECT_EQ(counts.at("syscall.latency{k=v,source=bpf}"), 1u);
}

TEST(ExecSource, RestartsWithExponentialBackoff) {
  Bucketizer b;
  ExecSpec spec = LatencySpec();
  spec.shell = "echo 1ms; exit 3";
  spec.restart_min = std::chrono::milliseconds(100);
  spec.restart_max = std::chrono::milliseconds(400);
  ExecSource source(spec, {}, &b);
  source.Start();
  // Starts at about 0, 0.1, 0.3, 0.7, 1.1, 1.5 s (delays 100, 200, 400, 400 ms): by 1.3 s five
  // starts. Without backoff there would be ~13; with no restart, one.
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  const ExecCounters c = source.counters();
  source.Stop();
  EXPECT_GE(c.starts, 4u);
  EXPECT_LE(c.starts, 6u);
  EXPECT_EQ(c.last_status, 3);
  EXPECT_GE(c.lines_accepted, c.starts - 1);
}

TEST(ExecSource, ACommandThatCannotStartIsRetried) {
  Bucketizer b;
  ExecSpec spec = LatencySpec();
  spec.shell.clear();
  spec.argv = {"/nonexistent/trailmap-probe"};
  spec.restart_min = std::chrono::milliseconds(20);
  spec.restart_max = std::chrono::milliseconds(20);
  ExecSource source(spec, {}, &b);
  source.Start();
  ASSERT_TRUE(
      WaitUntil([&source] { return source.counters().exits >= 2; }, std::chrono::seconds(5)));
  source.Stop();
  EXPECT_EQ(source.counters().last_status, 127);
}

TEST(ExecSource, ScalarLastLineOfASecondWins) {
  Bucketizer b;
  ExecSpec spec;
  spec.metric = "queue.depth";
  spec.kind = MetricKind::kScalar;
  spec.unit = "items";
  spec.shell = "printf '3\\n5\\n1700000000 9\\n'";
  spec.restart_min = std::chrono::milliseconds(5000);
  ExecSourceOptions options;
  options.clock = [] { return kNow; };
  ExecSource source(spec, options, &b);
  source.Start();
  ASSERT_TRUE(
      WaitUntil([&source] { return source.counters().exits == 1; }, std::chrono::seconds(10)));
  source.Stop();
  CompletedSeconds done = b.TakeAll();
  ASSERT_EQ(done.seconds.size(), 1u);
  ASSERT_EQ(done.seconds[0].scalars.size(), 1u);
  EXPECT_EQ(done.seconds[0].scalars[0].value, 9.0);
}

TEST(ExecSource, OverlongLinesAreRefusedAndTheNextLineIsRead) {
  Bucketizer b;
  ExecSpec spec = LatencySpec();
  // 10,000 bytes without a newline in between (longer than max_line 4096, and longer than one
  // read), then a good line.
  spec.shell = "head -c 10000 /dev/zero | tr '\\0' 7; echo; echo 2ms";
  spec.restart_min = std::chrono::milliseconds(5000);
  ExecSource source(spec, {}, &b);
  source.Start();
  ASSERT_TRUE(
      WaitUntil([&source] { return source.counters().exits == 1; }, std::chrono::seconds(10)));
  source.Stop();
  const ExecCounters c = source.counters();
  EXPECT_EQ(c.lines_rejected, 1u);
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(ExecReject::kTooLong)], 1u);
  EXPECT_EQ(c.lines_accepted, 1u);
  EXPECT_EQ(HistogramCounts(&b).at("syscall.latency{source=bpf}"), 1u);
}

TEST(ExampleConfig, ParsesWithTheExecExampleUncommented) {
  const std::string path = std::string(TRAILMAP_SOURCE_DIR) + "/configs/agent.toml";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::string text, line;
  bool in_example = false;
  while (std::getline(in, line)) {
    if (line == "# [[exec]]") in_example = true;
    if (in_example && line.rfind("# ", 0) == 0) line = line.substr(2);  // uncomment the example
    text += line + "\n";
  }
  AgentConfig config;
  config.host = "h";
  const Status parsed = ParseAgentConfig(text, "configs/agent.toml", &config);
  ASSERT_TRUE(parsed.ok()) << parsed.ToString();
  ASSERT_TRUE(ValidateAgentConfig(config).ok()) << ValidateAgentConfig(config).ToString();
  EXPECT_TRUE(config.proc.enabled);
  ASSERT_EQ(config.exec.size(), 1u);
  EXPECT_EQ(config.exec[0].argv.at(0), "bpftrace");
  ExecReject reason;
  // What the bpftrace program prints is a line the source takes.
  EXPECT_TRUE(ParseExecLine("123456 op=read", config.exec[0], kNow, &reason).ok());
}

TEST(ExecSource, TheCommandInheritsOnlyStdinStdoutAndStderr) {
  const int leak = open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(leak, 3);
  Bucketizer b;
  ExecSpec spec;
  spec.metric = "fds";
  spec.kind = MetricKind::kScalar;
  spec.unit = "fd";
  spec.argv = {"ls", "-1", "/proc/self/fd"};  // 0 1 2, and 3: the directory ls reads
  spec.restart_min = std::chrono::milliseconds(5000);
  ExecSource source(spec, {}, &b);
  source.Start();
  ASSERT_TRUE(
      WaitUntil([&source] { return source.counters().exits == 1; }, std::chrono::seconds(10)));
  source.Stop();
  close(leak);
  EXPECT_EQ(source.counters().lines_accepted, 4u);
}

// An unexpected error in the source's thread (here its clock throws, once) is caught at the
// thread's boundary: logged, counted, and the command runs again after restart_max, instead of
// the process ending (std::terminate).
TEST(ExecSource, AnUnexpectedErrorInItsThreadIsCountedAndTheCommandRunsAgain) {
  Bucketizer b;
  ExecSpec spec = LatencySpec();
  spec.shell = "echo 1ms; sleep 30";
  spec.restart_min = std::chrono::milliseconds(20);
  spec.restart_max = std::chrono::milliseconds(20);
  std::atomic<int> calls{0};
  ExecSourceOptions options;
  options.clock = [&calls]() -> int64_t {
    if (calls++ == 0) throw std::runtime_error("clock unavailable");
    return kNow;
  };
  ExecSource source(spec, options, &b);
  testing::internal::CaptureStderr();
  source.Start();
  const bool ran_again = WaitUntil([&source] { return source.counters().lines_accepted >= 1; },
                                   std::chrono::seconds(5));
  source.Stop();
  const std::string log = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(ran_again) << log;
  EXPECT_EQ(source.counters().thread_failures, 1u);
  EXPECT_NE(log.find("unexpected error: clock unavailable"), std::string::npos) << log;
}

}  // namespace
}  // namespace trailmap
