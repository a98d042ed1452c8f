#include "agent/statsd.h"

#include <charconv>
#include <cmath>
#include <optional>

#include "core/counts.h"
#include "core/series.h"

namespace trailmap {
namespace {

constexpr double kTwoTo64 = 18446744073709551616.0;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// A failure with its class; turned into a Status at the end.
struct Failure {
  StatsdReject reason;
  std::string message;
};

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// Parses the whole of `text` as a finite decimal number; nullopt when it is not one.
std::optional<double> ParseNumber(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    // from_chars reports out-of-range (e.g. "1e999") as an error; call it infinite.
    if (ec == std::errc::result_out_of_range && end == text.data() + text.size()) {
      return text.front() == '-' ? -HUGE_VAL : HUGE_VAL;
    }
    return std::nullopt;
  }
  return v;
}

std::optional<Failure> ParseValue(std::string_view text, uint64_t* value_ns) {
  const std::optional<double> ms = ParseNumber(text);
  if (!ms || std::isnan(*ms)) {
    return Failure{StatsdReject::kValue, "value " + Quote(text) + " is not a number"};
  }
  if (*ms < 0) return Failure{StatsdReject::kValue, "value " + Quote(text) + " is negative"};
  const double ns = std::round(*ms * 1e6);
  if (!(ns < kTwoTo64)) {
    return Failure{StatsdReject::kValue,
                   "value " + Quote(text) + " is too large (at most 18446744073709 ms)"};
  }
  *value_ns = static_cast<uint64_t>(ns);
  return std::nullopt;
}

std::optional<Failure> ParseRate(std::string_view text, uint64_t* count) {
  const std::optional<double> rate = ParseNumber(text);
  if (!rate || std::isnan(*rate) || !(*rate > 0) || *rate > 1) {
    return Failure{StatsdReject::kRate,
                   "sample rate " + Quote("@" + std::string(text)) + " must be a number in (0, 1]"};
  }
  // One line may stand for at most kMaxItemCount events (core/counts.h): past it, the count would
  // be more than the aggregator takes in one item, and would cost the host's whole second.
  const double inverse = 1.0 / *rate;
  if (!(std::round(inverse) <= static_cast<double>(kMaxItemCount))) {
    return Failure{StatsdReject::kRate, "sample rate " + Quote("@" + std::string(text)) +
                                            " stands for more than 2^40 events (at most 1 in " +
                                            std::to_string(kMaxItemCount) + ")"};
  }
  *count = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(inverse)));
  return std::nullopt;
}

std::optional<Failure> ParseTags(std::string_view text, std::string* fields) {
  FieldSet set;
  size_t start = 0;
  while (true) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view tag = text.substr(start, end - start);
    const size_t colon = tag.find(':');
    std::string key(tag.substr(0, colon));
    std::string value =
        colon == std::string_view::npos ? "true" : std::string(tag.substr(colon + 1));
    if (Status s = ValidateField(key, value); !s.ok()) {
      return Failure{StatsdReject::kTag, "tag " + Quote(tag) + ": " + s.message()};
    }
    set.emplace_back(std::move(key), std::move(value));
    if (end == text.size()) break;
    start = end + 1;
  }
  Result<std::string> canonical = CanonicalFields(std::move(set));
  if (!canonical.ok()) return Failure{StatsdReject::kTag, "tags: " + canonical.status().message()};
  *fields = std::move(*canonical);
  return std::nullopt;
}

std::optional<Failure> Parse(std::string_view line, StatsdSample* out) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    return Failure{StatsdReject::kSyntax, "no ':' between metric name and value"};
  }
  const std::string_view name = line.substr(0, colon);
  std::string_view rest = line.substr(colon + 1);
  const size_t bar = rest.find('|');
  if (bar == std::string_view::npos) {
    return Failure{StatsdReject::kSyntax, "no '|type' after the value"};
  }
  const std::string_view value = rest.substr(0, bar);
  rest = rest.substr(bar + 1);
  size_t next = rest.find('|');
  const std::string_view type = rest.substr(0, next);
  if (type != "ms" && type != "h" && type != "d") {
    return Failure{StatsdReject::kType,
                   "type " + Quote(type) + " is not supported (only ms, h, d)"};
  }
  if (Status s = ValidateMetricName(name); !s.ok()) {
    return Failure{StatsdReject::kName, s.message()};
  }
  out->metric = std::string(name);
  if (std::optional<Failure> f = ParseValue(value, &out->value_ns)) return f;

  bool seen_rate = false;
  bool seen_tags = false;
  while (next != std::string_view::npos) {
    rest = rest.substr(next + 1);
    next = rest.find('|');
    const std::string_view section = rest.substr(0, next);
    if (!section.empty() && section.front() == '@' && !seen_rate) {
      seen_rate = true;
      if (std::optional<Failure> f = ParseRate(section.substr(1), &out->count)) return f;
    } else if (!section.empty() && section.front() == '#' && !seen_tags) {
      seen_tags = true;
      if (std::optional<Failure> f = ParseTags(section.substr(1), &out->fields)) return f;
    } else {
      return Failure{StatsdReject::kSyntax,
                     "section " + Quote(section) + " is not a first @rate or #tags"};
    }
  }
  return std::nullopt;
}

}  // namespace

const char* StatsdRejectName(StatsdReject reason) {
  switch (reason) {
    case StatsdReject::kSyntax:
      return "syntax";
    case StatsdReject::kType:
      return "type";
    case StatsdReject::kValue:
      return "value";
    case StatsdReject::kName:
      return "name";
    case StatsdReject::kTag:
      return "tag";
    case StatsdReject::kRate:
      return "rate";
  }
  return "unknown";
}

Result<StatsdSample> ParseStatsdLine(std::string_view line, StatsdReject* reason) {
  StatsdSample sample;
  if (std::optional<Failure> f = Parse(line, &sample)) {
    if (reason != nullptr) *reason = f->reason;
    return Status::InvalidArgument(std::move(f->message));
  }
  return sample;
}

StatsdPacket ParseStatsdPacket(std::string_view packet) {
  StatsdPacket out;
  size_t line_number = 0;
  size_t start = 0;
  while (start < packet.size()) {
    size_t end = packet.find('\n', start);
    if (end == std::string_view::npos) end = packet.size();
    ++line_number;
    const std::string_view line = Trim(packet.substr(start, end - start));
    start = end + 1;
    if (line.empty()) continue;
    StatsdReject reason = StatsdReject::kSyntax;
    Result<StatsdSample> sample = ParseStatsdLine(line, &reason);
    if (sample.ok()) {
      out.samples.push_back(std::move(*sample));
    } else {
      out.errors.push_back(
          {line_number, reason,
           "line " + std::to_string(line_number) + ": " + sample.status().message()});
    }
  }
  return out;
}

}  // namespace trailmap
