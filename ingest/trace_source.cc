#include "ingest/trace_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

namespace trailmap {
namespace {

constexpr size_t kBlockBytes = 1 << 20;

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// `token` times `unit_ns`, rounded to the nearest ns, into [lo, hi]. On failure returns a reason
// ("is not a number", "is negative", "is too large") to follow the quoted token.
std::optional<std::string> Scale(std::string_view token, double unit_ns, bool allow_negative,
                                 double lo, double hi, int64_t* signed_out, uint64_t* out) {
  const char* first = token.data();
  const char* last = token.data() + token.size();
  const bool negative = !token.empty() && token.front() == '-';
  // Exact path: plain decimal "-?digits[.digits]" and an integral unit. The integer part is
  // scaled exactly; only the fraction (worth less than one unit) goes through a double.
  if (unit_ns == std::floor(unit_ns) && unit_ns >= 1 && unit_ns <= 1e18) {
    const char* digits = first + (negative ? 1 : 0);
    const char* dot = std::find(digits, last, '.');
    uint64_t whole = 0;
    const auto [int_end, int_ec] = std::from_chars(digits, dot, whole);
    bool fraction_ok = true;
    for (const char* p = dot + (dot == last ? 0 : 1); p < last; ++p) {
      fraction_ok = fraction_ok && *p >= '0' && *p <= '9';
    }
    if (int_ec == std::errc() && int_end == dot && fraction_ok) {
      const auto unit = static_cast<uint64_t>(unit_ns);
      // The first 18 fraction digits are plenty: one unit is at most 1e18 ns.
      uint64_t fraction_digits = 0;
      double scale = 1;
      for (const char* p = dot + (dot == last ? 0 : 1); p < last && scale < 1e18; ++p) {
        fraction_digits = fraction_digits * 10 + static_cast<uint64_t>(*p - '0');
        scale *= 10;
      }
      const double fraction = static_cast<double>(fraction_digits) / scale;
      const auto fraction_ns = static_cast<uint64_t>(std::llround(fraction * unit_ns));
      uint64_t ns = 0;
      if (__builtin_mul_overflow(whole, unit, &ns) ||
          __builtin_add_overflow(ns, fraction_ns, &ns)) {
        return "is too large";
      }
      if (negative && ns != 0 && !allow_negative) return "is negative";
      if (signed_out != nullptr) {
        if (ns > (negative ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1)) return "is too large";
        *signed_out = negative ? static_cast<int64_t>(0 - ns) : static_cast<int64_t>(ns);
      } else {
        *out = ns;
      }
      return std::nullopt;
    }
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(first, last, v);
  if (end != last || token.empty() || (ec != std::errc() && ec != std::errc::result_out_of_range) ||
      std::isnan(v)) {
    return "is not a number";
  }
  if (ec == std::errc::result_out_of_range && std::fabs(v) < 1) v = 0;  // underflow
  if (std::isinf(v) || ec == std::errc::result_out_of_range) return "is too large";
  if (v < 0 && !allow_negative) return "is negative";
  const double ns = std::round(v * unit_ns);
  if (!(ns >= lo && ns < hi)) return "is too large";
  if (signed_out != nullptr) {
    *signed_out = static_cast<int64_t>(ns);
  } else {
    *out = static_cast<uint64_t>(ns);
  }
  return std::nullopt;
}

// Line-at-a-time state shared by the file and in-memory readers.
class TraceParser {
 public:
  TraceParser(const TraceOptions& options, const TraceEventFn& on_event)
      : options_(options), on_event_(on_event) {}

  Status Line(std::string_view line) {
    ++summary_.lines;
    size_t i = 0;
    std::string_view cols[2];
    size_t ncols = 0;
    while (true) {
      while (i < line.size() && IsBlank(line[i])) ++i;
      if (i == line.size()) break;
      const size_t start = i;
      while (i < line.size() && !IsBlank(line[i])) ++i;
      if (ncols == 2) return Fail(ColumnsError(line));
      cols[ncols++] = line.substr(start, i - start);
    }
    if (ncols == 0) return Status::Ok();
    const bool first = !seen_content_;
    seen_content_ = true;
    std::optional<std::string> error;
    int64_t time_ns = 0;
    uint64_t value_ns = 0;
    if (ncols != 2) {
      error = ColumnsError(line);
    } else if (auto e = Scale(cols[0], options_.time_unit_ns, true, -9223372036854775808.0,
                              9223372036854775808.0, &time_ns, nullptr)) {
      error = "time " + Quote(cols[0]) + " " + *e;
    } else if (auto e = Scale(cols[1], options_.value_unit_ns, false, 0, 18446744073709551616.0,
                              nullptr, &value_ns)) {
      error = "latency " + Quote(cols[1]) + " " + *e;
    }
    if (!error) {
      ++summary_.events;
      on_event_(time_ns, value_ns);
      return Status::Ok();
    }
    if (first && HasLetter(line)) {
      summary_.had_header = true;
      return Status::Ok();
    }
    return Fail(*error);
  }

  Status Fail(const std::string& what) const {
    return Status::InvalidArgument("line " + std::to_string(summary_.lines) + ": " + what);
  }
  const TraceSummary& summary() const { return summary_; }

 private:
  static bool HasLetter(std::string_view line) {
    for (char c : line) {
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
    }
    return false;
  }
  static std::string ColumnsError(std::string_view line) {
    std::string_view shown = line.substr(0, 80);
    while (!shown.empty() && IsBlank(shown.back())) shown.remove_suffix(1);
    return "expected two columns, time and latency, got " + Quote(shown);
  }

  const TraceOptions& options_;
  const TraceEventFn& on_event_;
  TraceSummary summary_;
  bool seen_content_ = false;
};

}  // namespace

Result<double> TraceUnitNs(std::string_view unit) {
  if (unit == "s") return 1e9;
  if (unit == "ms") return 1e6;
  if (unit == "us") return 1e3;
  if (unit == "ns") return 1.0;
  return Status::InvalidArgument("unit " + Quote(unit) + " is not one of s, ms, us, ns");
}

Result<TraceSummary> ParseTrace(std::string_view text, const TraceOptions& options,
                                const TraceEventFn& on_event) {
  TraceParser parser(options, on_event);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (Status s = parser.Line(text.substr(start, end - start)); !s.ok()) return s;
    start = end + 1;
  }
  return parser.summary();
}

Result<TraceSummary> ReadTraceFile(const std::string& path, const TraceOptions& options,
                                   const TraceEventFn& on_event) {
  const bool is_stdin = path == "-";
  const int fd = is_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + Quote(path) + ": " + std::strerror(errno));
  TraceParser parser(options, on_event);
  std::vector<char> buffer(kBlockBytes);
  size_t held = 0;  // bytes of an unfinished line at the start of buffer
  Status status;
  while (status.ok()) {
    const ssize_t n = ::read(fd, buffer.data() + held, buffer.size() - held);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      status = Status::IOError("reading " + Quote(path) + ": " + std::strerror(errno));
      break;
    }
    const size_t filled = held + static_cast<size_t>(n);
    const std::string_view block(buffer.data(), filled);
    size_t start = 0;
    while (status.ok()) {
      const size_t end = block.find('\n', start);
      if (end == std::string_view::npos) break;
      status = parser.Line(block.substr(start, end - start));
      start = end + 1;
    }
    if (!status.ok()) break;
    held = filled - start;
    if (n == 0) {  // end of file: whatever is held is the last line, without '\n'
      if (held > 0) status = parser.Line(block.substr(start));
      break;
    }
    if (held == buffer.size()) {
      status = Status::InvalidArgument("line " + std::to_string(parser.summary().lines + 1) +
                                       ": longer than " + std::to_string(kBlockBytes) + " bytes");
      break;
    }
    std::memmove(buffer.data(), buffer.data() + start, held);
  }
  if (!is_stdin) ::close(fd);
  if (!status.ok()) return status;
  return parser.summary();
}

}  // namespace trailmap
