// A trace (ingest/trace_source.h ParseTrace): the first byte picks the time and value units, the
// rest is the text. Properties: a successful parse reports as many events as it delivered and
// no more than its lines; a failed one names a line; the same text parses the same again when
// cut in lines and rejoined with "\r\n" (the '\r' is ignored).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "ingest/trace_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr double kUnits[] = {1e9, 1e6, 1e3, 1};
  trailmap::TraceOptions options;
  options.time_unit_ns = kUnits[data[0] & 3];
  options.value_unit_ns = kUnits[(data[0] >> 2) & 3];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::pair<int64_t, uint64_t>> events;
  trailmap::Result<trailmap::TraceSummary> r = trailmap::ParseTrace(
      text, options, [&](int64_t t, uint64_t v) { events.emplace_back(t, v); });
  if (!r.ok()) {
    FUZZ_CHECK(r.status().message().starts_with("line "), "%s", r.status().ToString().c_str());
  } else {
    FUZZ_CHECK(r->events == events.size() && r->events <= r->lines);
  }
  if (text.find('\r') != std::string_view::npos) return 0;
  std::string crlf;
  for (char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  std::vector<std::pair<int64_t, uint64_t>> again;
  trailmap::Result<trailmap::TraceSummary> r2 =
      trailmap::ParseTrace(crlf, options, [&](int64_t t, uint64_t v) { again.emplace_back(t, v); });
  FUZZ_CHECK(r2.ok() == r.ok() && again == events, "\\r\\n line ends changed the parse");
  return 0;
}
