#include "core/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

namespace trailmap {
namespace {

constexpr uint8_t kVersion = 1;

// The header of an encoded histogram: everything before the buckets.
struct Header {
  uint64_t nbuckets = 0;
  uint64_t min = 0;
  uint64_t max = 0;
  uint128_t excess = 0;  // sum - count * min
  size_t buckets_at = 0;  // offset of the first bucket
};

Status Corrupt(const std::string& what) { return Status::Corruption("histogram: " + what); }

Status ParseHeader(std::string_view in, Header* h) {
  if (in.empty()) return Corrupt("empty input");
  if (static_cast<uint8_t>(in[0]) != kVersion) {
    return Corrupt("unknown version " + std::to_string(static_cast<uint8_t>(in[0])));
  }
  size_t pos = 1;
  if (!GetVarint64(in, &pos, &h->nbuckets)) return Corrupt("truncated bucket count");
  if (h->nbuckets > kBucketCount) {
    return Corrupt(std::to_string(h->nbuckets) + " buckets, the layout has " +
                   std::to_string(kBucketCount));
  }
  if (h->nbuckets == 0) {
    if (pos != in.size()) return Corrupt("bytes after an empty histogram");
    h->buckets_at = pos;
    return Status::Ok();
  }
  uint64_t spread = 0;
  if (!GetVarint64(in, &pos, &h->min)) return Corrupt("truncated min");
  if (!GetVarint64(in, &pos, &spread)) return Corrupt("truncated max");
  if (spread > UINT64_MAX - h->min) return Corrupt("max past 2^64");
  h->max = h->min + spread;
  if (!GetVarint(in, &pos, &h->excess, 19)) return Corrupt("truncated sum");
  h->buckets_at = pos;
  return Status::Ok();
}

}  // namespace

uint64_t BucketLower(uint32_t index) {
  if (index < kExactBuckets) return index;
  const uint32_t j = index - kExactBuckets;
  const uint32_t e = 7 + (j >> kSubBucketBits);
  const uint64_t sub = j & 63;
  return (uint64_t{1} << e) + (sub << (e - kSubBucketBits));
}

uint64_t BucketUpper(uint32_t index) {
  if (index < kExactBuckets) return index;
  const uint32_t e = 7 + ((index - kExactBuckets) >> kSubBucketBits);
  return BucketLower(index) + ((uint64_t{1} << (e - kSubBucketBits)) - 1);
}

void Histogram::Grow(uint32_t index) {
  // Grow the dense window to cover `index`, with some slack so a spreading distribution does
  // not reallocate on every new bucket.
  constexpr uint32_t kSlack = 32;
  if (counts_.empty()) {
    first_ = index;
    counts_.assign(1, 0);
    return;
  }
  const uint32_t last = first_ + static_cast<uint32_t>(counts_.size()) - 1;
  if (index >= first_ && index <= last) return;  // already covered
  uint32_t new_first = first_, new_last = last;
  if (index < first_) new_first = index >= kSlack ? index - kSlack : 0;
  if (index > last) new_last = std::min(index + kSlack, kBucketCount - 1);
  std::vector<uint64_t> grown(new_last - new_first + 1, 0);
  std::copy(counts_.begin(), counts_.end(), grown.begin() + (first_ - new_first));
  counts_.swap(grown);
  first_ = new_first;
}

void Histogram::Cover(uint32_t low, uint32_t high) {
  if (counts_.empty()) {
    first_ = low;
    counts_.assign(high - low + 1, 0);
    return;
  }
  Grow(low);
  Grow(high);
}

void Histogram::Merge(const Histogram& other) {
  saturated_ = saturated_ || other.saturated_;
  if (other.empty()) return;
  // Both hold at most kMaxTotalCount = 2^62 events: bucket counts and the count add up below
  // 2^63, sums below 2^127. Only then is the total cut back.
  const uint32_t other_last = other.first_ + static_cast<uint32_t>(other.counts_.size()) - 1;
  Cover(other.first_, other_last);
  for (size_t i = 0; i < other.counts_.size(); ++i) counts_[other.first_ + i - first_] += other.counts_[i];
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
  if (count_ > kMaxTotalCount) ScaleToMaxTotal();
}

void Histogram::RecordSaturating(uint64_t value, uint64_t count) {
  Histogram one;
  one.first_ = BucketIndex(value);
  one.counts_.assign(1, count);
  one.count_ = count;
  one.min_ = one.max_ = value;
  one.sum_ = static_cast<uint128_t>(value) * count;
  if (count > kMaxTotalCount) one.ScaleToMaxTotal();
  Merge(one);
}

void Histogram::ScaleToMaxTotal() {
  // count_ < 2^64, so every product below is under 2^126.
  const uint64_t total = count_;
  uint64_t kept = 0;
  size_t largest = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) continue;
    const auto scaled = static_cast<uint64_t>(static_cast<uint128_t>(counts_[i]) * kMaxTotalCount / total);
    counts_[i] = std::max<uint64_t>(scaled, 1);
    kept += counts_[i];  // at most kMaxTotalCount + kBucketCount
    if (counts_[i] > counts_[largest]) largest = i;
  }
  // The largest bucket holds at least kMaxTotalCount / kBucketCount, far more than the rounding.
  counts_[largest] = counts_[largest] + kMaxTotalCount - kept;
  const uint128_t excess = sum_ - static_cast<uint128_t>(total) * min_;  // <= total * (max - min)
  const uint128_t scaled_excess =
      excess / total * kMaxTotalCount + excess % total * kMaxTotalCount / total;
  sum_ = static_cast<uint128_t>(kMaxTotalCount) * min_ + scaled_excess;
  count_ = kMaxTotalCount;
  saturated_ = true;
}

