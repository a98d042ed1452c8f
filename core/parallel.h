// Work split over threads, one way for every component: the aggregator's query scans (time
// slices, a region's band count, the stack pass) and the views' per-host and per-column loops
// (1,000 hosts' statistics or spreads are independent, and the CLI has the machine's cores to
// itself once the aggregators have answered), and a large document made in parts on the cores
// while it is written out in order (ParallelInOrder).
//
// Thread safety: `fn` / `body` / `make` is called on several threads at once, each with its own
// index.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

namespace trailmap {

// Part 0 on the calling thread, each other part on a thread of its own, or on the calling
// thread when no thread can be had. Returns once every part has. What a part throws is caught at
// its thread's boundary and, once every part has ended, thrown here, on the calling thread (the
// first part's, by index): the caller's boundary is the parts'.
template <typename Fn>
void RunParts(int parts, Fn&& fn) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(std::max(parts, 0)));
  const auto part = [&fn, &errors](int i) {
    try {
      fn(i);
    } catch (...) {
      errors[static_cast<size_t>(i)] = std::current_exception();
    }
  };
  std::vector<std::thread> helpers;
  for (int i = 1; i < parts; ++i) {
    try {
      helpers.emplace_back(part, i);
    } catch (const std::system_error&) {  // no thread to be had: run the part here
      part(i);
    }
  }
  if (parts > 0) part(0);
  for (std::thread& t : helpers) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// Calls body(i) once for each i in [0, n): on this thread alone when n is under `min_parallel`,
// else as RunParts on up to four parts (the cores, at most four), part w taking i = w,
// w + parts, ... So body may write slot i of a presized vector without a lock, and must touch
// no other slot.
template <typename F>
void ParallelFor(size_t n, size_t min_parallel, const F& body) {
  const size_t parts =
      n < min_parallel ? 1 : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
  RunParts(static_cast<int>(parts), [n, parts, &body](int part) {
    for (size_t i = static_cast<size_t>(part); i < n; i += parts) body(i);
  });
}

// Calls make(i) for each i in [0, n) on up to four threads (the cores), and consume(i, result)
// on the calling thread in order of i, each as soon as its result and those before it are made:
// writing a document out overlaps making its later parts, and each part is freed once consumed,
// so the next ones reuse its memory (1,000 trails as JSON are 14 MB, and on this project's
// virtualized machine every first touch of a page costs). Under `min_parallel` everything runs
// on this thread, one index after the other. make's result type must be movable. What make or
// consume throws stops the rest (no index is started after it) and is thrown here once the
// threads have ended.
template <typename Make, typename Consume>
void ParallelInOrder(size_t n, size_t min_parallel, const Make& make, const Consume& consume) {
  using Result = decltype(make(size_t{0}));
  const size_t workers =
      n < min_parallel ? 0 : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
  std::vector<std::thread> threads;
  std::vector<std::optional<Result>> made(n);
  std::mutex mu;
  std::condition_variable ready;
  std::atomic<size_t> next{0};
  std::exception_ptr failed;  // guarded by mu: the first thing a worker threw
  const auto work = [&] {
    try {
      for (size_t i; (i = next.fetch_add(1)) < n;) {
        Result r = make(i);
        {
          std::lock_guard lock(mu);
          made[i].emplace(std::move(r));
        }
        ready.notify_all();
      }
    } catch (...) {
      next = n;  // no worker takes another index
      {
        std::lock_guard lock(mu);
        if (!failed) failed = std::current_exception();
      }
      ready.notify_all();
    }
  };
  for (size_t w = 0; w < workers; ++w) {
    try {
      threads.emplace_back(work);
    } catch (const std::system_error&) {  // no thread to be had: those started make the rest
      break;
    }
  }
  std::exception_ptr error;
  try {
    for (size_t i = 0; i < n; ++i) {
      std::optional<Result> r;
      if (threads.empty()) {
        r.emplace(make(i));
      } else {
        std::unique_lock lock(mu);
        ready.wait(lock, [&made, &failed, i] { return made[i].has_value() || failed; });
        if (!made[i]) break;  // a worker failed before making it
        r = std::move(made[i]);
        made[i].reset();
      }
      consume(i, std::move(*r));
    }
  } catch (...) {
    error = std::current_exception();
    next = n;
  }
  for (std::thread& t : threads) t.join();
  if (!error) error = failed;
  if (error) std::rethrow_exception(error);
}

}  // namespace trailmap
