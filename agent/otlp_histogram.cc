#include "agent/otlp_histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trailmap {

namespace {

__extension__ typedef __int128 int128_t;

constexpr long double kTwo64 = 18446744073709551616.0L;

uint64_t Clip(uint64_t v, uint64_t low, uint64_t high) { return std::min(std::max(v, low), high); }

// The log-space midpoint of [lower, upper] (upper / 2 from 0), rounded, inside the range.
uint64_t LogMidpoint(uint64_t lower, uint64_t upper) {
  if (lower == 0) return upper / 2;
  const long double mid = std::sqrt(static_cast<long double>(lower) * upper);
  return Clip(static_cast<uint64_t>(std::min(std::roundl(mid), static_cast<long double>(upper))),
              lower, upper);
}

std::string Text(uint128_t v) {
  std::string out;
  do {
    out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v != 0);
  return out;
}

}  // namespace

Result<std::vector<PlacedValue>> PlaceOtlpBuckets(OtlpBuckets in) {
  std::vector<OtlpBucket> b;
  uint64_t total = 0;
  for (const OtlpBucket& x : in.buckets) {
    if (x.count == 0) continue;
    b.push_back(x);
    total += x.count;
  }
  std::vector<PlacedValue> out;
  if (b.empty()) return out;
  if (in.min && in.max && *in.min > *in.max) {
    return Status::InvalidArgument("min " + Text(*in.min) + " is above max " + Text(*in.max));
  }
  if (total == 1 && in.min && in.max && *in.min != *in.max) {
    return Status::InvalidArgument("one value, but min " + Text(*in.min) + " and max " +
                                   Text(*in.max) + " differ");
  }
  const uint64_t low = in.min.value_or(0);
  const uint64_t high = in.max.value_or(std::numeric_limits<uint64_t>::max());
  for (OtlpBucket& x : b) {
    x.lower = Clip(x.lower, low, high);
    x.upper = Clip(x.upper, low, high);
  }
  // The exact min and max, each one event of the first and last bucket.
  if (in.min) {
    out.push_back({*in.min, 1});
    --b.front().count;
  }
  if (in.max && (total >= 2 || !in.min)) {
    out.push_back({*in.max, 1});
    --b.back().count;
  }
  std::vector<uint64_t> mid(b.size());
  std::vector<uint128_t> placed(b.size());  // each bucket's total value
  uint128_t sum_fixed = 0, sum_placed = 0, sum_low = 0, sum_high = 0;
  for (const PlacedValue& v : out) sum_fixed += v.value;
  for (size_t i = 0; i < b.size(); ++i) {
    mid[i] = LogMidpoint(b[i].lower, b[i].upper);
    placed[i] = static_cast<uint128_t>(mid[i]) * b[i].count;
    sum_placed += placed[i];
    sum_low += static_cast<uint128_t>(b[i].lower) * b[i].count;
    sum_high += static_cast<uint128_t>(b[i].upper) * b[i].count;
  }
  if (in.sum) {
    uint128_t target = *in.sum;
    const uint128_t lowest = sum_fixed + sum_low, highest = sum_fixed + sum_high;
    if ((lowest > total && target < lowest - total) || target > highest + total) {
      return Status::InvalidArgument("sum " + Text(target) + " is outside what the buckets hold [" +
                                     Text(lowest) + ", " + Text(highest) + "]");
    }
    target = std::clamp(target, lowest, highest) - sum_fixed;  // rounding: at most 1 per event
    // Every bucket moves by the same fraction of its room in the direction needed.
    const bool up = target > sum_placed;
    const uint128_t need = up ? target - sum_placed : sum_placed - target;
    const uint128_t room = up ? sum_high - sum_placed : sum_placed - sum_low;
    if (need != 0) {
      const long double fraction = static_cast<long double>(need) / static_cast<long double>(room);
      for (size_t i = 0; i < b.size(); ++i) {
        const uint128_t own = up ? static_cast<uint128_t>(b[i].upper - mid[i]) * b[i].count
                                 : static_cast<uint128_t>(mid[i] - b[i].lower) * b[i].count;
        const long double moved = std::floor(fraction * static_cast<long double>(own));
        const uint128_t step = std::min(own, static_cast<uint128_t>(moved));
        placed[i] = up ? placed[i] + step : placed[i] - step;
      }
      // What rounding left over, bucket by bucket within each one's range.
      int128_t rest = static_cast<int128_t>(target);
      for (const uint128_t p : placed) rest -= static_cast<int128_t>(p);
      for (size_t i = 0; i < b.size() && rest != 0; ++i) {
        if (rest > 0) {
          const uint128_t can = static_cast<uint128_t>(b[i].upper) * b[i].count - placed[i];
          const uint128_t step = std::min(can, static_cast<uint128_t>(rest));
          placed[i] += step;
          rest -= static_cast<int128_t>(step);
        } else {
          const uint128_t can = placed[i] - static_cast<uint128_t>(b[i].lower) * b[i].count;
          const uint128_t step = std::min(can, static_cast<uint128_t>(-rest));
          placed[i] -= step;
          rest += static_cast<int128_t>(step);
        }
      }
    }
  }
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i].count == 0) continue;
    const uint64_t q = static_cast<uint64_t>(placed[i] / b[i].count);
    const uint64_t r = static_cast<uint64_t>(placed[i] % b[i].count);
    if (b[i].count > r) out.push_back({q, b[i].count - r});
    if (r > 0) out.push_back({q + 1, r});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const PlacedValue& x, const PlacedValue& y) { return x.value < y.value; });
  return out;
}

bool OtlpBucketRange(double lo, double hi, double multiplier, OtlpBucket* out) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo < 0 || hi < lo) return false;
  const long double l = std::floor(static_cast<long double>(lo) * multiplier);
  const long double h = std::ceil(static_cast<long double>(hi) * multiplier);
  if (!(h < kTwo64)) return false;
  out->lower = static_cast<uint64_t>(l);
  out->upper = static_cast<uint64_t>(h);
  return true;
}

bool OtlpBaseUnits(double value, double multiplier, uint128_t* out) {
  if (!std::isfinite(value) || value < 0) return false;
  const long double v = std::round(static_cast<long double>(value) * multiplier);
  if (!(v < kTwo64 * kTwo64)) return false;
  if (v < kTwo64) {
    *out = static_cast<uint64_t>(v);
    return true;
  }
  const long double high = std::floor(v / kTwo64);
  *out = (static_cast<uint128_t>(static_cast<uint64_t>(high)) << 64) +
         static_cast<uint64_t>(v - high * kTwo64);
  return true;
}

void ExponentialBucketBounds(int32_t scale, int64_t index, double* lo, double* hi) {
  // base^index = 2^(index * 2^-scale); ldexp keeps the exponent exact.
  *lo = std::exp2(std::ldexp(static_cast<double>(index), -scale));
  *hi = std::exp2(std::ldexp(static_cast<double>(index + 1), -scale));
}

}  // namespace trailmap
