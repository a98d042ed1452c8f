#include "agent/exec_source.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "agent/child_process.h"
#include "core/boundary.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/units.h"

namespace trailmap {
namespace {

std::string Quote(std::string_view s) {
  if (s.size() > 60) return "'" + std::string(s.substr(0, 60)) + "...'";
  return "'" + std::string(s) + "'";
}

bool ToDouble(std::string_view s, double* out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(*out);
}

Status Refuse(ExecReject why, ExecReject* reason, std::string message) {
  *reason = why;
  return Status::InvalidArgument(std::move(message));
}

std::string Seconds(std::chrono::steady_clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", std::chrono::duration<double>(d).count());
  return buf;
}

}  // namespace

const char* ExecRejectName(ExecReject reason) {
  switch (reason) {
    case ExecReject::kBadValue:
      return "bad_value";
    case ExecReject::kBadTime:
      return "bad_time";
    case ExecReject::kBadField:
      return "bad_field";
    case ExecReject::kTooLong:
      return "too_long";
    case ExecReject::kShape:
      return "shape";
  }
  return "unknown";
}

Status ValidateExecSpec(const ExecSpec& spec, std::string_view where) {
  const std::string w(where);
  if (Status s = ValidateMetricName(spec.metric); !s.ok()) {
    return Status::InvalidArgument(w + ": metric " + Quote(spec.metric) + ": " + s.message());
  }
  if (spec.kind != MetricKind::kLatency && spec.kind != MetricKind::kSize &&
      spec.kind != MetricKind::kScalar) {
    return Status::InvalidArgument(w + ": kind must be latency, size or scalar");
  }
  if (spec.kind == MetricKind::kLatency && spec.unit != "ns") {
    return Status::InvalidArgument(w +
                                   ": a latency metric's unit is ns (values like 10ms are "
                                   "converted), got " +
                                   Quote(spec.unit));
  }
  if (spec.kind == MetricKind::kSize && spec.unit != "B") {
    return Status::InvalidArgument(w +
                                   ": a size metric's unit is B (values like 4KiB are "
                                   "converted), got " +
                                   Quote(spec.unit));
  }
  if (spec.unit.empty() || spec.unit.size() > 32) {
    return Status::InvalidArgument(w + ": unit must be 1..32 bytes");
  }
  if (Result<std::string> f = CanonicalFields(spec.fields); !f.ok()) {
    return Status::InvalidArgument(w + ": fields: " + f.status().message());
  }
  if (spec.argv.empty() == spec.shell.empty()) {
    return Status::InvalidArgument(w +
                                   ": command must be a string (run by /bin/sh -c) or a "
                                   "non-empty array of strings (run directly)");
  }
  if (spec.restart_min.count() < 10 || spec.restart_max < spec.restart_min) {
    return Status::InvalidArgument(w +
                                   ": restart_min_ms must be at least 10 and at most "
                                   "restart_max_ms");
  }
  return Status::Ok();
}

Result<ExecEvent> ParseExecLine(std::string_view line, const ExecSpec& spec, int64_t now,
                                ExecReject* reason) {
  std::string_view plain[2];
  size_t n_plain = 0;
  FieldSet fields = spec.fields;
  size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t' || line[pos] == '\r')) ++pos;
    size_t end = pos;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t' && line[end] != '\r') ++end;
    if (end == pos) break;
    const std::string_view token = line.substr(pos, end - pos);
    pos = end;
    const size_t eq = token.find('=');
    if (eq != std::string_view::npos) {
      fields.emplace_back(std::string(token.substr(0, eq)), std::string(token.substr(eq + 1)));
      continue;
    }
    if (fields.size() > spec.fields.size()) {
      return Refuse(ExecReject::kShape, reason,
                    Quote(token) +
                        " after a field: want "
                        "'[time] value [key=value ...]'");
    }
    if (n_plain == 2) {
      return Refuse(ExecReject::kShape, reason,
                    "more than 'time value' before the fields at " + Quote(token) +
                        ": want '[time] value [key=value ...]'");
    }
    plain[n_plain++] = token;
  }
  if (n_plain == 0) {
    return Refuse(ExecReject::kShape, reason, "no value: want '[time] value [key=value ...]'");
  }
  ExecEvent event;
  event.second = now;
  if (n_plain == 2) {
    double t = 0;
    if (!ToDouble(plain[0], &t)) {
      return Refuse(ExecReject::kBadTime, reason,
                    "time " + Quote(plain[0]) + " is not unix seconds");
    }
    const int64_t second = static_cast<int64_t>(std::floor(t));
    if (t < static_cast<double>(now - 86'400) || t > static_cast<double>(now + 60)) {
      return Refuse(
          ExecReject::kBadTime, reason,
          "time " + Quote(plain[0]) + " is more than a day old or more than a minute ahead");
    }
    event.second = second;
  }
  const std::string_view value = plain[n_plain - 1];
  if (spec.kind == MetricKind::kScalar) {
    if (!ToDouble(value, &event.scalar)) {
      return Refuse(ExecReject::kBadValue, reason,
                    "value " + Quote(value) + " is not a finite number");
    }
  } else {
    Result<uint64_t> v = ParseQuantity(value, spec.unit);
    if (!v.ok()) {
      return Refuse(ExecReject::kBadValue, reason,
                    "value " + Quote(value) + ": " + v.status().message());
    }
    event.value = *v;
  }
  Result<std::string> canonical = CanonicalFields(std::move(fields));
  if (!canonical.ok()) {
    return Refuse(ExecReject::kBadField, reason, canonical.status().message());
  }
  event.fields = std::move(*canonical);
  return event;
}

ExecSource::ExecSource(ExecSpec spec, ExecSourceOptions options, Bucketizer* bucketizer)
    : spec_(std::move(spec)), options_(std::move(options)), bucketizer_(bucketizer) {
  series_ = SeriesDef{spec_.metric, spec_.kind, spec_.unit, "", spec_.description};
  // "exec syscall.latency [bpftrace]": the metric and the command, in every log line.
  std::string command = spec_.argv.empty() ? spec_.shell : spec_.argv[0];
  command = command.substr(0, command.find_first_of(" \t"));
  name_ = "exec " + spec_.metric + " [" + command.substr(command.rfind('/') + 1) + "]";
  if (pipe2(wake_, O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
}

ExecSource::~ExecSource() {
  Stop();
  for (int fd : wake_) {
    if (fd >= 0) close(fd);
  }
}

void ExecSource::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) return;
  // Joined by Stop(), before `this` goes away. An unexpected error ends the run it happened in,
  // as if the command had ended: logged, counted, and started again after the longest backoff.
  thread_ = std::thread([this] {
    while (!CatchAtBoundary(name_, &thread_failures_, [this] { Loop(); })) {
      if (!SleepFor(spec_.restart_max)) return;
    }
  });
}

void ExecSource::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  const char byte = 1;
  if (wake_[1] >= 0 && write(wake_[1], &byte, 1) < 0) { /* already signalled: full pipe */
  }
  if (thread_.joinable()) thread_.join();
}

