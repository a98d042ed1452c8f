// Histogram: a log-linear distribution of unsigned 64-bit values with one fixed global layout,
// so any two histograms merge by adding counts.
//
// Layout (every histogram, everywhere):
//   - values below 128 each have their own bucket (index = value): exact;
//   - each power of two [2^e, 2^(e+1)) for e = 7..63 is split into 64 equal buckets:
//       index = 128 + (e - 7) * 64 + ((value >> (e - 6)) & 63)
//     so a bucket is 2^(e-6) wide, at most 1/64 of its lower bound, and its midpoint is within
//     1/128 (0.78%) of any value in it. There are kBucketCount = 128 + 57 * 64 = 3776 buckets,
//     covering all of uint64: no value is ever out of range or clamped.
// Besides the buckets a histogram keeps the exact count, sum, min and max of what it holds.
//
// Sparse encoding (Encode / Decode), all integers LEB128 varints (core/varint.h):
//
//   histogram := version nbuckets [ min spread excess bucket{nbuckets} ]
//   version   := 0x01                    one byte
//   nbuckets  := varint                  non-empty buckets; 0 = empty, and nothing follows
//   min       := varint                  exact minimum value
//   spread    := varint                  max - min
//   excess    := varint (up to 128 bits) sum - count * min
//   bucket    := gap count               in increasing index order
//   gap       := varint                  index - (previous index + 1); the first is its index
//   count     := varint                  >= 1
//
// The total count is the sum of the bucket counts. Decode refuses anything that does not hold
// together: a bad version, a truncated or overlong varint, an index past the layout, a zero
// count, min or max outside the first or last bucket, a sum outside [count*min, count*max],
// trailing bytes.
//
// Worked example: the values 3, 3, 200, 1000 fall in buckets 3 (exact), 164 ([200, 201]) and
// 317 ([1000, 1007]); count 4, min 3, max 1000, sum 1206. Encoded (12 bytes):
//   01          version
//   03          three buckets
//   03          min 3
//   e5 07       spread 997
//   aa 09       excess 1206 - 4 * 3 = 1194
//   03 02       bucket 3 (gap 3), count 2
//   a0 01 01    bucket 164 (gap 164 - 4 = 160), count 1
//   98 01 01    bucket 317 (gap 317 - 165 = 152), count 1
//
// Counts are bounded (core/counts.h): one batch item holds at most kMaxItemCount events
// (ValidateItem), and no histogram ever holds more than kMaxTotalCount. A Record or Merge whose
// total would pass kMaxTotalCount saturates instead of failing, so no valid input can make a
// merge fail (an encoding that does not decode still does). Saturating scales every bucket by
// kMaxTotalCount / total, rounding down but keeping each non-empty bucket at least 1, and puts
// the rounding difference on the largest bucket, so the count is exactly kMaxTotalCount; min and
// max stay; the sum is scaled by the same factor, so the mean stays (within rounding) and the
// result still decodes. The proportions of the distribution, hence every percentile, are kept;
// what is lost is the absolute count past 2^62, and saturated() says so.
//
// Saturation example: a = {2^61 events of 10, 2^61 events of 1000} (count 2^62) merged with
// b = {2^61 events of 10}: the total 3 * 2^61 passes 2^62, so bucket 10 gets
// floor(2^62 * 2^62 / (3 * 2^61)) = 3074457345618258602 and bucket 317 (1000) gets
// floor(2^61 * 2^62 / (3 * 2^61)) = 1537228672809129301; the sum of those is 2^62 - 1, so the
// largest bucket takes the 1: 3074457345618258603 events of 10 (2/3) and 1537228672809129301 of
// 1000 (1/3), count 2^62, min 10, max 1000, saturated() true.
//
// Thread safety: a Histogram is a value type; concurrent reads are safe, writes need a lock.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/counts.h"
#include "core/status.h"
#include "core/varint.h"

namespace trailmap {

inline constexpr uint32_t kExactBuckets = 128;
inline constexpr uint32_t kSubBucketBits = 6;  // 64 buckets per power of two
inline constexpr uint32_t kBucketCount = kExactBuckets + (64 - 7) * (1u << kSubBucketBits);

// The bucket a value falls in.
inline uint32_t BucketIndex(uint64_t value) {
  if (value < kExactBuckets) return static_cast<uint32_t>(value);
  const uint32_t e = 63 - static_cast<uint32_t>(std::countl_zero(value));
  return kExactBuckets + ((e - 7) << kSubBucketBits) +
         static_cast<uint32_t>((value >> (e - kSubBucketBits)) & 63);
}
// The smallest value in bucket `index` (index < kBucketCount).
uint64_t BucketLower(uint32_t index);
// The largest value in bucket `index`, inclusive (so the top bucket needs no 2^64).
uint64_t BucketUpper(uint32_t index);
// The value reported for the bucket: the middle of [lower, upper], rounded down.
inline uint64_t BucketMidpoint(uint32_t index) {
  const uint64_t lo = BucketLower(index);
  return lo + (BucketUpper(index) - lo) / 2;
}

// The buckets whose reported values (midpoints) lie in [low, high]: what a comparison on a
// metric's value keeps. Midpoints grow with the index, so it is one index range.
struct BucketBand {
  uint32_t first = 1;  // first > last: no bucket
  uint32_t last = 0;
  static BucketBand Of(uint64_t low, uint64_t high);
  bool Holds(uint32_t index) const { return index >= first && index <= last; }
};

class Histogram {
 public:
  Histogram() = default;

