// A statsd packet (agent/statsd.h): any bytes as one packet. Properties: every non-blank line
// is either a sample or an error, in order (one bad line never loses the others); a packet
// parses as its lines do one by one; a sample has a valid name and a count of at least 1; a
// refused line says why.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/statsd.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view packet(reinterpret_cast<const char*>(data), size);
  const trailmap::StatsdPacket parsed = trailmap::ParseStatsdPacket(packet);
  size_t samples = 0, errors = 0, line_number = 0;
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
    if (one.ok()) {
      FUZZ_CHECK(samples < parsed.samples.size(), "line %zu parses alone, not in the packet",
                 line_number);
      const trailmap::StatsdSample& s = parsed.samples[samples++];
      FUZZ_CHECK(s.metric == one->metric && s.fields == one->fields &&
                 s.value_ns == one->value_ns && s.count == one->count);
      FUZZ_CHECK(!s.metric.empty() && s.count >= 1);
    } else {
      FUZZ_CHECK(errors < parsed.errors.size() && parsed.errors[errors].line == line_number,
                 "line %zu is refused alone, not in the packet", line_number);
      const trailmap::StatsdError& e = parsed.errors[errors++];
      FUZZ_CHECK(e.reason == reason && !e.message.empty());
      FUZZ_CHECK(static_cast<size_t>(e.reason) < trailmap::kStatsdRejectClasses);
      FUZZ_CHECK(!one.status().message().empty());
    }
  }
  FUZZ_CHECK(samples == parsed.samples.size() && errors == parsed.errors.size(),
             "the packet has %zu samples and %zu errors, its lines %zu and %zu",
             parsed.samples.size(), parsed.errors.size(), samples, errors);
  return 0;
}
