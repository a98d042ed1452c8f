// PerfSource: CPU stacks of the whole host from Linux perf, as per-second StackSamples.
//
// What it runs (no shell; posix_spawn with argument vectors):
//
//   perf record -F FREQ -a -g|--call-graph dwarf|lbr -e cpu-clock -k CLOCK_REALTIME -N -B
//               --switch-output=signal -o DIR/w.data
//   perf script -i DIR/w.data.<timestamp> --no-inline -F comm,pid,tid,time,event,ip,sym,dso
//
// One `perf record` runs for as long as the source does, cut into rolling windows of
// `window_ms`: every window the source sends it SIGUSR2, perf closes the window's file as
// w.data.<timestamp> and goes on recording into a new one without a gap (a perf started per
// window would lose its start-up time, a large share of a window on a loaded box), and the
// finished window is read with `perf script` while the next one records. `perf script` text is
// folded per sample by stacks/stack_collapse's rules (kernel frames
// "_[k]", JIT frames "_[j]", offsets stripped, `[unknown]` named after the module), and counted
// per (second, execname, pid, stack); the second is the sample's own timestamp, unix time
// because of -k CLOCK_REALTIME. Each window's counts go to the sink as StackSamples, oldest
// second first, from the source's thread, once the window is read (so a sample reaches the sink
// about 1-2 windows after it was taken). A second that straddles two windows is delivered in two
// parts: the sink must add counts up. Frames run root first and do not include the process
// name (that is the `execname` field); each is cut to `max_frame_bytes` and a stack to
// `max_depth` frames (the leaf end is dropped), both counted.
//
// Sub-second offsets (FlameScope's view for the fleet, query/views/subsecond.h): with an offset
// sink, every timed sample's offset within its second (time_ns mod 1 s, perf's µs precision)
// also goes to it, once the window is read, with the sample's second. The agent records them as
// the latency-kind histogram `cpu.offsets` (ns) of the host alone, no fields: a host-second of
// samples is one histogram, stored, rolled up and kept as any other (no new storage). Samples
// without a believable time have no offset and are left out of it.
//
// Fields: "execname=COMM,pid=PID" (pid left out with pid_field = false, to bound cardinality).
// COMM has spaces, ',' and '=' replaced by '_' so it is a valid field value (core/series.h).
// Seams: perf re-reads /proc for every new window file, but a thread that starts while it
// switches can lose its COMM and MMAP events for the next window: perf names it ":TID" (the
// source then uses the name last seen for that pid, counted in recovered_comms) and its frames
// may be "[unknown]" for that window.
//
// Degrading: when perf is missing, forbidden (kernel.perf_event_paranoid, no CAP_PERFMON) or
// fails, the source logs one line naming the cause and what to do (install linux-perf, `sysctl
// kernel.perf_event_paranoid=-1`, run as root), counts the failure (stats().failures,
// last_error) and tries again after a backoff doubling from 1 s to 5 min; the same message is
// not repeated while it keeps failing the same way. The rest of the agent is not affected.
//
// Files: a private directory (mkdtemp under `temp_dir`, default $TMPDIR or /tmp) holding at
// a window or two; each is removed once read, and the directory on Stop().
// Stop(): stops the recording perf (SIGINT, then SIGKILL after 2 s), kills a running perf
// script, reaps every child and joins the thread; the window in progress is not delivered.
// (`perf script --no-inline`: perf's default would run addr2line for every frame.)
//
// Thread safety: Start/Stop from one thread; stats() from any.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/status.h"
#include "ingest/stack_sample.h"

namespace trailmap {

struct PerfSourceOptions {
  std::string perf_path = "perf";  // a name is looked up in PATH
  int frequency = 99;              // samples per second per CPU (-F)
  // Length of one window. Each window costs a fixed ~0.25 CPU s (perf re-reads /proc for the
  // new file, perf script loads symbols again): on a 2-core box, 2 s windows cost 14% of a
  // core, 10 s windows 3% (docs/BENCHMARKS.md). Samples reach the sink 1-2 windows late.
  int64_t window_ms = 10'000;
  std::string callgraph = "fp";  // fp (-g), dwarf or lbr (--call-graph MODE)
  bool pid_field = true;         // add pid=PID to the fields
  // Record each timed sample's offset in its second as `cpu.offsets` (the sub-second map; about
  // 1-2 values a host-second more in the batch at 99 Hz). false: no offsets (perf.offsets).
  bool offsets = true;
  std::string metric = "cpu.stacks";
  std::string temp_dir;           // "" = $TMPDIR, or /tmp
  size_t max_depth = 1000;        // frames per stack
  size_t max_frame_bytes = 1000;  // bytes per frame name
  int64_t backoff_min_ms = 1000;  // first retry delay after a failure
  int64_t backoff_max_ms = 300'000;
};

// Checks the options ("perf callgraph must be fp, dwarf or lbr, got 'x'").
Status ValidatePerfSourceOptions(const PerfSourceOptions& options);

struct PerfSourceStats {
  uint64_t windows = 0;           // windows read and delivered
  uint64_t samples = 0;           // perf samples folded
  uint64_t stack_samples = 0;     // StackSamples delivered
  uint64_t offsets = 0;           // sub-second offsets delivered (timed samples, with a sink)
  uint64_t failures = 0;          // failed perf runs (record or script)
  uint64_t truncated_stacks = 0;  // stacks cut to max_depth
  uint64_t truncated_frames = 0;  // frame names cut to max_frame_bytes
  uint64_t untimed_samples = 0;   // samples without a usable time, counted at the window's start
  uint64_t malformed_lines = 0;   // perf script lines that did not parse
  uint64_t recovered_comms = 0;   // samples perf named ":TID", named from an earlier window
  uint64_t thread_failures = 0;   // unexpected errors its thread caught (logged; it goes on)
  std::string last_error;         // "" when the last attempt worked
};

// The metric the agent records offsets as (`trailmap subsecond` reads it by default).
inline constexpr const char* kCpuOffsetsMetric = "cpu.offsets";

// Where a timed sample's offset within its second goes (see above): the unix second and the
// offset in ns, 0..999'999'999. Called from the source's thread.
using OffsetSink = std::function<void(int64_t second, uint64_t offset_ns)>;

class PerfSource {
 public:
  // `offsets` may be empty: no offsets are delivered.
  PerfSource(PerfSourceOptions options, StackSink sink, OffsetSink offsets = {});
  ~PerfSource();  // Stop()
  PerfSource(const PerfSource&) = delete;
  PerfSource& operator=(const PerfSource&) = delete;

  // Creates the private directory and starts the thread. An error only for bad options or when
  // the directory cannot be made; perf's own problems are handled by degrading (see above).
  Status Start();
  void Stop();

  PerfSourceStats stats() const;

 private:
  void Run();
  std::string ReadWindow(const std::string& file, int64_t fallback_second, bool* stopped);
  bool SleepFor(int64_t ms);  // false when stopping
  void Fail(const std::string& cause);

  PerfSourceOptions options_;
  StackSink sink_;
  OffsetSink offsets_;
  std::string dir_;
  std::thread thread_;
  std::atomic<uint64_t> thread_failures_{0};
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  PerfSourceStats stats_;
  std::string last_logged_;
  int64_t backoff_ms_ = 0;
  std::unordered_map<std::string, std::string> known_comms_;  // pid → comm, the Run thread's
};

}  // namespace trailmap
