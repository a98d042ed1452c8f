// statsd / DogStatsD line parser: pure functions, no sockets.
//
// A packet holds one or more lines separated by '\n' (a trailing '\r' or blanks are trimmed):
//
//   line    := name ':' value '|' type { '|' section }
//   type    := "ms" | "h" | "d"           a distribution, the value taken as milliseconds
//   section := '@' rate                    sample rate in (0, 1]: count = llround(1 / rate) >= 1,
//                                          at most kMaxItemCount (2^40, core/counts.h)
//            | '#' tag { ',' tag }         DogStatsD tags, each becoming a field
//   tag     := key ':' value               "op:read" -> op=read (value may hold further ':')
//            | key                         "canary"  -> canary=true
//
// The value may be fractional ("12.5"); it becomes integer nanoseconds rounded to nearest. The
// series is kind latency, unit "ns", fields canonical (core/series.h). Counters, gauges, sets and
// everything else are refused with a reason saying what is wrong; empty lines are skipped
// silently. Each section may appear at most once.
//
// Per-line results: one bad line never loses the good lines of the same packet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trailmap {

// One accepted statsd line.
struct StatsdSample {
  std::string metric;     // validated metric name
  std::string fields;     // canonical field set from the tags, "" without tags
  uint64_t value_ns = 0;  // the value in nanoseconds
  uint64_t count = 1;     // events it stands for (1 / sample rate)
};

// Why a line was refused, coarsely, for counters ("rejected by reason class").
enum class StatsdReject : uint8_t {
  kSyntax = 0,  // no ':' or '|', unknown or repeated section
  kType,        // a type other than ms, h, d
  kValue,       // not a number, negative, too large
  kName,        // bad metric name
  kTag,         // bad tag or too many tags
  kRate,        // bad sample rate, or one standing for more than kMaxItemCount events
};
inline constexpr size_t kStatsdRejectClasses = 6;
const char* StatsdRejectName(StatsdReject reason);

struct StatsdError {
  size_t line = 0;  // 1-based line number within the packet
  StatsdReject reason = StatsdReject::kSyntax;
  std::string message;  // "line 2: value '-3' is negative"
};

struct StatsdPacket {
  std::vector<StatsdSample> samples;  // in packet order
  std::vector<StatsdError> errors;    // in packet order
};

// Parses one line (no '\n'). `*reason` (if non-null) receives the class on failure; the Status
// message has no "line N:" prefix.
Result<StatsdSample> ParseStatsdLine(std::string_view line, StatsdReject* reason = nullptr);

// Parses every line of a packet; blank lines are skipped and do not count as errors.
StatsdPacket ParseStatsdPacket(std::string_view packet);

}  // namespace trailmap