ExecCounters ExecSource::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  ExecCounters c = counters_;
  c.thread_failures = thread_failures_.load(std::memory_order_relaxed);
  return c;
}

int64_t ExecSource::Now() const { return NowSeconds(options_.clock); }

bool ExecSource::ShouldLog(uint64_t n) const {
  return n <= options_.log_first_rejections ||
         (options_.log_every_rejections > 0 && n % options_.log_every_rejections == 0);
}

bool ExecSource::SleepFor(std::chrono::milliseconds d) {
  pollfd wake{wake_[0], POLLIN, 0};
  return poll(&wake, 1, static_cast<int>(d.count())) == 0;
}

void ExecSource::Line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  const size_t first = line.find_first_not_of(" \t");
  if (first == std::string_view::npos || line[first] == '#') return;
  ExecReject reason = ExecReject::kShape;
  Result<ExecEvent> event = ParseExecLine(line, spec_, Now(), &reason);
  uint64_t n = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (event.ok()) {
      ++counters_.lines_accepted;
    } else {
      n = ++counters_.lines_rejected;
      ++counters_.rejected_by_reason[static_cast<size_t>(reason)];
    }
  }
  if (!event.ok()) {
    if (ShouldLog(n)) {
      Log(name_ + ": line " + Quote(line) + " refused (" + ExecRejectName(reason) +
          "): " + event.status().message() + " [" + std::to_string(n) + " refused so far]");
    }
    return;
  }
  series_.fields = std::move(event->fields);
  if (spec_.kind == MetricKind::kScalar) {
    bucketizer_->SetScalar(event->second, series_, event->scalar);
  } else {
    bucketizer_->Add(event->second, series_, event->value);
  }
}

