// RunParts: the query scans' one way of splitting work over threads (the histogram scan's time
// slices, a region's band count): part 0 on the calling thread, each other part on a thread of
// its own, or on the calling thread when no thread can be had. Returns once every part has.
//
// Thread safety: `fn` is called on several threads at once, each with its own index.
#pragma once

#include <system_error>
#include <thread>
#include <vector>

namespace trailmap::aggregator {

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

}  // namespace trailmap::aggregator
