#include "query/draw/view_text.h"

#include "core/units.h"

namespace trailmap {

std::string FormatCount(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string CountNoun(MetricKind kind, uint64_t n) {
  if (kind == MetricKind::kScalar) return n == 1 ? "host-second" : "host-seconds";
  return n == 1 ? "event" : "events";
}

const char* RateHeading(MetricKind kind) { return kind == MetricKind::kScalar ? "hosts" : "events/s"; }
const char* RateSuffix(MetricKind kind) { return kind == MetricKind::kScalar ? " hosts" : "/s"; }

std::string FormatRate(double per_second) {
  if (per_second <= 0) return "0";
  if (per_second < 0.01) return "<0.01";  // a row with a few events is not a row with none
  if (per_second >= 999.5) return FormatCount(static_cast<uint64_t>(per_second + 0.5));
  return FormatSignificant(per_second);
}

std::string Ordinal(uint64_t n) {
  const uint64_t tens = n % 100, ones = n % 10;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : ones == 1                ? "st"
                       : ones == 2                ? "nd"
                       : ones == 3                ? "rd"
                                                  : "th";
  return std::to_string(n) + suffix;
}

std::string FormatSpan(int64_t seconds) {
  if (seconds < 60) return std::to_string(seconds) + "s";
  struct Part {
    int64_t size;
    const char* name;
  };
  static constexpr Part kParts[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
  std::string out;
  int parts = 0;
  for (const Part& p : kParts) {
    if (seconds >= p.size && parts < 2) {
      out += std::to_string(seconds / p.size) + p.name;
      seconds %= p.size;
      ++parts;
    } else if (parts > 0) {
      ++parts;  // only adjacent units: "1d1h", never "1d5s"
    }
  }
  return out;
}

}  // namespace trailmap
