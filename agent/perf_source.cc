#include "agent/perf_source.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

#include "agent/child_process.h"
#include "core/boundary.h"
#include "core/clock.h"
#include "core/log.h"
#include "stacks/stack_collapse.h"

namespace trailmap {
namespace {

using Clock = std::chrono::steady_clock;

int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

// The last non-empty lines of a child's stderr, joined by " / ", at most ~300 bytes.
std::string ErrTail(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  std::string out;
  for (size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i) {
    if (!out.empty()) out += " / ";
    out += lines[i];
  }
  if (out.size() > 300) out = out.substr(0, 297) + "...";
  return out;
}

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// A failed perf run's cause in words, with what to do about it.
std::string ExplainFailure(const std::string& what, int status, const std::string& err) {
  std::string cause = what + " " + DescribeWaitStatus(status);
  if (!err.empty()) cause += ": " + err;
  if (Contains(err, "perf_event_paranoid") || Contains(err, "ermission") ||
      Contains(err, "Access to performance monitoring") || Contains(err, "EACCES") ||
      Contains(err, "EPERM")) {
    cause +=
        " (perf is not permitted: run the agent as root or with CAP_PERFMON, or allow it with "
        "`sysctl kernel.perf_event_paranoid=-1`)";
  } else if (Contains(err, "not found for kernel") || Contains(err, "command not found")) {
    cause += " (install perf for this kernel: apt-get install linux-perf)";
  }
  return cause;
}

// A comm as a field value: printable ASCII, no ' ', ',' or '='; at most 200 bytes.
std::string CommValue(std::string_view comm) {
  std::string out;
  for (char c : comm.substr(0, 200)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u <= 0x20 || u >= 0x7f || c == ',' || c == '=') ? '_' : c;
  }
  if (out.empty()) out = "unknown";
  return out;
}

}  // namespace

Status ValidatePerfSourceOptions(const PerfSourceOptions& o) {
  if (o.callgraph != "fp" && o.callgraph != "dwarf" && o.callgraph != "lbr") {
    return Status::InvalidArgument("perf callgraph must be fp, dwarf or lbr, got '" + o.callgraph +
                                   "'");
  }
  if (o.frequency < 1 || o.frequency > 10'000) {
    return Status::InvalidArgument("perf frequency must be from 1 to 10000 Hz, got " +
                                   std::to_string(o.frequency));
  }
  if (o.window_ms < 200 || o.window_ms > 60'000) {
    return Status::InvalidArgument("perf window must be from 200 to 60000 ms, got " +
                                   std::to_string(o.window_ms));
  }
  if (o.perf_path.empty()) return Status::InvalidArgument("perf path is empty");
  if (o.max_depth < 1 || o.max_frame_bytes < 1) {
    return Status::InvalidArgument("perf max_depth and max_frame_bytes must be at least 1");
  }
  if (o.backoff_min_ms < 1 || o.backoff_max_ms < o.backoff_min_ms) {
    return Status::InvalidArgument("perf backoff must be 1 <= min <= max ms");
  }
  return Status::Ok();
}

PerfSource::PerfSource(PerfSourceOptions options, StackSink sink, OffsetSink offsets)
    : options_(std::move(options)), sink_(std::move(sink)), offsets_(std::move(offsets)) {}

PerfSource::~PerfSource() { Stop(); }

Status PerfSource::Start() {
  if (Status s = ValidatePerfSourceOptions(options_); !s.ok()) return s;
  if (thread_.joinable()) return Status::InvalidArgument("perf source already started");
  std::string base = options_.temp_dir;
  if (base.empty()) {
    const char* tmp = getenv("TMPDIR");
    base = (tmp != nullptr && tmp[0] != '\0') ? tmp : "/tmp";
  }
  std::string templ = base + "/trailmap-perf-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    return Status::IOError("perf source: cannot make a directory in " + base + ": " +
                           strerror(errno));
  }
  dir_ = templ;
  stopping_ = false;
  backoff_ms_ = options_.backoff_min_ms;
  // An unexpected error ends the run it happened in, as a failed perf run does: logged, counted,
  // and started again after the backoff.
  thread_ = std::thread([this] {
    while (!CatchAtBoundary("perf", &thread_failures_, [this] { Run(); })) {
      if (!SleepFor(options_.backoff_max_ms)) return;
    }
  });
  return Status::Ok();
}

