// OtlpConverter: OTLP metrics (an ExportMetricsServiceRequest, schemas/otlp/) into the
// Bucketizer's histograms and scalars.
//
//   OTLP point                          trailmap
//   histogram, exponential histogram    a histogram of kind latency (unit ns) for a metric unit of
//                                       ns, us, ms, s, min, h; kind size (unit B) for By, KBy,
//                                       KiBy, MBy, MiBy, GBy, GiBy; kind size, unit "1" (values
//                                       rounded to integers) for any other unit. Buckets become
//                                       events as agent/otlp_histogram.h says (count, sum, min,
//                                       max exact; the error bound is there).
//   sum, monotonic                      kind scalar, unit "/s": the increase in the second of the
//                                       point, added up per second (statsd's counter rule,
//                                       agent/statsd_scalars.h), so a range's total is exact.
//   sum, not monotonic                  kind scalar: cumulative → its value; delta → a running
//                                       total (statsd's gauge "+3" rule, unit "1")
//   gauge                               kind scalar: the point's value (the last one of a second)
//   summary                             refused: its quantiles cannot be merged across hosts
//
// Temporality. Delta points are taken as they are. A cumulative point becomes the difference
// from the series' previous point (state per metric and field set, at most
// `max_cumulative_series`, least recently used evicted and counted). A reset — a later
// start_time_unix_nano, or a count or value that went down — makes the point itself the delta.
// The first point of a series counts whole when its start is after the agent started (and after
// the newest point of any series evicted since: that one's history may already be shipped);
// otherwise it is only remembered (counted as a baseline), since an earlier agent may have
// shipped part of it. The min and max of a cumulative histogram cover its whole history, so a
// delta keeps one only when it changed (it was then seen in this interval). A delta whose sum
// (the difference of two doubles) does not fit its buckets goes without it (counted).
//
// Fields. The point's attributes, and the resource attributes named in `resource_fields`, become
// fields (core/series.h): strings as they are, booleans "true"/"false", numbers in decimal; an
// empty string is left out; a point attribute wins over a resource one of the same key. The
// resource's host.name is this agent's host: equal to `host` it is left out; otherwise it stays
// a field named host.name (one agent ships one host: run one per host, or query by that field).
//
// Time. A point lands in the second of its time_unix_nano (0: the receive second); one more
// than `max_past_seconds` before now or `max_future_seconds` after is refused, as statsd's |T is.
//
// Refusals. A point that cannot be taken whole is refused alone — NaN or infinite values,
// negative histogram values, bucket counts that do not add up to the count, too many events
// (kMaxItemCount), a bad name or attribute, a time out of the window — counted by reason and
// named (the first few) in the result, which becomes OTLP's partial_success. A point flagged
// "no recorded value" is skipped and counted, neither accepted nor refused. An attribute key or
// value a field cannot hold is rewritten, not refused: bytes outside [!-~] and ',' become '_'
// (keys: outside [A-Za-z0-9_.-]), a value is cut at 200 bytes, a key at 64 (counted); more than
// 16 fields refuse the point.
//
// Thread safety: Convert and counters() may be called from any thread (a mutex inside). The
// bucketizer must outlive the converter.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "agent/statsd_scalars.h"
#include "ingest/bucketizer.h"

namespace opentelemetry::proto::collector::metrics::v1 {
class ExportMetricsServiceRequest;
}

namespace trailmap {

using OtlpRequest = opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest;

struct OtlpConvertOptions {
  std::string host;  // this agent's host: a resource host.name equal to it is no field
  // Resource attributes kept as fields (most describe the process: pid, command line, SDK).
  std::vector<std::string> resource_fields = {"service.name", "service.namespace",
                                              "deployment.environment", "host.name"};
  int64_t max_past_seconds = 600;  // the time window, as statsd's |T
  int64_t max_future_seconds = 60;
  size_t max_cumulative_series = 100'000;  // cumulative series whose last point is remembered
  // Unix seconds now; empty = the system clock. Tests hand down a fixed clock.
  std::function<int64_t()> clock;
  // When this agent started (unix seconds): a first cumulative point that started at or after it
  // counts whole. 0 = the clock's reading when the converter is built.
  int64_t started = 0;
  // Bytes of remembered cumulative points (their buckets); past it the least recently used are
  // evicted, as past max_cumulative_series.
  size_t max_cumulative_bytes = 64 << 20;
};

// Why a point was refused (counted per class; messages name the point).
enum class OtlpReject : uint8_t {
  kValue = 0,  // NaN, infinite or negative where it cannot be; a sum the buckets cannot hold
  kShape,      // bucket counts that do not match the count or the bounds; a bad scale
  kName,       // a metric name trailmap cannot keep
  kAttribute,  // an attribute value that cannot be a field, or too many of them
  kTime,       // time_unix_nano outside the window
  kType,       // summaries, points without a value, an unspecified temporality
  kCount,      // more events than one item may hold (kMaxItemCount)
};
inline constexpr size_t kOtlpRejectClasses = 7;
const char* OtlpRejectName(OtlpReject reason);

struct OtlpCounters {
  uint64_t requests = 0;
  uint64_t points_accepted = 0;
  uint64_t points_rejected = 0;
  std::array<uint64_t, kOtlpRejectClasses> rejected_by_reason{};
  uint64_t no_value = 0;          // points flagged "no recorded value": skipped
  uint64_t baselines = 0;         // first cumulative points only remembered
  uint64_t resets = 0;            // cumulative series that started again
  uint64_t evicted_series = 0;    // cumulative series forgotten at max_cumulative_series
  uint64_t histogram_events = 0;  // events recorded from histogram points
  uint64_t inexact_deltas = 0;    // cumulative deltas recorded without their sum (it did not fit)
  uint64_t attributes_rewritten = 0;  // keys or values made to fit a field (rule above)
};

// What one request came to: OTLP's partial_success.
struct OtlpExportResult {
  uint64_t accepted = 0;
  uint64_t rejected = 0;
  std::string error_message;  // "" when nothing was refused; else the first reasons
};

class OtlpConverter {
 public:
  OtlpConverter(Bucketizer* bucketizer, OtlpConvertOptions options);
  ~OtlpConverter();
  OtlpConverter(const OtlpConverter&) = delete;
  OtlpConverter& operator=(const OtlpConverter&) = delete;

  OtlpExportResult Convert(const OtlpRequest& request);
  OtlpCounters counters() const;
  size_t cumulative_series() const;

 private:
  struct State;  // the conversion, kept out of this header (it needs the generated types)
  mutable std::mutex mu_;
  std::unique_ptr<State> state_;  // guarded by mu_
};

}  // namespace trailmap
