#include "core/units.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace trailmap {
namespace {

constexpr std::string_view kDurationForms =
    "a number with a unit: ns, us (or µs), ms, s, m, h, d — e.g. 250us, 10ms, 1.5s";
constexpr std::string_view kSizeForms =
    "a number with a unit: B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of "
    "1024) — e.g. 4KiB, 1.5MB";

struct UnitScale {
  std::string_view name;
  double scale;
};

constexpr UnitScale kDurationUnits[] = {
    {"ns", 1},  {"us", 1e3}, {"µs", 1e3},   {"μs", 1e3},   {"ms", 1e6},
    {"s", 1e9}, {"m", 60e9}, {"min", 60e9}, {"h", 3600e9}, {"d", 86400e9},
};

constexpr UnitScale kSizeUnits[] = {
    {"B", 1},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"KiB", 1024.0},
    {"MiB", 1024.0 * 1024},
    {"GiB", 1024.0 * 1024 * 1024},
    {"TiB", 1024.0 * 1024 * 1024 * 1024},
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits "1.5ms" into 1.5 and "ms". Only plain decimals: digits with at most one '.'.
bool SplitNumber(std::string_view text, double* number, std::string_view* suffix) {
  size_t i = 0;
  bool digits = false, dot = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!digits) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, *number);
  if (ec != std::errc() || ptr != text.data() + i) return false;
  *suffix = Trim(text.substr(i));
  return true;
}

Result<uint64_t> ToBase(double value, std::string_view text) {
  const double rounded = std::round(value);
  if (!std::isfinite(rounded) || rounded < 0 || rounded >= 18446744073709551616.0) {
    return Status::InvalidArgument("\"" + std::string(text) + "\" is out of range");
  }
  return static_cast<uint64_t>(rounded);
}

template <size_t N>
Result<uint64_t> ParseWith(std::string_view text, const UnitScale (&units)[N],
                           std::string_view forms, bool allow_bare) {
  const std::string_view trimmed = Trim(text);
  double number = 0;
  std::string_view suffix;
  if (!SplitNumber(trimmed, &number, &suffix)) {
    return Status::InvalidArgument("\"" + std::string(text) + "\" is not " + std::string(forms));
  }
  if (suffix.empty() && allow_bare) return ToBase(number, text);
  for (const UnitScale& u : units) {
    if (suffix == u.name) return ToBase(number * u.scale, text);
  }
  if (suffix.empty()) {
    return Status::InvalidArgument("\"" + std::string(text) + "\" has no unit; use " +
                                   std::string(forms));
  }
  return Status::InvalidArgument("unknown unit \"" + std::string(suffix) + "\" in \"" +
                                 std::string(text) + "\"; use " + std::string(forms));
}

bool IsBytes(std::string_view unit) { return unit == "B" || unit == "bytes" || unit == "byte"; }
bool IsBytesRate(std::string_view unit) {
  return unit.size() > 2 && unit.substr(unit.size() - 2) == "/s" && IsBytes(unit.substr(0, unit.size() - 2));
}

}  // namespace

Result<uint64_t> ParseDuration(std::string_view text) {
  return ParseWith(text, kDurationUnits, kDurationForms, false);
}

Result<uint64_t> ParseSize(std::string_view text) {
  return ParseWith(text, kSizeUnits, kSizeForms, false);
}

Result<uint64_t> ParseQuantity(std::string_view text, std::string_view unit) {
  const auto [step, base] = SplitFixedPointUnit(unit);
  if (step != 1) {
    // "50%" or "50" for a metric held in 0.01%: read in the base unit, then count steps.
    std::string_view t = Trim(text);
    if (!base.empty() && t.size() > base.size() && t.substr(t.size() - base.size()) == base) {
      t.remove_suffix(base.size());
    }
    double number = 0;
    std::string_view suffix;
    if (!SplitNumber(Trim(t), &number, &suffix) || !suffix.empty()) {
      return Status::InvalidArgument("\"" + std::string(text) + "\" is not a number in " +
                                     (base.empty() ? std::string("plain numbers") : std::string(base)) +
                                     ", e.g. 12.5" + std::string(base));
    }
    return ToBase(number / step, text);
  }
  if (IsBytesRate(unit)) {
    std::string_view t = Trim(text);
    if (t.size() > 2 && t.substr(t.size() - 2) == "/s") t.remove_suffix(2);
    return ParseWith(t, kSizeUnits, kSizeForms, true);
  }
  if (unit == "ns") return ParseWith(text, kDurationUnits, kDurationForms, true);
  if (IsBytes(unit)) return ParseWith(text, kSizeUnits, kSizeForms, true);
  static constexpr UnitScale kNone[] = {{"", 1}};
  return ParseWith(text, kNone, "a plain number", true);
}