namespace {

// Reads a varint of at most 64 bits at in[*pos...], accepting exactly what GetVarint64 accepts:
// the one-byte form (nearly every gap and most counts of a stored histogram) without a call.
inline bool ReadVarint64(std::string_view in, size_t* pos, uint64_t* v) {
  if (*pos < in.size()) {
    const auto b = static_cast<uint8_t>(in[*pos]);
    if (b < 0x80) {
      *v = b;
      ++*pos;
      return true;
    }
  }
  return GetVarint64(in, pos, v);
}

// Reads the buckets of an encoding whose header is `h`, checking each, and calls add(index,
// count) for every bucket as it is read. Then checks the whole against the header. On an error
// *added says how many buckets were passed to `add` before it.
//
// The position, index and running total are locals, written out once at the end: through the
// pointers, every add into a histogram's uint64_t buckets could alias them, and the compiler
// kept them in memory (this loop is most of a query's CPU time: docs/benchmarks-log.md, "The views at fleet scale").
template <typename Add>
Status WalkBuckets(std::string_view in, const Header& h, Add&& add, uint64_t* total, uint64_t* added) {
  size_t pos = h.buckets_at;
  uint64_t index = 0, first = 0, sum = 0, b = 0;
  const auto stop = [&](Status s) {
    *total = sum;
    *added = b;
    return s;
  };
  for (; b < h.nbuckets; ++b) {
    // Four buckets at a time while their gaps and counts are all one-byte varints, nonzero
    // counts, and not the first bucket: 8 bytes read at once, so each bucket does not wait for
    // the previous one's length. Anything else goes through the checks below, one bucket.
    while (b > 0 && h.nbuckets - b >= 4 && in.size() - pos >= 8) {
      uint64_t w;
      std::memcpy(&w, in.data() + pos, 8);
      if constexpr (std::endian::native != std::endian::little) w = __builtin_bswap64(w);
      constexpr uint64_t kHigh = 0x8080808080808080u, kCounts = 0xff00ff00ff00ff00u;
      // A count byte of 0: (byte - 1) borrows into its high bit, which no 1-byte varint has.
      const uint64_t zero_count = ((w & kCounts) - 0x0100010001000100u) & ~w & kCounts & kHigh;
      if ((w & kHigh) != 0 || zero_count != 0 || sum > UINT64_MAX - 4 * 127) break;
      const uint64_t i0 = index + 1 + (w & 0x7f);
      const uint64_t i1 = i0 + 1 + ((w >> 16) & 0x7f);
      const uint64_t i2 = i1 + 1 + ((w >> 32) & 0x7f);
      const uint64_t i3 = i2 + 1 + ((w >> 48) & 0x7f);
      if (i3 >= kBucketCount) break;  // increasing: the last is the largest
      const uint64_t c0 = (w >> 8) & 0x7f, c1 = (w >> 24) & 0x7f, c2 = (w >> 40) & 0x7f,
                     c3 = (w >> 56) & 0x7f;
      add(static_cast<uint32_t>(i0), c0);
      add(static_cast<uint32_t>(i1), c1);
      add(static_cast<uint32_t>(i2), c2);
      add(static_cast<uint32_t>(i3), c3);
      sum += c0 + c1 + c2 + c3;
      index = i3;
      pos += 8;
      b += 4;
    }
    if (b == h.nbuckets) break;
    uint64_t gap = 0, count = 0;
    if (!ReadVarint64(in, &pos, &gap) || !ReadVarint64(in, &pos, &count)) [[unlikely]] {
      return stop(Corrupt("truncated at bucket " + std::to_string(b)));
    }
    index = (b == 0) ? gap : index + 1 + gap;
    if (gap >= kBucketCount || index >= kBucketCount) [[unlikely]] {
      return stop(Corrupt("bucket index past the layout at bucket " + std::to_string(b)));
    }
    if (count == 0) [[unlikely]] {
      return stop(Corrupt("bucket " + std::to_string(index) + " has count 0"));
    }
    if (count > UINT64_MAX - sum) [[unlikely]] return stop(Corrupt("total count past 2^64"));
    sum += count;
    if (b == 0) first = index;
    add(static_cast<uint32_t>(index), count);
  }
  if (pos != in.size()) return stop(Corrupt(std::to_string(in.size() - pos) + " trailing bytes"));
  if (h.nbuckets == 0) return stop(Status::Ok());
  if (BucketIndex(h.min) != first) return stop(Corrupt("min is not in the first bucket"));
  if (BucketIndex(h.max) != index) return stop(Corrupt("max is not in the last bucket"));
  const uint128_t low = static_cast<uint128_t>(sum) * h.min;
  if (h.excess > static_cast<uint128_t>(sum) * h.max - low) {
    return stop(Corrupt("sum is larger than count * max"));
  }
  return stop(Status::Ok());
}

}  // namespace

