#include "core/timespec.h"

#include <cstdio>

namespace trailmap {
namespace {

constexpr std::string_view kForms =
    "use now, a relative time (-30s, -10m, -1h, -2d, -1w), unix seconds (1700000000) or RFC "
    "3339 (2026-11-22T16:00:00Z, 2026-11-22T17:00:00+01:00)";

Status Bad(std::string_view text, std::string_view why = "") {
  std::string msg = "bad time \"" + std::string(text) + "\"";
  if (!why.empty()) msg += " (" + std::string(why) + ")";
  return Status::InvalidArgument(msg + ": " + std::string(kForms));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly `n` digits at *pos.
bool Digits(std::string_view s, size_t* pos, size_t n, int64_t* out) {
  if (*pos + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = s[*pos + i];
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos < s.size() && s[*pos] == c) {
    ++*pos;
    return true;
  }
  return false;
}

Result<int64_t> ParseRelative(std::string_view text, std::string_view rest, int64_t now) {
  // rest is "-10m" or "+5m".
  const int64_t sign = rest[0] == '-' ? -1 : 1;
  size_t pos = 1;
  int64_t amount = 0;
  size_t digits = 0;
  while (pos < rest.size() && IsDigit(rest[pos])) {
    if (++digits > 9) return Bad(text, "too large");
    amount = amount * 10 + (rest[pos++] - '0');
  }
  if (digits == 0) return Bad(text);
  const std::string_view unit = rest.substr(pos);
  int64_t scale = 0;
  if (unit == "s") {
    scale = 1;
  } else if (unit == "m") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  } else if (unit == "d") {
    scale = 86400;
  } else if (unit == "w") {
    scale = 7 * 86400;
  } else if (unit.empty()) {
    return Bad(text, "a relative time needs a unit");
  } else {
    return Bad(text, "unknown unit \"" + std::string(unit) + "\"");
  }
  return now + sign * amount * scale;
}

Result<int64_t> ParseRfc3339(std::string_view s) {
  size_t pos = 0;
  int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(s, &pos, 4, &year) || !Expect(s, &pos, '-') || !Digits(s, &pos, 2, &month) ||
      !Expect(s, &pos, '-') || !Digits(s, &pos, 2, &day)) {
    return Bad(s);
  }
  if (month < 1 || month > 12) return Bad(s, "month out of range");
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  const int max_day = month == 2 && !leap ? 28 : kDays[month - 1];
  if (day < 1 || day > max_day) return Bad(s, "day out of range");
  const int64_t days =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  if (pos == s.size()) return days * 86400;
  if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ') return Bad(s);
  ++pos;
  if (!Digits(s, &pos, 2, &hour) || !Expect(s, &pos, ':') || !Digits(s, &pos, 2, &minute) ||
      !Expect(s, &pos, ':') || !Digits(s, &pos, 2, &second)) {
    return Bad(s, "expected HH:MM:SS after the date");
  }
  if (hour > 23 || minute > 59 || second > 60) return Bad(s, "time of day out of range");
  if (second == 60) second = 59;  // a leap second: times here are whole unix seconds
  if (Expect(s, &pos, '.')) {
    const size_t start = pos;
    while (pos < s.size() && IsDigit(s[pos])) ++pos;
    if (pos == start) return Bad(s, "expected digits after '.'");
  }
  int64_t offset = 0;
  if (Expect(s, &pos, 'Z') || Expect(s, &pos, 'z')) {
    offset = 0;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    const int64_t sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    int64_t oh = 0, om = 0;
    if (!Digits(s, &pos, 2, &oh) || !Expect(s, &pos, ':') || !Digits(s, &pos, 2, &om) || oh > 23 ||
        om > 59) {
      return Bad(s, "expected a UTC offset like +01:00");
    }
    offset = sign * (oh * 3600 + om * 60);
  } else {
    return Bad(s, "missing time zone: end with Z or an offset like +01:00");
  }
  if (pos != s.size()) return Bad(s, "trailing characters");
  return days * 86400 + hour * 3600 + minute * 60 + second - offset;
}

}  // namespace

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  // Howard Hinnant's days_from_civil: eras of 400 years, March-based years.
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

Result<int64_t> ParseTimeSpec(std::string_view text, int64_t now) {
  std::string_view t = text;
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  if (t.empty()) return Bad(text, "empty");
  if (t == "now") return now;
  if (t.substr(0, 3) == "now") t.remove_prefix(3);
  if (t[0] == '-' || t[0] == '+') return ParseRelative(text, t, now);
  bool all_digits = true;
  for (char c : t) all_digits = all_digits && IsDigit(c);
  if (all_digits) {
    if (t.size() > 12) return Bad(text, "too many digits for unix seconds");
    int64_t v = 0;
    for (char c : t) v = v * 10 + (c - '0');
    return v;
  }
  if (t.size() >= 10 && t[4] == '-') return ParseRfc3339(t);
  return Bad(text);
}

std::string FormatRfc3339(int64_t unix_seconds) {
  // civil_from_days, the inverse of DaysFromCivil.
  int64_t days = unix_seconds / 86400;
  int64_t secs = unix_seconds % 86400;
  if (secs < 0) {
    secs += 86400;
    --days;
  }
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                static_cast<long long>(y), m, d, static_cast<long long>(secs / 3600),
                static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  return buf;
}

std::string FormatClock(int64_t unix_seconds) {
  int64_t secs = unix_seconds % 86400;
  if (secs < 0) secs += 86400;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(secs / 3600),
                static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  return buf;
}

}  // namespace trailmap