Result<uint64_t> NanosPerUnit(std::string_view name) {
  for (const UnitScale& u : kDurationUnits) {
    if (u.name == name && u.scale <= 1e9) return static_cast<uint64_t>(u.scale);
  }
  return Status::InvalidArgument("unknown time unit \"" + std::string(name) +
                                 "\"; use s, ms, us or ns");
}

Result<double> ParsePercent(std::string_view text) {
  std::string_view t = Trim(text);
  if (!t.empty() && t.back() == '%') t.remove_suffix(1);
  double number = 0;
  std::string_view suffix;
  if (!SplitNumber(t, &number, &suffix) || !suffix.empty() || number > 100) {
    return Status::InvalidArgument("\"" + std::string(text) +
                                   "\" is not a percentage between 0 and 100, e.g. 0.1%");
  }
  return number;
}

std::string FormatSignificant(double value) {
  char buf[64];
  const double magnitude = std::fabs(value);
  int decimals = 0;
  if (magnitude < 10) {
    decimals = 2;
  } else if (magnitude < 100) {
    decimals = 1;
  }
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string out = buf;
  // 9.995 prints as "10.00": three significant digits means one decimal fewer.
  if (decimals > 0 && std::fabs(std::strtod(buf, nullptr)) >= (decimals == 2 ? 10 : 100)) {
    std::snprintf(buf, sizeof buf, "%.*f", decimals - 1, value);
    out = buf;
  }
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  if (out == "-0") out = "0";
  return out;
}

std::string FormatDuration(double ns) {
  if (ns == 0) return "0";
  const double a = std::fabs(ns);
  // Pick the unit so the number is below 1000 after rounding to three digits.
  if (a < 999.5) return FormatSignificant(ns) + "ns";
  if (a < 999.5e3) return FormatSignificant(ns / 1e3) + "µs";
  if (a < 999.5e6) return FormatSignificant(ns / 1e6) + "ms";
  return FormatSignificant(ns / 1e9) + "s";
}

std::string FormatBytes(double bytes) {
  if (bytes == 0) return "0";
  static constexpr std::string_view kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = bytes;
  size_t i = 0;
  while (std::fabs(v) >= 1023.5 && i + 1 < std::size(kNames)) {
    v /= 1024;
    ++i;
  }
  return FormatSignificant(v) + std::string(kNames[i]);
}

double ScalarStep(std::string_view unit) {
  if (unit == "%") return 0.01;
  if (unit == "ns" || IsBytes(unit) || IsBytesRate(unit)) return 1;
  return 0.001;
}

std::string FixedPointUnit(std::string_view unit) {
  const double step = ScalarStep(unit);
  if (step == 1) return std::string(unit);
  return (step == 0.01 ? "0.01" : "0.001") + std::string(unit);
}

std::pair<double, std::string_view> SplitFixedPointUnit(std::string_view unit) {
  if (unit.starts_with("0.01") && !unit.starts_with("0.001")) return {0.01, unit.substr(4)};
  if (unit.starts_with("0.001")) return {0.001, unit.substr(5)};
  return {1, unit};
}

std::string FormatQuantity(double value, std::string_view unit) {
  const auto [step, base] = SplitFixedPointUnit(unit);
  if (step != 1) return FormatQuantity(value * step, base);
  if (IsBytesRate(unit)) return value == 0 ? "0" : FormatBytes(value) + "/s";
  if (unit == "ns") return FormatDuration(value);
  if (IsBytes(unit)) return FormatBytes(value);
  if (unit.empty() || unit == "1") return FormatSignificant(value);  // "1": a plain number
  return FormatSignificant(value) + std::string(unit);
}

// Round numbers in a unit (NiceStep, NiceTop): what the views choose their axes' tops with and the
// renderers their ticks.

double NiceStep(double raw) {
  if (!(raw > 0)) return 1;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * decade >= raw * (1 - 1e-9)) return m * decade;
  }
  return 10 * decade;
}

namespace {

bool BinaryUnit(std::string_view unit) {
  return unit == "B" || unit == "bytes" || unit == "byte" || unit == "B/s" || unit == "bytes/s";
}

}  // namespace

double NiceStep(double raw, std::string_view unit) {
  if (!BinaryUnit(unit) || !(raw > 1)) return NiceStep(raw);
  double prefix = 1;
  while (raw / prefix >= 1024) prefix *= 1024;
  for (double m = 1; m <= 1024; m *= 2) {
    if (m * prefix >= raw * (1 - 1e-9)) return m * prefix;
  }
  return 1024 * prefix;
}

double NiceTop(double value, std::string_view unit) {
  if (!BinaryUnit(unit) || !(value > 1)) return NiceStep(value);
  const double step = NiceStep(value / 5, unit);
  return std::ceil(value / step - 1e-9) * step;
}

}  // namespace trailmap
