// Trace source: reads the trace2heatmap text format, one event per line.
//
//   trace  := [ header ] { line }
//   header := the first non-blank line, if it holds a letter and is not itself an event
//   line   := blank | time WS latency         WS = spaces or tabs; '\r' before '\n' is ignored
//   time, latency := decimal number, fractional allowed ("1700000000.25", "0.5", "12")
//
// Each number is multiplied by its unit (nanoseconds per unit: s=1e9, ms=1e6, us=1e3, ns=1) and
// rounded to the nearest nanosecond. Integers with an integral unit are converted exactly. The
// latency must be >= 0; both must fit in 64 bits once in ns; "nan", "inf" and the like are
// refused.
//
// Error contract: the first bad line stops the read with InvalidArgument naming the line and
// what is wrong ("line 7: latency '-3' is negative"). Events before it have already been given to
// the callback, so a caller that ships (trailmap import) must keep what it gathered until the
// read returns ok and drop it otherwise: nothing half-imported is claimed.
//
// Speed: the file is read in 1 MiB blocks with read(2) and each field parsed with
// std::from_chars, no iostreams; multi-GB traces are the intended use.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace trailmap {

struct TraceOptions {
  double time_unit_ns = 1e3;   // ns per unit of the time column (trace2heatmap default: us)
  double value_unit_ns = 1e3;  // ns per unit of the latency column (default: us)
};

// Called once per event, in file order. time_ns is as read (not necessarily unix time).
using TraceEventFn = std::function<void(int64_t time_ns, uint64_t value_ns)>;

// What a successful read saw.
struct TraceSummary {
  uint64_t events = 0;
  uint64_t lines = 0;  // including header and blank lines
  bool had_header = false;
};

// Nanoseconds per unit for "s", "ms", "us", "ns"; InvalidArgument naming the choices otherwise.
Result<double> TraceUnitNs(std::string_view unit);

// Reads the trace at `path` ("-" for standard input).
Result<TraceSummary> ReadTraceFile(const std::string& path, const TraceOptions& options,
                                   const TraceEventFn& on_event);

// Parses an in-memory trace (the whole text); same rules and errors as ReadTraceFile.
Result<TraceSummary> ParseTrace(std::string_view text, const TraceOptions& options,
                                const TraceEventFn& on_event);

}  // namespace trailmap
