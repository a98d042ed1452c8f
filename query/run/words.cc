#include "query/run/words.h"

#include <cstdio>
#include <cstdlib>

#include "core/timespec.h"
#include "core/units.h"
#include "query/fetch/view_request.h"

namespace trailmap {

Result<uint32_t> ParseStepWords(const std::string& text) {
  if (text.empty()) return 0u;
  bool digits = text.size() <= 9;
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  Result<uint64_t> ns =
      digits ? Result<uint64_t>(std::stoull(text) * 1'000'000'000ull) : ParseDuration(text);
  if (!ns.ok()) return Status::InvalidArgument("--step: " + ns.status().message());
  if (*ns < 1'000'000'000ull || *ns % 1'000'000'000ull != 0 ||
      *ns / 1'000'000'000ull > 86400 * 366) {
    return Status::InvalidArgument("--step " + text +
                                   ": a step is whole seconds, at least 1s (e.g. 1s, 10s, 1m)");
  }
  return static_cast<uint32_t>(*ns / 1'000'000'000ull);
}

Result<std::vector<double>> ParsePercentiles(const std::string& list) {
  std::vector<double> out;
  for (const std::string& text : SplitList(list)) {
    std::string digits = text;
    if (!digits.empty() && (digits[0] == 'p' || digits[0] == 'P')) digits.erase(0, 1);
    char* end = nullptr;
    const double p = digits.empty() ? -1 : std::strtod(digits.c_str(), &end);
    if (digits.empty() || *end != '\0' || !(p > 0 && p <= 100)) {
      return Status::InvalidArgument(
          "--overlay " + text + ": give percentiles like p50,p99,p99.9 (above 0, at most 100)");
    }
    out.push_back(p);
  }
  return out;
}

Result<int64_t> ParseClockOrTime(const std::string& text, int64_t range_from, int64_t now) {
  int h = 0, m = 0, sec = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%d:%d:%d%c", &h, &m, &sec, &extra) == 3 && h >= 0 && h < 24 &&
      m >= 0 && m < 60 && sec >= 0 && sec < 60) {
    const int64_t day = range_from - ((range_from % 86400) + 86400) % 86400;
    int64_t t = day + h * 3600 + m * 60 + sec;
    if (t < range_from) t += 86400;
    return t;
  }
  return ParseTimeSpec(text, now);
}

Status CheckAxisWords(const char* flag, const std::string& text) {
  if (text.empty()) return Status::Ok();
  Result<uint64_t> as_duration = ParseQuantity(text, "ns");
  if (as_duration.ok() || ParseQuantity(text, "B").ok()) return Status::Ok();
  return Status::InvalidArgument(std::string(flag) + ": " + as_duration.status().message());
}

Result<std::pair<uint64_t, uint64_t>> ParseValueRange(const std::string& text,
                                                      const std::string& unit) {
  const size_t dots = text.find("..");
  if (dots == std::string::npos) {
    return Status::InvalidArgument("--range " + text + ": write LOW..HIGH, e.g. 0..20ms");
  }
  const std::string low = text.substr(0, dots), high = text.substr(dots + 2);
  uint64_t lo = 0;
  if (!low.empty() && low != "0") {
    Result<uint64_t> v = ParseQuantity(low, unit);
    if (!v.ok()) return Status::InvalidArgument("--range: " + v.status().message());
    lo = *v;
  }
  Result<uint64_t> hi = ParseQuantity(high, unit);
  if (!hi.ok()) return Status::InvalidArgument("--range: " + hi.status().message());
  if (*hi <= lo) return Status::InvalidArgument("--range " + text + ": HIGH must be above LOW");
  return std::pair{lo, *hi};
}

}  // namespace trailmap