  // Adds `count` occurrences of `value`; a total past kMaxTotalCount saturates (rule above).
  void Record(uint64_t value, uint64_t count = 1) {
    if (count == 0) return;
    if (count > kMaxTotalCount - count_) [[unlikely]] {
      RecordSaturating(value, count);
      return;
    }
    const uint32_t index = BucketIndex(value);
    if (index - first_ < counts_.size()) {
      counts_[index - first_] += count;
    } else {
      Grow(index);
      counts_[index - first_] += count;
    }
    if (count_ == 0 || value < min_) min_ = value;
    if (value > max_) max_ = value;
    count_ += count;
    sum_ += static_cast<uint128_t>(value) * count;
  }

  // Adds every count of `other`. Never fails: a total past kMaxTotalCount saturates (rule above).
  void Merge(const Histogram& other);
  // Decodes `encoded` and merges it in, saturating like Merge; on a decode error (Corruption)
  // nothing is changed. An encoding may hold up to 2^64 - 1 events (stores written before the
  // bounds); merged, it saturates like any other.
  Status MergeEncoded(std::string_view encoded);
  // The buckets of `encoded` in `band`, each recorded at its midpoint (Record(BucketMidpoint(i),
  // count)): what a value comparison keeps of a stored histogram. Walks the encoding's buckets
  // alone, never the span between them. On a decode error (Corruption) nothing is changed; an
  // encoding of more than kMaxTotalCount events is decoded (and so saturated) first, as Decode
  // does.
  Status MergeEncodedBand(std::string_view encoded, const BucketBand& band);
  // False when `encoded` holds no bucket of `band`, read from its header alone (its min and max
  // buckets lie on one side of the band): a scan skips it without walking its buckets, which are
  // then not checked. Corruption when the header is.
  static Result<bool> EncodedTouches(std::string_view encoded, const BucketBand& band);
  // How many of `encoded`'s events lie in `band`: the count a MergeEncodedBand into an empty
  // histogram would leave, without building one (region -> code counts a band per host-second).
  // The whole encoding is checked; Corruption when it does not decode.
  static Result<uint64_t> EncodedBandCount(std::string_view encoded, const BucketBand& band);

  // True once a Record or Merge into this histogram (or into one merged into it) saturated at
  // kMaxTotalCount: the count is then a floor, the proportions still hold. Not part of ==.
  bool saturated() const { return saturated_; }

  bool empty() const { return count_ == 0; }
  uint64_t count() const { return count_; }
  uint128_t sum() const { return sum_; }
  uint64_t min() const { return min_; }  // 0 when empty
  uint64_t max() const { return max_; }  // 0 when empty
  double mean() const {
    return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0;
  }
  // Nearest-rank percentile, p in [0, 100]: the midpoint of the bucket holding the value of rank
  // ceil(p/100 * count), clamped to [min, max]. 0 when empty.
  uint64_t Percentile(double p) const;
  // Standard deviation estimated from bucket midpoints; 0 when fewer than two values.
  double StdDev() const;
  // Number of non-empty buckets.
  size_t BucketsUsed() const;

  // Calls f(index, count) for every non-empty bucket in increasing index order.
  template <typename F>
  void ForEachBucket(F&& f) const {
    for (size_t i = 0; i < counts_.size(); ++i) {
      if (counts_[i]) f(static_cast<uint32_t>(first_ + i), counts_[i]);
    }
  }
  // The count in one bucket.
  uint64_t BucketCount(uint32_t index) const {
    return index - first_ < counts_.size() ? counts_[index - first_] : 0;
  }

  void Clear() { *this = Histogram(); }

  // Appends the sparse encoding (grammar above) to *out.
  void EncodeTo(std::string* out) const;
  std::string Encode() const {
    std::string out;
    EncodeTo(&out);
    return out;
  }
  // Decode of an encoding holding more than kMaxTotalCount events saturates (see MergeEncoded).
  static Result<Histogram> Decode(std::string_view encoded);
  // Checks an encoding exactly as Decode does, without building anything.
  static Status Validate(std::string_view encoded);
  // Checks one histogram that comes from outside as one item (a batch's histogram delta):
  // Validate's checks, and that it holds from 1 to kMaxItemCount events. InvalidArgument naming
  // the count for a count out of that range; Corruption for an encoding that does not decode.
  static Status ValidateItem(std::string_view encoded);

  friend bool operator==(const Histogram& a, const Histogram& b);

 private:
  void Grow(uint32_t index);
  // Covers [low, high]: an empty histogram gets exactly that window in one allocation (a decode
  // or a merge into nothing needs no slack), a non-empty one grows as Grow does.
  void Cover(uint32_t low, uint32_t high);
  void RecordSaturating(uint64_t value, uint64_t count);
  // Scales a histogram holding more than kMaxTotalCount (and less than 2^64) events down to
  // exactly kMaxTotalCount (rule above) and sets saturated_.
  void ScaleToMaxTotal();

  uint32_t first_ = 0;            // bucket index of counts_[0]
  std::vector<uint64_t> counts_;  // dense window over [first_, first_ + size)
  uint64_t count_ = 0;
  uint128_t sum_ = 0;
  uint64_t min_ = 0;
  uint64_t max_ = 0;
  bool saturated_ = false;
};

}  // namespace trailmap