void PerfSource::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (!dir_.empty()) {
    for (const char* name : {"record.err", "script.err"}) unlink((dir_ + "/" + name).c_str());
    rmdir(dir_.c_str());
    dir_.clear();
  }
}

PerfSourceStats PerfSource::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  PerfSourceStats s = stats_;
  s.thread_failures = thread_failures_.load(std::memory_order_relaxed);
  return s;
}

bool PerfSource::SleepFor(int64_t ms) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(std::max<int64_t>(ms, 0)),
               [this] { return stopping_.load(); });
  return !stopping_;
}

void PerfSource::Fail(const std::string& cause) {
  bool log;
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.failures;
    n = stats_.failures;
    stats_.last_error = cause;
    log = cause != last_logged_;
    last_logged_ = cause;
  }
  if (log) {
    Log("perf source: " + cause + "; stack sampling is off, retrying in " +
        std::to_string(backoff_ms_ / 1000.0).substr(0, 5) + " s (failure " + std::to_string(n) +
        ", the agent's other sources keep running)");
  }
}

namespace {

// The window files perf has finished ("w.data.<timestamp>"), oldest first.
std::vector<std::string> FinishedWindows(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string_view name = e->d_name;
      if (name.starts_with("w.data.")) out.push_back(dir + "/" + std::string(name));
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

// Reads one finished window file with perf script and delivers its counts. "" on success,
// else the cause; `stopped` when Stop() interrupted it.
std::string PerfSource::ReadWindow(const std::string& file, int64_t fallback_second,
                                   bool* stopped) {
  const std::string err_script = dir_ + "/script.err";
  SpawnSpec spec;
  spec.argv = {options_.perf_path,
               "script",
               "-i",
               file,
               "--no-inline",
               "-F",
               "comm,pid,tid,time,event,ip,sym,dso"};
  spec.pipe_stdout = true;
  spec.stderr_file = err_script;
  Result<Child> spawned = SpawnChild(spec);
  if (!spawned.ok()) return spawned.status().message();
  Child script = *spawned;
  std::map<std::tuple<int64_t, std::string, std::string>, uint64_t> counts;
  uint64_t samples = 0, untimed = 0, cut_stacks = 0, cut_frames = 0, recovered = 0;
  CollapseOptions copt;
  copt.annotate_kernel = true;
  copt.annotate_jit = true;
  StackCollapser collapser(copt);
  const int64_t now = UnixSecondsNow();
  const int64_t lo = now - 600, hi = now + 60;  // a sample time outside is not believed
  std::string fields, stack;
  std::vector<std::pair<int64_t, uint64_t>> offsets;  // (second, offset ns) of timed samples
  collapser.SetRecordSink([&](const CollapsedRecord& r) {
    ++samples;
    int64_t second = r.time_ns / 1'000'000'000;
    if (!r.has_time || second < lo || second > hi) {
      second = fallback_second;
      ++untimed;
    } else if (offsets_) {
      offsets.emplace_back(second, static_cast<uint64_t>(r.time_ns - second * 1'000'000'000));
    }
    // perf writes ":TID" for a thread whose COMM event it lost (at a window's seam, when the
    // thread started while perf switched files): use the name seen for that pid before.
    std::string_view comm = r.comm;
    if (comm.size() > 1 && comm[0] == ':' &&
        comm.find_first_not_of("0123456789", 1) == std::string_view::npos) {
      if (auto it = known_comms_.find(std::string(r.pid)); it != known_comms_.end()) {
        comm = it->second;
        ++recovered;
      }
    } else if (r.pid != "?") {
      if (known_comms_.size() > 100'000) known_comms_.clear();
      auto [it, added] = known_comms_.try_emplace(std::string(r.pid), comm);
      if (!added && it->second != comm) it->second = std::string(comm);
    }
    fields = "execname=" + CommValue(comm);
    if (options_.pid_field) {
      fields += ",pid=";
      fields += r.pid;
    }
    stack.clear();
    const std::vector<std::string_view>& frames = *r.frames;
    const size_t depth = std::min(frames.size(), options_.max_depth);
    if (depth < frames.size()) ++cut_stacks;
    for (size_t i = 0; i < depth; ++i) {
      if (i > 0) stack += ';';
      std::string_view f = frames[i];
      if (f.size() > options_.max_frame_bytes) {
        f = f.substr(0, options_.max_frame_bytes);
        ++cut_frames;
      }
      stack += f;
    }
    if (stack.empty()) stack = "[unknown]";
    counts[{second, fields, stack}] += 1;  // a sample, whatever its period
  });
  char buf[65536];
  while (true) {
    if (stopping_) {
      StopChild(&script, SIGKILL, std::chrono::milliseconds(2000));
      *stopped = true;
      return "";
    }
    pollfd pfd{script.out_fd, POLLIN, 0};
    const int pr = poll(&pfd, 1, 100);
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) continue;
    const ssize_t n = read(script.out_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    collapser.Add(std::string_view(buf, static_cast<size_t>(n)));
  }
  collapser.Add("\n");  // perf script ends its last record with a blank line; be sure
  collapser.Finish();
  close(script.out_fd);
  script.out_fd = -1;
  const int status = ReapChild(script.pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return ExplainFailure("perf script", status, ErrTail(err_script));
  }
  uint64_t delivered = 0;
  for (auto& [key, count] : counts) {
    StackSample sample;
    sample.second = std::get<0>(key);
    sample.metric = options_.metric;
    sample.fields = std::get<1>(key);
    const std::string& text = std::get<2>(key);
    for (size_t start = 0;;) {
      const size_t semi = text.find(';', start);
      sample.frames.emplace_back(
          text.substr(start, semi == std::string::npos ? semi : semi - start));
      if (semi == std::string::npos) break;
      start = semi + 1;
    }
    sample.count = count;
    sink_(std::move(sample));
    ++delivered;
  }
  for (const auto& [second, offset] : offsets) offsets_(second, offset);
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.windows;
  stats_.samples += samples;
  stats_.stack_samples += delivered;
  stats_.offsets += offsets.size();
  stats_.untimed_samples += untimed;
  stats_.truncated_stacks += cut_stacks;
  stats_.truncated_frames += cut_frames;
  stats_.malformed_lines += collapser.stats().malformed_lines;
  stats_.recovered_comms += recovered;
  return "";
}

void PerfSource::Run() {
  const std::string err_record = dir_ + "/record.err";
  const std::string out = dir_ + "/w.data";
  std::vector<std::string> argv{options_.perf_path, "record", "-F",
                                std::to_string(options_.frequency), "-a"};
  if (options_.callgraph == "fp") {
    argv.push_back("-g");
  } else {
    argv.push_back("--call-graph");
    argv.push_back(options_.callgraph);
  }
  for (const char* a :
       {"-e", "cpu-clock", "-k", "CLOCK_REALTIME", "-N", "-B", "--switch-output=signal", "-o"}) {
    argv.push_back(a);
  }
  argv.push_back(out);

  auto remove_windows = [&] {
    for (const std::string& f : FinishedWindows(dir_)) unlink(f.c_str());
    unlink(out.c_str());
  };
  // After a failure: wait the backoff (doubling); false when stopping.
  auto back_off = [&] {
    const int64_t wait = backoff_ms_;
    backoff_ms_ = std::min(backoff_ms_ * 2, options_.backoff_max_ms);
    return SleepFor(wait);
  };

  Child record;
  bool switched = false;  // window_started is the last switch of the running perf
  Clock::time_point window_started;
  int64_t window_second = 0;
  while (!stopping_) {
    if (!record.running()) {
      switched = false;
      remove_windows();
      SpawnSpec spec;
      spec.argv = argv;
      spec.stderr_file = err_record;  // O_APPEND: truncated below while perf writes it
      Result<Child> spawned = SpawnChild(spec);
      if (!spawned.ok()) {
        Fail(spawned.status().message() +
             " (install linux-perf: apt-get install linux-perf, or set the perf path)");
        if (!back_off()) break;
        continue;
      }
      record = *spawned;
    }
    // Let the window run its length from the last switch (reading the previous window took
    // part of it), watching for perf dying (not permitted, etc.).
    if (!switched) {
      window_started = Clock::now();
      window_second = UnixSecondsNow();
    }
    bool died = false;
    while (!stopping_ && MsSince(window_started) < options_.window_ms) {
      int status = 0;
      if (waitpid(record.pid, &status, WNOHANG) == record.pid) {
        record.pid = -1;
        Fail(ExplainFailure("perf record", status, ErrTail(err_record)));
        died = true;
        break;
      }
      SleepFor(std::min<int64_t>(100, options_.window_ms - MsSince(window_started)));
    }
    if (stopping_) break;
    if (died) {
      if (!back_off()) break;
      continue;
    }
    // Ask perf for the window (it renames w.data to w.data.<timestamp> and goes on in a new
    // w.data), then read every finished window while the next one records.
    // perf installs its SIGUSR2 handler before it creates w.data; until then the signal would
    // kill it (a slow start on a loaded box), so that window just runs longer.
    struct stat out_stat {};
    if (stat(out.c_str(), &out_stat) != 0) continue;
    const size_t before = FinishedWindows(dir_).size();
    kill(record.pid, SIGUSR2);
    const Clock::time_point asked = Clock::now();
    const int64_t fallback_second = window_second;
    window_started = asked;
    window_second = UnixSecondsNow();
    switched = true;
    // perf drops a SIGUSR2 that arrives before it is ready to switch (still describing every
    // process at start-up): ask again every 500 ms until a file comes. (A second switch that
    // does happen only makes a short extra window, read like the others.)
    Clock::time_point last_ask = asked;
    bool perf_ended = false;
    while (!stopping_ && FinishedWindows(dir_).size() == before && MsSince(asked) < 30'000) {
      siginfo_t info{};
      if (waitid(P_PID, static_cast<id_t>(record.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid != 0) {
        perf_ended = true;  // the window wait above reaps it and says why
        break;
      }
      if (MsSince(last_ask) >= 500) {
        kill(record.pid, SIGUSR2);
        last_ask = Clock::now();
      }
      SleepFor(10);
    }
    if (perf_ended) continue;
    bool stopped = false;
    std::string error;
    for (const std::string& file : FinishedWindows(dir_)) {
      if (error.empty() && !stopped) error = ReadWindow(file, fallback_second, &stopped);
      unlink(file.c_str());
    }
    if (stopped) break;
    if (!error.empty()) {
      Fail(error);
      if (!back_off()) break;
      continue;
    }
    bool recovered = false;
    uint64_t failures = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      recovered = !stats_.last_error.empty();
      failures = stats_.failures;
      stats_.last_error.clear();
      last_logged_.clear();
    }
    if (recovered) {
      Log("perf source: stack sampling works again after " + std::to_string(failures) +
          " failures");
    }
    backoff_ms_ = options_.backoff_min_ms;
    truncate(err_record.c_str(), 0);
  }
  StopChild(&record, SIGINT, std::chrono::milliseconds(2000));
  remove_windows();
}

}  // namespace trailmap
