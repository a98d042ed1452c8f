#include "query/fetch/request_checks.h"

#include "core/series.h"
#include "core/units.h"
#include "core/utf8.h"
#include "query/fetch/view_request.h"

namespace trailmap {
namespace {

constexpr size_t kMaxByKey = 128;     // as the aggregator's stack queries take --by
constexpr size_t kMaxHostName = 256;  // as a batch's host (core/batch.h max_text)

bool IsNameByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

bool IsName(std::string_view text, size_t max) {
  if (text.empty() || text.size() > max) return false;
  for (char c : text) {
    if (!IsNameByte(c)) return false;
  }
  return true;
}

bool HasControlByte(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

// "--metric \"a\\xffb\"": a flag and what was given, fit for a message.
std::string Given(const char* flag, std::string_view text) {
  return std::string(flag) + " \"" + Printable(text) + "\"";
}

Status CheckTimeout(const std::string& text) {
  bool printable = !text.empty();
  for (char c : text) printable = printable && c > 0x20 && c < 0x7f;
  if (!printable) {
    return Status::InvalidArgument(Given("--timeout", text) + ": give a duration such as 5s");
  }
  Result<uint64_t> ns = ParseDuration(text);
  if (!ns.ok()) return Status::InvalidArgument("--timeout: " + ns.status().message());
  if (*ns > kMaxQueryTimeoutSeconds * 1'000'000'000ull) {
    return Status::InvalidArgument("--timeout " + text + ": at most " +
                                   std::to_string(kMaxQueryTimeoutSeconds) +
                                   "s (a query waits at most that long for its shards)");
  }
  return Status::Ok();
}

std::string WithThousands(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::string Printable(std::string_view text, size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size() && i < max_bytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
      out += static_cast<char>(c);
    } else if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > max_bytes) out += "...";
  return out;
}

Status CheckViewRequest(const ViewRequest& request) {
  const std::string& metric = request.metric;
  if (!metric.empty() && !ValidateMetricName(metric).ok()) {
    return Status::InvalidArgument(Given("--metric", metric) + ": a metric name is 1 to " +
                                   std::to_string(kMaxMetricName) + " bytes of A-Z a-z 0-9 _ . -" +
                                   (metric.size() > kMaxMetricName
                                        ? " (this one is " + std::to_string(metric.size()) + ")"
                                        : ""));
  }
  if (!request.by.empty() && !IsName(request.by, kMaxByKey)) {
    return Status::InvalidArgument(Given("--by", request.by) + ": give host or a field key: 1 to " +
                                   std::to_string(kMaxByKey) + " bytes of A-Z a-z 0-9 _ . -");
  }
  for (const std::string& host : SplitList(request.hosts)) {
    if (host.size() > kMaxHostName || HasControlByte(host) || !IsValidUtf8(host)) {
      return Status::InvalidArgument(Given("--hosts", host) + ": a host name is 1 to " +
                                     std::to_string(kMaxHostName) +
                                     " bytes of UTF-8 text without control characters");
    }
  }
  if (!IsValidUtf8(request.where)) {
    return Status::InvalidArgument(Given("--where", request.where) + ": not valid UTF-8");
  }
  return CheckTimeout(request.timeout);
}

Status CheckImagePixels(const std::string& what, int64_t width, int64_t height) {
  if (width <= 0 || height <= 0 || width <= kMaxImagePixels / height) return Status::Ok();
  return Status::InvalidArgument(what + " is " + WithThousands(width * height) +
                                 " pixels, at most " + WithThousands(kMaxImagePixels) +
                                 " (16 Mi): ask for a smaller picture");
}

}  // namespace trailmap
