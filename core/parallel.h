// Work split over threads, one way for every component: the aggregator's query scans (time
// slices, a region's band count, the stack pass) and the views' per-host and per-column loops
// (1,000 hosts' statistics or spreads are independent, and the CLI has the machine's cores to
// itself once the aggregators have answered).
//
// Thread safety: `fn` / `body` is called on several threads at once, each with its own index.
#pragma once

#include <algorithm>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace trailmap {

// Part 0 on the calling thread, each other part on a thread of its own, or on the calling
// thread when no thread can be had. Returns once every part has.
template <typename Fn>
void RunParts(int parts, Fn&& fn) {
  std::vector<std::thread> helpers;
  for (int i = 1; i < parts; ++i) {
    try {
      helpers.emplace_back([&fn, i] { fn(i); });
    } catch (const std::system_error&) {  // no thread to be had: run the part here
      fn(i);
    }
  }
  if (parts > 0) fn(0);
  for (std::thread& t : helpers) t.join();
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

}  // namespace trailmap