namespace {

// Validate's checks; *total receives the count.
Status Check(std::string_view encoded, uint64_t* total) {
  Header h;
  if (Status s = ParseHeader(encoded, &h); !s.ok()) return s;
  uint64_t added = 0;
  return WalkBuckets(encoded, h, [](uint32_t, uint64_t) {}, total, &added);
}

}  // namespace

Status Histogram::Validate(std::string_view encoded) {
  uint64_t total = 0;
  return Check(encoded, &total);
}

Status Histogram::ValidateItem(std::string_view encoded) {
  uint64_t total = 0;
  if (Status s = Check(encoded, &total); !s.ok()) return s;
  if (total == 0) return Status::InvalidArgument("empty histogram: an item holds at least one event");
  if (total > kMaxItemCount) {
    return Status::InvalidArgument("histogram of " + std::to_string(total) + " events: one item holds at most " +
                                   std::to_string(kMaxItemCount) + " (2^40)");
  }
  return Status::Ok();
}

Status Histogram::MergeEncoded(std::string_view encoded) {
  // One pass: buckets are added as they are read, and if the encoding turns out to be corrupt
  // (or to hold more than kMaxTotalCount) the ones already added are taken back out, so on error
  // nothing has changed. Corrupt input is rare; a second checking pass on every merge would
  // double the cost of every query.
  Header h;
  if (Status s = ParseHeader(encoded, &h); !s.ok()) return s;
  if (h.nbuckets == 0) return Status::Ok();
  // The header says which buckets are coming: widen the window once, not bucket by bucket.
  Cover(BucketIndex(h.min), BucketIndex(h.max));
  // The window in locals: a valid encoding stays inside it, only a corrupt one can leave it.
  uint64_t* window = counts_.data();
  uint32_t window_first = first_;
  size_t window_size = counts_.size();
  auto add = [&](uint32_t i, uint64_t count) {
    if (i - window_first >= window_size) [[unlikely]] {
      Grow(i);
      window = counts_.data();
      window_first = first_;
      window_size = counts_.size();
    }
    window[i - window_first] += count;  // may wrap for a total past 2^62: then it is taken back
  };
  uint64_t total = 0, added = 0;
  Status s = WalkBuckets(encoded, h, add, &total, &added);
  if (!s.ok() || total > kMaxTotalCount) {
    // Each walk gets its own total and count: WalkBuckets stops where its running total passes
    // 2^64, so with both in one variable a walk stopped earlier than the one it takes back and
    // left buckets behind (found by fuzz/histogram_fuzz).
    uint64_t undone = 0, walked_total = 0, walked = 0;
    auto subtract = [this, &undone, added](uint32_t i, uint64_t count) {
      if (undone++ < added) counts_[i - first_] -= count;
    };
    (void)WalkBuckets(encoded, h, subtract, &walked_total, &walked);
    if (!s.ok()) return s;
    // A valid encoding of more than kMaxTotalCount events (written before the bounds): built
    // apart, where its counts fit, cut to kMaxTotalCount, then merged.
    Histogram big;
    big.Cover(BucketIndex(h.min), BucketIndex(h.max));
    auto add_big = [&big](uint32_t i, uint64_t count) { big.counts_[i - big.first_] += count; };
    (void)WalkBuckets(encoded, h, add_big, &walked_total, &walked);
    big.count_ = total;
    big.min_ = h.min;
    big.max_ = h.max;
    big.sum_ = static_cast<uint128_t>(total) * h.min + h.excess;  // <= total * max < 2^128
    big.ScaleToMaxTotal();
    Merge(big);
    return Status::Ok();
  }
  min_ = count_ == 0 ? h.min : std::min(min_, h.min);
  max_ = std::max(max_, h.max);
  count_ += total;  // both at most 2^62
  sum_ += static_cast<uint128_t>(total) * h.min + h.excess;
  if (count_ > kMaxTotalCount) ScaleToMaxTotal();
  return Status::Ok();
}

