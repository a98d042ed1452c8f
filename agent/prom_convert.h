// PromConverter: a Prometheus remote-write request (protocol 1.0, schemas/prometheus/) into
// per-host histograms and scalars, converted whole before anything is applied.
//
//   Prometheus series                      trailmap
//   NAME_bucket{le=...}, NAME_sum,         a histogram NAME per second: the increase of each
//   NAME_count (a classic histogram)       cumulative bucket since the series' previous sample,
//                                          placed within its bucket as OTLP's are
//                                          (agent/otlp_histogram.h; the count exact, the error
//                                          the source bucket's width); NAME_sum's increase as
//                                          its sum. NAME_count is not needed (it is +Inf's).
//   a native histogram, schema -4..8       a histogram NAME: the increase of every bucket by its
//                                          exact schema (bucket i holds (b^(i-1), b^i],
//                                          b = 2^(2^-schema)), the zero bucket as [0, threshold];
//                                          negative buckets as a histogram NAME.negative of the
//                                          values' magnitudes. A gauge histogram (reset hint
//                                          GAUGE) is taken whole at each sample.
//   a native histogram, schema -53 (NHCB)  as a classic one, bounds from custom_values
//   NAME_total, or a counter by metadata,  a scalar, unit "/s": the increase in the second of
//   or a _sum/_count with no buckets       the sample, as OTLP's monotonic sums
//   anything else (a gauge)                a scalar, unit "1": the sample's value
// A histogram's kind and unit follow the name: _seconds (and _milliseconds, _microseconds,
// _nanoseconds) latency in ns, _bytes size in B, otherwise size unit "1".
//
// State. Counters and histograms are cumulative: each series' previous sample is remembered (at
// most `max_series`, and `max_state_bytes` of buckets; least recently used forgotten and
// counted). A series' first sample is only remembered (a baseline), since remote write carries
// no start time. A value below the previous one is a reset: the new value is the increase. A
// classic histogram's buckets may come in different requests (Prometheus shards series); a
// timestamp is emitted once every bucket the histogram had before it has come (at most
// `max_pending_timestamps` wait per histogram; older ones are dropped and counted).
//
// Host and fields. The label `host_label` ("instance") is the host; `le`, `__name__` and it are
// not fields; every other label is (a key a query reads otherwise, host/value/latency/size/
// overflow, becomes label_KEY; a value is rewritten to fit as OTLP's attributes are). ':' in a
// metric name becomes '.'.
//
// Refusals. A request is refused whole (InvalidArgument naming the series and what is wrong)
// for: a series without a name or host label, more than 16 fields, a histogram whose buckets
// are not cumulative or not whole numbers, spans that do not match the buckets, an unknown
// schema, buckets that hold more than the count (the count may pass them: NaN observations fall
// in no bucket). A host that `admit_host` refuses refuses the request with its status.
// Prometheus' staleness markers and samples outside the time window are skipped and counted,
// not refused.
//
// Thread safety: Convert and counters() may be called from any thread (one mutex inside).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "agent/otlp_histogram.h"
#include "core/batch.h"
#include "core/status.h"

namespace prometheus {
class WriteRequest;
}

namespace trailmap {

struct PromConvertOptions {
  std::string host_label = "instance";  // the label that names the host
  size_t max_series = 200'000;          // series whose previous sample is remembered
  size_t max_state_bytes = 64 << 20;    // their memory (native buckets most of it)
  size_t max_pending_timestamps = 8;    // per classic histogram, waiting for their buckets
  // The time window: samples older (Prometheus resends after an outage from its WAL, ~2 h) or
  // newer are skipped and counted.
  int64_t max_past_seconds = 3 * 3600;
  int64_t max_future_seconds = 60;
  std::function<int64_t()> clock;  // unix seconds now; empty = the system clock
};

// What one request becomes: histogram events and scalar values per host and second.
struct PromHistogramWrite {
  std::string host;
  int64_t second = 0;
  SeriesDef series;
  std::vector<PlacedValue> values;
};
struct PromScalarWrite {
  std::string host;
  int64_t second = 0;
  SeriesDef series;
  double value = 0;
};
struct PromWrites {
  std::vector<PromHistogramWrite> histograms;
  std::vector<PromScalarWrite> scalars;
  uint64_t samples = 0;  // float samples and histogram samples in the request
};

struct PromConvertCounters {
  uint64_t requests = 0;           // converted (not refused)
  uint64_t samples = 0;            // float samples taken
  uint64_t histogram_samples = 0;  // native histogram samples taken
  uint64_t histogram_events = 0;   // events placed from classic and native histograms
  uint64_t baselines = 0;          // first samples only remembered
  uint64_t resets = 0;             // cumulative series that went down: started again
  uint64_t stale = 0;              // staleness markers and NaN samples skipped
  uint64_t out_of_window = 0;      // samples outside the time window, skipped
  uint64_t incomplete = 0;         // classic histogram timestamps dropped waiting for buckets
  uint64_t evicted_series = 0;     // remembered series forgotten at the bounds
  uint64_t inexact_sums = 0;       // histograms placed without their sum (it did not fit)
};

class PromConverter {
 public:
  explicit PromConverter(PromConvertOptions options = {});
  ~PromConverter();
  PromConverter(const PromConverter&) = delete;
  PromConverter& operator=(const PromConverter&) = delete;

  // Converts every series of `request`. On success the remembered samples move on and the writes
  // come back; on a refusal (above) nothing changes. `admit_host` (empty: every host is) is asked
  // about each series' host; its first refusal refuses the request.
  Result<PromWrites> Convert(const prometheus::WriteRequest& request,
                             const std::function<Status(std::string_view host)>& admit_host = {});
  PromConvertCounters counters() const;
  size_t remembered_series() const;

 private:
  struct State;
  mutable std::mutex mu_;
  std::unique_ptr<State> state_;  // guarded by mu_
};

// The bounds of bucket `index` of a native histogram of `schema` (-4..8): (b^(index-1), b^index],
// b = 2^(2^-schema). Prometheus' indexes are OTLP's plus one.
void NativeBucketBounds(int32_t schema, int32_t index, double* lo, double* hi);

}  // namespace trailmap
