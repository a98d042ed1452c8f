// ExecSource: runs a command and turns each line of its stdout into an event of one metric,
// so anything that can print numbers (bpftrace, perf trace, a script) feeds trailmap.
//
// Line grammar (tokens separated by spaces or tabs; a '#' line and a blank line are skipped):
//
//   line   := [time] value {field}
//   time   := unix seconds, a decimal fraction allowed ("1700000000.25"; the second is kept)
//   value  := a quantity in the metric's unit: "10ms", "1.5s", "250us" or a bare number of ns
//             for latency; "4KiB" or bytes for size (core/units.h); a plain number for scalar
//   field  := key=value (core/series.h rules), added to the spec's fixed fields
//
// "850us op=read" is one event now; "1700000000 850us op=read" one at that second. A line
// without a time takes the second it was read. A time more than a day old or more than a
// minute ahead is refused. Latency and size values become histogram events; a scalar is the
// value of that second (last line wins).
//
// A refused line is counted by reason and logged with the line (the first
// `log_first_rejections`, then every `log_every_rejections`-th): nothing else is lost.
//
// The command: `argv` runs as given (execvp, no shell); `shell` runs as `/bin/sh -c SHELL`. It
// runs in its own process group. When it exits (or cannot start), it is started again after
// `restart_min`, doubling up to `restart_max` for each exit in a row; a run that lasted longer
// than `restart_max` resets the delay. Its stderr lines go to the agent's log as
// "exec METRIC [COMMAND]: stderr: ..." (rate-limited like rejections). Stop() sends SIGTERM to the
// group, then SIGKILL after a second.
//
// Threading: Start() runs the command on a thread of its own; counters() may be called from any
// thread; Stop() or the destructor joins it. The bucketizer must outlive the source.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/batch.h"
#include "core/series.h"
#include "core/status.h"
#include "ingest/bucketizer.h"

namespace trailmap {

struct ExecSpec {
  std::string metric;                      // dotted name
  MetricKind kind = MetricKind::kLatency;  // latency, size or scalar
  std::string unit = "ns";                 // ns for latency, B for size, anything for scalar
  std::string description;                 // one line for the catalog
  FieldSet fields;                         // added to every event
  std::vector<std::string> argv;           // the command without a shell, or
  std::string shell;                       // a command line for /bin/sh -c
  std::chrono::milliseconds restart_min{1000};
  std::chrono::milliseconds restart_max{60000};
};

// Checks a spec (metric name, kind, unit, fields, exactly one of argv and shell, delays);
// InvalidArgument naming `where` and the key.
Status ValidateExecSpec(const ExecSpec& spec, std::string_view where);

enum class ExecReject : uint8_t { kBadValue, kBadTime, kBadField, kTooLong, kShape };
inline constexpr size_t kExecRejectClasses = 5;
const char* ExecRejectName(ExecReject reason);  // "bad_value", "bad_time", ...

struct ExecEvent {
  int64_t second = 0;
  uint64_t value = 0;  // latency and size
  double scalar = 0;   // scalar
  std::string fields;  // canonical: the spec's and the line's
};

// Parses one line (without its newline) read at unix second `now`. On refusal *reason says why
// and the Status names the token.
Result<ExecEvent> ParseExecLine(std::string_view line, const ExecSpec& spec, int64_t now,
                                ExecReject* reason);

struct ExecCounters {
  uint64_t starts = 0;  // times the command was started (or tried)
  uint64_t exits = 0;   // of which ended (or failed to start)
  int last_status = 0;  // exit code, or -signal, of the last run
  uint64_t lines_accepted = 0;
  uint64_t lines_rejected = 0;
  std::array<uint64_t, kExecRejectClasses> rejected_by_reason{};
  uint64_t stderr_lines = 0;
  uint64_t thread_failures = 0;  // unexpected errors its thread caught (logged; it goes on)
};

struct ExecSourceOptions {
  size_t max_line = 4096;                // longer lines are refused (kTooLong)
  uint64_t log_first_rejections = 5;     // log each of the first N refused (and stderr) lines
  uint64_t log_every_rejections = 1000;  // then every N-th
  std::function<int64_t()> clock;        // unix seconds; empty = the system clock
};

class ExecSource {
 public:
  ExecSource(ExecSpec spec, ExecSourceOptions options, Bucketizer* bucketizer);
  ~ExecSource();  // Stop()
  ExecSource(const ExecSource&) = delete;
  ExecSource& operator=(const ExecSource&) = delete;

  void Start();
  void Stop();
  ExecCounters counters() const;
  const ExecSpec& spec() const { return spec_; }

 private:
  void Loop();
  // Runs the command once, until it exits or Stop(); says how it ended ("exited with status 1").
  std::string RunOnce();
  void Line(std::string_view line);
  void StderrLine(std::string_view line);
  bool ShouldLog(uint64_t n) const;
  int64_t Now() const;
  // Sleeps up to `d`; false when Stop() came first.
  bool SleepFor(std::chrono::milliseconds d);

  const ExecSpec spec_;
  const ExecSourceOptions options_;
  Bucketizer* const bucketizer_;
  SeriesDef series_;        // the spec's metric; fields set per event
  std::string name_;        // for the log: "exec METRIC [COMMAND]"
  int wake_[2] = {-1, -1};  // a pipe: Stop() writes, the runner's poll wakes

  mutable std::mutex mu_;
  ExecCounters counters_;  // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
  std::atomic<uint64_t> thread_failures_{0};
};

}  // namespace trailmap
