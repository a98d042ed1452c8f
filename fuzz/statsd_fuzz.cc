// A statsd packet (agent/statsd.h): any bytes as one packet. Properties: every non-blank line
// is either a sample, an unsupported event / service check, or an error, in order (one bad line
// never loses the others); a packet parses as its lines do one by one; a sample has a valid
// name, a count of at least 1, a rate in (0, 1] and at least one value of its type (finite;
// >= 0 for ms, h, d, whose values fit in ns); a refused line says why.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/statsd.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view packet(reinterpret_cast<const char*>(data), size);
  const trailmap::StatsdPacket parsed = trailmap::ParseStatsdPacket(packet);
  size_t samples = 0, errors = 0, unsupported = 0, line_number = 0;
  for (size_t start = 0; start <= packet.size();) {
    size_t end = packet.find('\n', start);
    if (end == std::string_view::npos) end = packet.size();
    std::string_view line = packet.substr(start, end - start);
    start = end + 1;
    ++line_number;
    // A packet trims blanks and '\r' around each line, and skips what is left empty.
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t' || line.front() == '\r')) {
      line.remove_prefix(1);
    }
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    if (line.empty()) continue;
    trailmap::StatsdReject reason = trailmap::StatsdReject::kSyntax;
    trailmap::Result<trailmap::StatsdSample> one = trailmap::ParseStatsdLine(line, &reason);
    using trailmap::StatsdType;
    if (one.ok() && (one->type == StatsdType::kEvent || one->type == StatsdType::kServiceCheck)) {
      ++unsupported;
    } else if (one.ok()) {
      FUZZ_CHECK(samples < parsed.samples.size(), "line %zu parses alone, not in the packet",
                 line_number);
      const trailmap::StatsdSample& s = parsed.samples[samples++];
      FUZZ_CHECK(s.metric == one->metric && s.fields == one->fields && s.type == one->type &&
                 s.values == one->values && s.members == one->members && s.count == one->count &&
                 s.rate == one->rate && s.timestamp == one->timestamp &&
                 s.gauge_delta == one->gauge_delta && s.line == line_number);
      FUZZ_CHECK(!s.metric.empty() && s.count >= 1 && s.rate > 0 && s.rate <= 1);
      FUZZ_CHECK(s.timestamp >= 0 && s.timestamp <= (int64_t{1} << 40));
      if (s.type == StatsdType::kSet) {
        FUZZ_CHECK(!s.members.empty() && s.values.empty());
        for (const std::string& m : s.members) FUZZ_CHECK(!m.empty());
      } else {
        FUZZ_CHECK(!s.values.empty() && s.members.empty());
        FUZZ_CHECK(s.type == StatsdType::kGauge || !s.gauge_delta);
        for (const double v : s.values) {
          FUZZ_CHECK(std::isfinite(v));
          if (s.type == StatsdType::kTiming || s.type == StatsdType::kHistogram ||
              s.type == StatsdType::kDistribution) {
            FUZZ_CHECK(v >= 0);
          }
          if (s.type == StatsdType::kTiming) {
            FUZZ_CHECK(trailmap::StatsdHistogramValue(v, trailmap::StatsdUnit::kMilliseconds).ok());
          }
        }
      }
    } else {
      FUZZ_CHECK(errors < parsed.errors.size() && parsed.errors[errors].line == line_number,
                 "line %zu is refused alone, not in the packet", line_number);
      const trailmap::StatsdError& e = parsed.errors[errors++];
      FUZZ_CHECK(e.reason == reason && !e.message.empty());
      FUZZ_CHECK(static_cast<size_t>(e.reason) < trailmap::kStatsdRejectClasses);
      FUZZ_CHECK(!one.status().message().empty());
    }
  }
  FUZZ_CHECK(
      samples == parsed.samples.size() && errors == parsed.errors.size() &&
          unsupported == parsed.unsupported,
      "the packet has %zu samples, %zu errors and %zu unsupported, its lines %zu, %zu and %zu",
      parsed.samples.size(), parsed.errors.size(), parsed.unsupported, samples, errors,
      unsupported);
  return 0;
}
