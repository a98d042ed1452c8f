// Bounds on event counts, shared by every stage from a statsd line to a fleet query, so that no
// valid input can make a merge overflow (DESIGN.md, "Storage").
//
// Two bounds:
//   - kMaxItemCount: the most events one item of a batch may carry: one histogram delta (one
//     host, series and second), one stack count, one exec or folded line, one statsd sample
//     after its sample rate. 2^40 is ~1.1e12 events in one second of one series: no real host
//     comes near it, and it leaves 2^22 such items of room below kMaxTotalCount.
//     Over it, an item is refused at the edge with a reason, and counted.
//   - kMaxTotalCount: the most events any one histogram or stack count holds after merging
//     (a stored key, a rollup bucket, a query's cell or a fleet total). 2^62 keeps a histogram's
//     128-bit sum (count * a 64-bit value) below 2^126, so adding two sums cannot overflow
//     either. A merge that would pass it saturates at it and is counted, never fails.
#pragma once

#include <cstdint>

namespace trailmap {

inline constexpr uint64_t kMaxItemCount = uint64_t{1} << 40;
inline constexpr uint64_t kMaxTotalCount = uint64_t{1} << 62;

// a + b, but at most kMaxTotalCount; *saturated is set when the cap cut the sum.
inline uint64_t SaturatingCountAdd(uint64_t a, uint64_t b, bool* saturated) {
  if (a > kMaxTotalCount || b > kMaxTotalCount - a) {
    *saturated = true;
    return kMaxTotalCount;
  }
  return a + b;
}

}  // namespace trailmap
