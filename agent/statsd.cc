#include "agent/statsd.h"

#include <fnmatch.h>

#include <charconv>
#include <cmath>
#include <optional>

#include "core/counts.h"
#include "core/predicate.h"
#include "core/series.h"
#include "core/units.h"

namespace trailmap {
namespace {

// What a tag with a reserved key is kept as: "tag_" + key.
constexpr char kRenamedTagPrefix[] = "tag_";

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

// Parses one value of a line of `type`: a finite number (>= 0 for ms, h, d; a leading '+' only
// for gauges, where it and '-' mark a delta).
std::optional<Failure> ParseValue(std::string_view text, StatsdType type, double* value,
                                  bool* delta) {
  *delta = false;
  std::string_view number = text;
  if (type == StatsdType::kGauge && !number.empty() && (number[0] == '+' || number[0] == '-')) {
    *delta = true;
    if (number[0] == '+') number.remove_prefix(1);
  }
  const std::optional<double> v = ParseNumber(number);
  if (!v || std::isnan(*v) || (!number.empty() && number[0] == '+')) {
    return Failure{StatsdReject::kValue, "value " + Quote(text) + " is not a number"};
  }
  const bool histogram = type == StatsdType::kTiming || type == StatsdType::kHistogram ||
                         type == StatsdType::kDistribution;
  if (histogram && *v < 0) {
    return Failure{StatsdReject::kValue, "value " + Quote(text) + " is negative"};
  }
  if (type == StatsdType::kTiming) {
    if (Result<uint64_t> ns = StatsdHistogramValue(*v, StatsdUnit::kMilliseconds); !ns.ok()) {
      return Failure{StatsdReject::kValue,
                     "value " + Quote(text) + " is too large (at most " + "18446744073709 ms)"};
    }
  }
  if (std::isinf(*v)) return Failure{StatsdReject::kValue, "value " + Quote(text) + " is infinite"};
  *value = *v;
  return std::nullopt;
}

std::optional<Failure> ParseRate(std::string_view text, double* rate_out, uint64_t* count) {
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
  *rate_out = *rate;
  *count = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(inverse)));
  return std::nullopt;
}

std::optional<Failure> ParseTags(std::string_view text, StatsdSample* out) {
  std::string* fields = &out->fields;
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
    if (IsReservedFieldName(key)) {
      if (out->renamed_tags++ == 0) out->renamed = key;
      key = kRenamedTagPrefix + key;
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

std::optional<Failure> ParseType(std::string_view text, StatsdType* type) {
  if (text == "ms") {
    *type = StatsdType::kTiming;
  } else if (text == "h") {
    *type = StatsdType::kHistogram;
  } else if (text == "d") {
    *type = StatsdType::kDistribution;
  } else if (text == "c") {
    *type = StatsdType::kCounter;
  } else if (text == "g") {
    *type = StatsdType::kGauge;
  } else if (text == "s") {
    *type = StatsdType::kSet;
  } else {
    return Failure{StatsdReject::kType,
                   "type " + Quote(text) + " is not supported (only ms, h, d, c, g, s)"};
  }
  return std::nullopt;
}

// 'T' seconds: 1..2^40 unix seconds, digits only.
std::optional<Failure> ParseTimestamp(std::string_view text, int64_t* seconds) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || text[0] == '-' || ec != std::errc() || end != text.data() + text.size() ||
      v < 1 || v > (int64_t{1} << 40)) {
    return Failure{StatsdReject::kTimestamp,
                   "timestamp " + Quote("T" + std::string(text)) + " must be unix seconds"};
  }
  *seconds = v;
  return std::nullopt;
}

