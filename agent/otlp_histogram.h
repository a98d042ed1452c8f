// OTLP histogram buckets into trailmap histogram events: pure functions, no state.
//
// An OTLP bucket says "c values lie in (lo, hi]", and trailmap's log-linear buckets
// (core/histogram.h) do not line up with it, so it cannot be split exactly. The rule here:
//
//   1. Every bucket becomes an integer range [lower, upper] in the series' base unit (ns, B), the
//      bounds rounded outwards (OtlpBucketRange), and is clipped to [min, max] when the point
//      carries them.
//   2. With a min (and a max), one event is recorded at exactly min (and one at exactly max),
//      taken from the first (last) non-empty bucket.
//   3. Every other event of a bucket is placed at the bucket's midpoint in log space,
//      sqrt(lower * upper) (upper / 2 when lower is 0).
//   4. When the point carries a sum, events are then moved within their own buckets, every
//      bucket by the same fraction of its room towards its upper (or lower) bound, until the
//      recorded values add up to exactly the sum (integers: c events at q and q + 1 split so).
//
// So count, min, max and sum are exact (the sum to the base unit: a double's seconds rounded to
// whole ns), and every event stays inside its source bucket. The error bound follows: a
// percentile trailmap reports lies in the source bucket that holds the true percentile, widened
// by trailmap's own bucket (its midpoint is within 1/128 of any value in it). For an
// exponential histogram of scale s, a bucket spans a factor 2^(2^-s), so the relative error is
// at most 2^(2^-s) - 1 plus 0.8% (scale 3: 9.1% + 0.8%; scale 8: 0.27% + 0.8%). For explicit
// buckets it is the bucket's own width: (100ms, 250ms] reports anything in 99.2..252 ms.
//
// A sum that the buckets cannot hold (below the sum of lower bounds or above the sum of upper
// bounds, by more than one base unit per event, which is rounding) is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/varint.h"

namespace trailmap {

// One OTLP bucket in base-unit integers: `count` events in [lower, upper] (lower <= upper).
struct OtlpBucket {
  uint64_t lower = 0;
  uint64_t upper = 0;
  uint64_t count = 0;
};

// A histogram point's buckets (increasing, not overlapping) and its optional exact statistics,
// in base-unit integers. The caller bounds the total count (at most kMaxItemCount).
struct OtlpBuckets {
  std::vector<OtlpBucket> buckets;
  std::optional<uint64_t> min;
  std::optional<uint64_t> max;
  std::optional<uint128_t> sum;
};

// `count` events to record at `value`.
struct PlacedValue {
  uint64_t value = 0;
  uint64_t count = 0;
  bool operator==(const PlacedValue&) const = default;
};

// The events (rule above) in increasing value order, equal values not merged. InvalidArgument for
// a sum the buckets cannot hold, or a min above the max.
Result<std::vector<PlacedValue>> PlaceOtlpBuckets(OtlpBuckets buckets);

// The integer range of the source bucket (lo, hi] (in the metric's unit) times `multiplier`
// (base units per metric unit): [floor(lo * m), ceil(hi * m)]. False when it does not fit in
// uint64 (hi * m >= 2^64) or a bound is not finite or negative.
bool OtlpBucketRange(double lo, double hi, double multiplier, OtlpBucket* out);

// `value * multiplier` rounded to the nearest integer, for min, max and sum; false when it is
// negative, not finite or does not fit.
bool OtlpBaseUnits(double value, double multiplier, uint128_t* out);

// The bounds of bucket `index` of an exponential histogram of `scale`: (base^index,
// base^(index+1)], base = 2^(2^-scale). Bounds past a double's range come back as infinity or 0.
void ExponentialBucketBounds(int32_t scale, int64_t index, double* lo, double* hi);

}  // namespace trailmap