void ExecSource::StderrLine(std::string_view line) {
  uint64_t n = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    n = ++counters_.stderr_lines;
  }
  if (ShouldLog(n)) Log(name_ + ": stderr: " + std::string(line));
}

void ExecSource::Loop() {
  using Clock = std::chrono::steady_clock;
  std::chrono::milliseconds delay = spec_.restart_min;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
    }
    const Clock::time_point started = Clock::now();
    const std::string how = RunOnce();
    const Clock::duration ran = Clock::now() - started;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
    }
    if (ran > spec_.restart_max) delay = spec_.restart_min;
    Log(name_ + ": ended (" + how + ") after " + Seconds(ran) + "; starting it again in " +
        Seconds(delay));
    if (!SleepFor(delay)) return;
    delay = std::min(delay * 2, spec_.restart_max);
  }
}

std::string ExecSource::RunOnce() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.starts;
  }
  auto ended = [this](int code, std::string how) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.exits;
    counters_.last_status = code;
    return how;
  };
  SpawnSpec spec;
  spec.argv = spec_.argv;
  if (spec.argv.empty()) spec.argv = {"/bin/sh", "-c", spec_.shell};
  spec.pipe_stdout = spec.pipe_stderr = true;
  spec.own_group = true;  // so Stop reaches a shell's children
  Result<Child> spawned = SpawnChild(spec);
  if (!spawned.ok()) return ended(127, spawned.status().message());
  Child child = *spawned;
  const pid_t pid = child.pid;
  Log(name_ + ": started " + Quote(spec_.argv.empty() ? spec_.shell : spec_.argv[0]) + ", pid " +
      std::to_string(pid));
  // Read both pipes until both close (or Stop), splitting lines.
  std::string buffers[2];
  bool discarding[2] = {false, false};  // within a line already refused as too long
  int fds[2] = {child.out_fd, child.err_fd};
  child.out_fd = child.err_fd = -1;  // closed here as they end
  bool stopped = false;
  char chunk[8192];
  while ((fds[0] >= 0 || fds[1] >= 0) && !stopped) {
    pollfd p[3] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[2].revents != 0) stopped = true;
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0 || p[i].revents == 0) continue;
      const ssize_t n = read(fds[i], chunk, sizeof chunk);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        if (!buffers[i].empty() && !discarding[i]) {  // a last line without its newline
          i == 0 ? Line(buffers[i]) : StderrLine(buffers[i]);
        }
        buffers[i].clear();
        close(fds[i]);
        fds[i] = -1;
        continue;
      }
      std::string& buf = buffers[i];
      buf.append(chunk, static_cast<size_t>(n));
      size_t start = 0;
      for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
        if (discarding[i]) {
          discarding[i] = false;
          continue;
        }
        const std::string_view line(buf.data() + start, nl - start);
        if (line.size() > options_.max_line) {
          if (i == 0) {
            std::lock_guard<std::mutex> lock(mu_);
            ++counters_.lines_rejected;
            ++counters_.rejected_by_reason[static_cast<size_t>(ExecReject::kTooLong)];
          }
          continue;
        }
        i == 0 ? Line(line) : StderrLine(line);
      }
      buf.erase(0, start);
      if (buf.size() > options_.max_line && !discarding[i]) {  // refuse it now, skip the rest
        if (i == 0) {
          std::lock_guard<std::mutex> lock(mu_);
          ++counters_.lines_rejected;
          ++counters_.rejected_by_reason[static_cast<size_t>(ExecReject::kTooLong)];
          Log(name_ + ": a line longer than " + std::to_string(options_.max_line) +
              " bytes refused (too_long)");
        }
        discarding[i] = true;
      }
      if (discarding[i]) buf.clear();
    }
  }
  for (int fd : fds) {
    if (fd >= 0) close(fd);
  }
  // Both pipes closed: wait for the exit, still listening for Stop.
  int status = 0;
  while (!stopped) {
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    pollfd wake{wake_[0], POLLIN, 0};
    if (poll(&wake, 1, 50) > 0) stopped = true;
  }
  if (stopped) status = StopChild(&child, SIGTERM, std::chrono::milliseconds(1000));
  int code = 0;
  std::string how = DescribeWaitStatus(status, &code);
  return ended(code, std::move(how));
}

}  // namespace trailmap