std::optional<Failure> Parse(std::string_view line, StatsdSample* out) {
  if (line.starts_with("_e{")) {
    out->type = StatsdType::kEvent;
    return std::nullopt;
  }
  if (line.starts_with("_sc|")) {
    out->type = StatsdType::kServiceCheck;
    return std::nullopt;
  }
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
  const std::string_view values = rest.substr(0, bar);
  rest = rest.substr(bar + 1);
  size_t next = rest.find('|');
  if (std::optional<Failure> f = ParseType(rest.substr(0, next), &out->type)) return f;
  if (Status s = ValidateMetricName(name); !s.ok()) {
    return Failure{StatsdReject::kName, s.message()};
  }
  out->metric = std::string(name);
  // Packed values: each ':'-separated one is an event of its own.
  for (size_t start = 0;;) {
    size_t end = values.find(':', start);
    if (end == std::string_view::npos) end = values.size();
    const std::string_view one = values.substr(start, end - start);
    if (out->type == StatsdType::kSet) {
      if (one.empty()) return Failure{StatsdReject::kValue, "set member is empty"};
      out->members.emplace_back(one);
    } else {
      double v = 0;
      bool delta = false;
      if (std::optional<Failure> f = ParseValue(one, out->type, &v, &delta)) return f;
      if (!out->values.empty() && delta != out->gauge_delta) {
        return Failure{StatsdReject::kValue,
                       "gauge values " + Quote(values) + " mix absolute values and +/- deltas"};
      }
      out->gauge_delta = delta;
      out->values.push_back(v);
    }
    if (end == values.size()) break;
    start = end + 1;
  }

  bool seen_rate = false;
  bool seen_tags = false;
  bool seen_time = false;
  bool seen_container = false;
  while (next != std::string_view::npos) {
    rest = rest.substr(next + 1);
    next = rest.find('|');
    const std::string_view section = rest.substr(0, next);
    const char first = section.empty() ? '\0' : section.front();
    if (first == '@' && !seen_rate) {
      seen_rate = true;
      if (std::optional<Failure> f = ParseRate(section.substr(1), &out->rate, &out->count)) {
        return f;
      }
    } else if (first == '#' && !seen_tags) {
      seen_tags = true;
      if (std::optional<Failure> f = ParseTags(section.substr(1), out)) return f;
    } else if (first == 'T' && !seen_time) {
      seen_time = true;
      if (std::optional<Failure> f = ParseTimestamp(section.substr(1), &out->timestamp)) return f;
    } else if (section.starts_with("c:") && !seen_container) {
      seen_container = true;  // DogStatsD container id: not kept
    } else {
      return Failure{StatsdReject::kSyntax,
                     "section " + Quote(section) + " is not a first @rate, #tags, T or c:"};
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
    case StatsdReject::kNewMetric:
      return "new_metric";
    case StatsdReject::kTimestamp:
      return "timestamp";
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
    if (sample.ok() &&
        (sample->type == StatsdType::kEvent || sample->type == StatsdType::kServiceCheck)) {
      ++out.unsupported;
    } else if (sample.ok()) {
      sample->line = line_number;
      out.samples.push_back(std::move(*sample));
    } else {
      out.errors.push_back(
          {line_number, reason,
           "line " + std::to_string(line_number) + ": " + sample.status().message()});
    }
  }
  return out;
}

const char* StatsdTypeName(StatsdType type) {
  switch (type) {
    case StatsdType::kTiming:
      return "ms";
    case StatsdType::kHistogram:
      return "h";
    case StatsdType::kDistribution:
      return "d";
    case StatsdType::kCounter:
      return "c";
    case StatsdType::kGauge:
      return "g";
    case StatsdType::kSet:
      return "s";
    case StatsdType::kEvent:
      return "event";
    case StatsdType::kServiceCheck:
      return "service check";
  }
  return "unknown";
}

namespace {

struct UnitInfo {
  StatsdUnit unit;
  const char* name;  // config spelling
  MetricKind kind;
  const char* series_unit;
  double scale;  // series unit per value unit
};

constexpr UnitInfo kUnits[] = {
    {StatsdUnit::kMilliseconds, "ms", MetricKind::kLatency, "ns", 1e6},
    {StatsdUnit::kSeconds, "s", MetricKind::kLatency, "ns", 1e9},
    {StatsdUnit::kMicroseconds, "us", MetricKind::kLatency, "ns", 1e3},
    {StatsdUnit::kNanoseconds, "ns", MetricKind::kLatency, "ns", 1},
    {StatsdUnit::kBytes, "B", MetricKind::kSize, "B", 1},
    {StatsdUnit::kNone, "none", MetricKind::kSize, "1", 1},
};

const UnitInfo& Info(StatsdUnit unit) { return kUnits[static_cast<size_t>(unit)]; }

}  // namespace

Result<StatsdUnit> ParseStatsdUnit(std::string_view text) {
  for (const UnitInfo& u : kUnits) {
    if (text == u.name) return u.unit;
  }
  return Status::InvalidArgument("unit " + Quote(text) + " is not ms, s, us, ns, B or none");
}

const char* StatsdUnitName(StatsdUnit unit) { return Info(unit).name; }
MetricKind StatsdUnitKind(StatsdUnit unit) { return Info(unit).kind; }
const char* StatsdUnitSeriesUnit(StatsdUnit unit) { return Info(unit).series_unit; }

StatsdUnit StatsdUnitFor(std::string_view metric, const std::vector<StatsdUnitRule>& rules) {
  if (rules.empty()) return StatsdUnit::kMilliseconds;
  const std::string name(metric);
  for (const StatsdUnitRule& r : rules) {
    if (fnmatch(r.match.c_str(), name.c_str(), 0) == 0) return r.unit;
  }
  return StatsdUnit::kMilliseconds;
}

Result<uint64_t> StatsdHistogramValue(double value, StatsdUnit unit) {
  const UnitInfo& u = Info(unit);
  const double scaled = std::round(value * u.scale);
  if (!(scaled >= 0 && scaled < kTwoTo64)) {
    return Status::InvalidArgument("value " + FormatSignificant(value) + " is too large for unit " +
                                   u.name + " (at most 2^64 " + u.series_unit + ")");
  }
  return static_cast<uint64_t>(scaled);
}

bool IsReservedFieldName(std::string_view key) {
  // "overflow" names the bucketizer's overflow series (ingest/bucketizer.h kOverflowFields).
  return key == "host" || key == "overflow" || IsValueName(key);
}

}  // namespace trailmap
