#include "aggregator/store/periodic_thread.h"

#include <exception>
#include <utility>

#include "core/log.h"

namespace trailmap::aggregator {

bool RunCaught(const std::string& name, std::atomic<uint64_t>* failures,
               const std::function<void()>& body) {
  std::string what;
  try {
    body();
    return true;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an exception that is not a std::exception";
  }
  failures->fetch_add(1, std::memory_order_relaxed);
  Log(name + ": " + what);
  return false;
}

void PeriodicThread::Start(std::string name, std::chrono::milliseconds interval,
                           std::function<bool()> task) {
  name_ = std::move(name);
  thread_ = std::thread([this, interval, task = std::move(task)] { Loop(interval, task); });
}

void PeriodicThread::Loop(std::chrono::milliseconds interval, const std::function<bool()>& task) {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, interval, [this] { return stopping_; })) {
    lock.unlock();
    bool again = true;
    RunCaught(name_, &failures_, [&again, &task] { again = task(); });
    lock.lock();
    if (!again) return;
  }
}

void PeriodicThread::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool PeriodicThread::stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

}  // namespace trailmap::aggregator