BucketBand BucketBand::Of(uint64_t low, uint64_t high) {
  if (low > high) return {};
  // low's bucket unless its midpoint is below low, through high's unless its midpoint is above.
  const uint32_t lo = BucketIndex(low), hi = BucketIndex(high);
  const uint32_t first = lo + (BucketMidpoint(lo) < low ? 1 : 0);
  if (BucketMidpoint(hi) > high) {
    if (hi == 0) return {};
    return {first, hi - 1};
  }
  return {first, hi};
}

Result<bool> Histogram::EncodedTouches(std::string_view encoded, const BucketBand& band) {
  Header h;
  if (Status s = ParseHeader(encoded, &h); !s.ok()) return s;
  return h.nbuckets > 0 && band.first <= band.last && BucketIndex(h.max) >= band.first &&
         BucketIndex(h.min) <= band.last;
}

Result<uint64_t> Histogram::EncodedBandCount(std::string_view encoded, const BucketBand& band) {
  Header h;
  if (Status s = ParseHeader(encoded, &h); !s.ok()) return s;
  uint64_t in_band = 0, total = 0, added = 0;
  const auto count = [&](uint32_t i, uint64_t n) {
    if (band.Holds(i)) in_band += n;  // no overflow: WalkBuckets stops a total past 2^64
  };
  if (Status s = WalkBuckets(encoded, h, count, &total, &added); !s.ok()) return s;
  if (total > kMaxTotalCount) {
    // Rare (stores written before the bounds): scaled as MergeEncodedBand scales it.
    Histogram kept;
    if (Status s = kept.MergeEncodedBand(encoded, band); !s.ok()) return s;
    return kept.count();
  }
  return in_band;
}

