// BucketSpans: every bucket's bounds as doubles, computed once from BucketLower and BucketUpper
// (core/histogram.h). The views read a bucket's bounds for every bucket of every cell (columns'
// shape statistics, heat-map rows, trail densities); BucketLower and BucketUpper are calls into
// histogram.cc, and a table read is a load (docs/benchmarks-log.md, "The views at fleet scale").
#pragma once

#include <cstdint>

namespace trailmap {

struct BucketSpan {
  double lower;     // static_cast<double>(BucketLower(index))
  double end;       // static_cast<double>(BucketUpper(index)) + 1: the bucket as [lower, end)
  double midpoint;  // static_cast<double>(BucketMidpoint(index))
};

// kBucketCount entries, indexed by bucket; built on first use (thread-safe), never freed.
const BucketSpan* BucketSpans();

}  // namespace trailmap
