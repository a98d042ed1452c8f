// statsd / DogStatsD line parser: pure functions, no sockets.
//
// A packet holds one or more lines separated by '\n' (a trailing '\r' or blanks are trimmed):
//
//   line    := name ':' value { ':' value } '|' type { '|' section }
//            | "_e{" ...                   a DogStatsD event: recognised, unsupported
//            | "_sc|" ...                  a DogStatsD service check: recognised, unsupported
//   type    := "ms"                        a timing in milliseconds
//            | "h" | "d"                   a histogram / distribution (unit per metric name,
//                                          see StatsdUnit; milliseconds by default)
//            | "c"                         a counter: value may be negative or fractional
//            | "g"                         a gauge: "12" sets it, "+3" / "-3" change it
//            | "s"                         a set: the value is a member (any text without ':'
//                                          or '|'), counted distinct
//   value   := a decimal number ("12.5", "1e3"); several (DogStatsD v1.1 "packed", "x:1:2:3|d")
//              are one event each, with the same rate, tags and timestamp
//   section := '@' rate                    sample rate in (0, 1]
//            | '#' tag { ',' tag }         DogStatsD tags, each becoming a field
//            | 'T' seconds                 DogStatsD timestamp: unix seconds, 1..2^40
//            | 'c:' container              DogStatsD container id: accepted and ignored
//   tag     := key ':' value               "op:read" -> op=read (value may hold further ':')
//            | key                         "canary"  -> canary=true
//
// A tag whose key is a name every query already gives a meaning (IsReservedFieldName: "host",
// the host dimension; "value", "latency", "size", the metric's value in a predicate; "overflow",
// the cardinality bound's series) would be a field no query can reach: it is kept under the key
// "tag_" + key ("host:db-1" -> tag_host=db-1) and counted (StatsdSample::renamed_tags), so its
// value stays visible. A line that then names a key twice ("#host:a,tag_host:b") is refused.
//
// Timings, histograms and distributions must be >= 0; a sample rate r makes each value stand for
// count = llround(1 / r) events (at most kMaxItemCount, 2^40, core/counts.h). A counter's value
// stands for value / r (statsd's own rule, not rounded). Gauges and sets ignore the rate (as statsd
// does). Empty lines are skipped silently. Each section may appear at most once. A gauge line
// whose packed values mix absolute values and deltas is refused (its meaning is unclear).
//
// Per-line results: one bad line never loses the good lines of the same packet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/batch.h"
#include "core/status.h"

namespace trailmap {

enum class StatsdType : uint8_t {
  kTiming = 0,    // |ms
  kHistogram,     // |h
  kDistribution,  // |d
  kCounter,       // |c
  kGauge,         // |g
  kSet,           // |s
  kEvent,         // _e{...}: unsupported, no other member is set
  kServiceCheck,  // _sc|...: unsupported, no other member is set
};
const char* StatsdTypeName(StatsdType type);

// One accepted statsd line.
struct StatsdSample {
  StatsdType type = StatsdType::kTiming;
  std::string metric;          // validated metric name
  std::string fields;          // canonical field set from the tags, "" without tags
  std::vector<double> values;  // every value as sent (finite; >= 0 for ms, h, d); not for sets
  std::vector<std::string> members;  // sets: each member as sent
  bool gauge_delta = false;          // gauges: the values are signed changes, not absolute values
  double rate = 1;                   // the sample rate, (0, 1]
  uint64_t count = 1;                // events each value of ms, h, d stands for: llround(1 / rate)
  int64_t timestamp = 0;             // |T: unix seconds; 0 = none (the receive second)
  size_t line = 1;                   // 1-based line number within the packet (ParseStatsdPacket)
  uint32_t renamed_tags = 0;         // tags with a reserved key, kept as tag_KEY (see the header)
  std::string renamed;               // the first such key, for the log ("host")
};

// Whether a field of this key could never be read by a query (see the header's tag rule).
bool IsReservedFieldName(std::string_view key);

// Why a line was refused, coarsely, for counters ("rejected by reason class").
enum class StatsdReject : uint8_t {
  kSyntax = 0,  // no ':' or '|', unknown or repeated section
  kType,        // a type other than ms, h, d, c, g, s
  kValue,       // not a number, negative, too large for its unit
  kName,        // bad metric name
  kTag,         // bad tag or too many tags
  kRate,        // bad sample rate, or one standing for more than kMaxItemCount events
  kTimestamp,   // bad |T, or (StatsdServer) outside the window the agent accepts
  kNewMetric,   // (StatsdServer) a metric name new to the agent past its bound of new names
};
inline constexpr size_t kStatsdRejectClasses = 8;
const char* StatsdRejectName(StatsdReject reason);

struct StatsdError {
  size_t line = 0;  // 1-based line number within the packet
  StatsdReject reason = StatsdReject::kSyntax;
  std::string message;  // "line 2: value '-3' is negative"
};

struct StatsdPacket {
  std::vector<StatsdSample> samples;  // in packet order
  std::vector<StatsdError> errors;    // in packet order
  size_t unsupported = 0;             // events and service checks (not in samples)
};

// Parses one line (no '\n'). `*reason` (if non-null) receives the class on failure; the Status
// message has no "line N:" prefix. Events and service checks come back with type kEvent /
// kServiceCheck and nothing else checked.
Result<StatsdSample> ParseStatsdLine(std::string_view line, StatsdReject* reason = nullptr);

// Parses every line of a packet; blank lines are skipped and do not count as errors.
StatsdPacket ParseStatsdPacket(std::string_view packet);

// What the value of an |h or |d line means, chosen per metric name (agent config [[statsd_unit]]).
// Timings (|ms) are always StatsdUnit::kMilliseconds.
enum class StatsdUnit : uint8_t {
  kMilliseconds = 0,  // kind latency, unit ns: value * 1e6, rounded to nearest
  kSeconds,           // kind latency, unit ns: value * 1e9
  kMicroseconds,      // kind latency, unit ns: value * 1e3
  kNanoseconds,       // kind latency, unit ns: value
  kBytes,             // kind size, unit B: value rounded to nearest
  kNone,              // kind size, unit "1" (a plain number): value rounded to nearest
};
// "ms", "s", "us", "ns", "B", "none" (the config spelling); InvalidArgument listing them.
Result<StatsdUnit> ParseStatsdUnit(std::string_view text);
const char* StatsdUnitName(StatsdUnit unit);
// The series kind and unit a histogram of this unit is stored as.
MetricKind StatsdUnitKind(StatsdUnit unit);
const char* StatsdUnitSeriesUnit(StatsdUnit unit);
// One [[statsd_unit]] of the agent config: |h and |d lines of metrics matching `match` (a glob:
// '*' any run of characters, '?' one, fnmatch(3) without flags) have `unit`.
struct StatsdUnitRule {
  std::string match;
  StatsdUnit unit = StatsdUnit::kMilliseconds;
  bool operator==(const StatsdUnitRule&) const = default;
};
// The unit of the first rule matching `metric`, else milliseconds.
StatsdUnit StatsdUnitFor(std::string_view metric, const std::vector<StatsdUnitRule>& rules);

// `value` (finite, >= 0) in the series unit, rounded to nearest; InvalidArgument ("value 2e19 is
// too large for unit ms (at most 18446744073709 ms)") past 2^64.
Result<uint64_t> StatsdHistogramValue(double value, StatsdUnit unit);

}  // namespace trailmap
