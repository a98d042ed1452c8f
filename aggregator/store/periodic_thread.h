// PeriodicThread: a task run every interval on a thread of its own, until stopped; how the
// store's parts (rollup_driver.h, backfill_driver.h, the Store's maintenance) keep their threads.
//
// The thread's boundary catches: a task that throws is logged ("NAME: EXCEPTION") and counted
// (failures(), the self-metric trailmap.aggregator.threads.failed), and the thread goes on with
// its next pass. Stop wakes it at once; a pass in progress ends first.
//
// Thread safety: Start and Stop from the owner's thread; stopping() and failures() from any.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace trailmap::aggregator {

class PeriodicThread {
 public:
  PeriodicThread() = default;
  ~PeriodicThread() { Stop(); }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Runs `task` every `interval` (the first time after one interval) until Stop, or until the
  // task returns false. `name` names the thread in the log.
  void Start(std::string name, std::chrono::milliseconds interval, std::function<bool()> task);
  // Wakes the thread and waits for it to end. Idempotent.
  void Stop();
  // Whether Stop was called (a long pass checks it to end early).
  bool stopping() const;
  // Passes that threw, since Start.
  uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }

 private:
  void Loop(std::chrono::milliseconds interval, const std::function<bool()>& task);

  std::string name_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::atomic<uint64_t> failures_{0};
  std::thread thread_;
};

// Runs `body` at a thread's boundary: an exception is logged as "NAME: WHAT", added to
// `*failures`, and not rethrown. Returns whether `body` ended without one.
bool RunCaught(const std::string& name, std::atomic<uint64_t>* failures,
               const std::function<void()>& body);

}  // namespace trailmap::aggregator