Status Histogram::MergeEncodedBand(std::string_view encoded, const BucketBand& band) {
  Header h;
  if (Status s = ParseHeader(encoded, &h); !s.ok()) return s;
  if (h.nbuckets == 0 || band.first > band.last) {
    uint64_t total = 0;
    return Check(encoded, &total);  // nothing to add, but a corrupt encoding is still an error
  }
  // The buckets in the band are kept aside until the walk has checked the whole encoding; past
  // the few a latency band holds, they are walked again once it has.
  struct Kept {
    uint32_t index;
    uint64_t count;
  };
  Kept kept[64];  // uninitialized: only the first n are read
  size_t n = 0;
  bool more = false;
  auto keep = [&](uint32_t i, uint64_t count) {
    if (!band.Holds(i)) return;
    if (n < std::size(kept)) {
      kept[n++] = {i, count};
    } else {
      more = true;
    }
  };
  uint64_t total = 0, added = 0;
  if (Status s = WalkBuckets(encoded, h, keep, &total, &added); !s.ok()) return s;
  auto record = [this, &band](uint32_t i, uint64_t count) {
    if (band.Holds(i)) Record(BucketMidpoint(i), count);
  };
  if (total > kMaxTotalCount) {
    // Rare (stores written before the bounds): its counts are scaled as Decode scales them.
    Result<Histogram> whole = Decode(encoded);
    if (!whole.ok()) return whole.status();
    whole->ForEachBucket(record);
    if (whole->saturated()) saturated_ = true;
    return Status::Ok();
  }
  if (more) return WalkBuckets(encoded, h, record, &total, &added);
  for (size_t k = 0; k < n; ++k) Record(BucketMidpoint(kept[k].index), kept[k].count);
  return Status::Ok();
}

uint64_t Histogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  if (p <= 0) return min_;
  if (p >= 100) return max_;
  auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      return std::clamp(BucketMidpoint(static_cast<uint32_t>(first_ + i)), min_, max_);
    }
  }
  return max_;
}

double Histogram::StdDev() const {
  if (count_ < 2) return 0;
  const double m = mean();
  double acc = 0;
  ForEachBucket([&acc, m](uint32_t index, uint64_t count) {
    const double d = static_cast<double>(BucketMidpoint(index)) - m;
    acc += d * d * static_cast<double>(count);
  });
  return std::sqrt(acc / static_cast<double>(count_ - 1));
}

size_t Histogram::BucketsUsed() const {
  return static_cast<size_t>(std::count_if(counts_.begin(), counts_.end(), [](uint64_t c) { return c != 0; }));
}

namespace {

// Writes v as a varint at p, returning the end: the one-byte form first (most gaps and counts).
inline char* WriteVarint64(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(static_cast<uint8_t>(v) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

}  // namespace

void Histogram::EncodeTo(std::string* out) const {
  out->push_back(static_cast<char>(kVersion));
  const size_t nbuckets = BucketsUsed();
  PutVarint(out, nbuckets);
  if (nbuckets == 0) return;
  PutVarint(out, min_);
  PutVarint(out, max_ - min_);
  PutVarint(out, sum_ - static_cast<uint128_t>(count_) * min_);
  out->reserve(out->size() + 2 * nbuckets + 8);  // exact when every gap and count is one byte
  // The buckets go through a small buffer: a string's push_back per byte costs more than the
  // rest of the encoding (an answer encodes a cell per host: docs/benchmarks-log.md, "The views at fleet scale").
  char buffer[512];
  char* p = buffer;
  constexpr size_t kBucketMax = 20;  // two varints of up to 10 bytes
  uint32_t next = 0;                 // the index after the previous bucket (0 before the first)
  for (size_t i = 0; i < counts_.size(); ++i) {
    if (counts_[i] == 0) continue;
    if (p + kBucketMax > std::end(buffer)) {
      out->append(buffer, p);
      p = buffer;
    }
    const auto index = static_cast<uint32_t>(first_ + i);
    p = WriteVarint64(p, index - next);
    p = WriteVarint64(p, counts_[i]);
    next = index + 1;
  }
  out->append(buffer, p);
}

Result<Histogram> Histogram::Decode(std::string_view encoded) {
  Histogram h;
  if (Status s = h.MergeEncoded(encoded); !s.ok()) return s;
  return h;
}

bool operator==(const Histogram& a, const Histogram& b) {
  if (a.count_ != b.count_ || a.sum_ != b.sum_ || a.min_ != b.min_ || a.max_ != b.max_) return false;
  bool same = true;
  a.ForEachBucket([&b, &same](uint32_t index, uint64_t count) { same = same && b.BucketCount(index) == count; });
  return same && a.BucketsUsed() == b.BucketsUsed();
}

}  // namespace trailmap
