#include "core/bucket_spans.h"

#include <vector>

#include "core/histogram.h"

namespace trailmap {

const BucketSpan* BucketSpans() {
  static const std::vector<BucketSpan>* const spans = [] {
    auto* table = new std::vector<BucketSpan>(kBucketCount);
    for (uint32_t i = 0; i < kBucketCount; ++i) {
      (*table)[i] =
          BucketSpan{static_cast<double>(BucketLower(i)), static_cast<double>(BucketUpper(i)) + 1,
                     static_cast<double>(BucketMidpoint(i))};
    }
    return table;
  }();
  return spans->data();
}

}  // namespace trailmap
