// Bucketizer: per (second, series) histograms keyed by event time, taken out as batch-ready
// deltas once a second is complete.
//
// Cardinality is bounded per metric and second: the first `max_series_per_metric` distinct field
// sets of a metric in a second get their own series; events with any further field set go to
// the metric's overflow series (fields "overflow=true", which does not count toward the bound)
// and are counted in `overflow_events` — never dropped silently.
//
// An event for a second at or before the newest second already taken is kept and goes out with
// the next take as a further delta of that second (histogram deltas merge at the aggregator);
// `late_events` counts them.
//
// Counts are bounded (core/counts.h): an event (or stack sample) whose count would take its
// (second, series) histogram, or its (second, series, stack) count, past kMaxItemCount is refused
// whole and counted in `refused_events` — not saturated: every item taken is one the aggregator
// accepts, with the exact count of what it holds, and the refusal is visible. Counters saturate
// at kMaxTotalCount instead of wrapping.
//
// Scalars (SetScalar) share the table of series and the bound: a scalar is one value per
// (second, series), the last one set wins. Beyond the bound a scalar is added to the metric's
// overflow series (so for additive scalars — %, bytes, rates — the overflow holds the sum of
// everything that did not fit) and counted in `overflow_scalars`. A second holding only scalars
// is shipped like any other.
// Stack samples (AddStack, ingest/stack_sample.h) are counted per (second, series, stack) under
// the same bound and overflow rule; stacks and frames are interned (ingest/stack_interner.h) and
// a take carries the definitions of every stack its seconds use, so each batch stands alone and
// the Shipper decides which definitions actually travel. Depth and frame-length cuts are
// counted. The dictionary is pruned to what pending seconds still use when it passes
// `max_dictionary_stacks`.
//
// Thread safety: every method may be called from any thread (a mutex inside), so the statsd
// thread can Add while the flush thread takes.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/batch.h"
#include "core/histogram.h"
#include "ingest/stack_interner.h"
#include "ingest/stack_sample.h"

namespace trailmap {

// The fields of a metric's overflow series.
inline constexpr const char* kOverflowFields = "overflow=true";

struct BucketizerOptions {
  // Distinct field sets per metric per second; beyond it events go to the overflow series.
  size_t max_series_per_metric = 1000;
  // Stack depth and frame length bounds (ingest/stack_interner.h).
  StackInternerOptions stacks;
  // Distinct stacks remembered; past it a take forgets those no pending second uses.
  size_t max_dictionary_stacks = 100'000;
};

struct BucketizerCounters {
  uint64_t events = 0;            // events added (sum of counts)
  uint64_t overflow_events = 0;   // of which went to an overflow series
  uint64_t late_events = 0;       // of which were for a second <= the newest taken
  uint64_t refused_events = 0;    // not added: past kMaxItemCount in their second and series
  uint64_t scalars = 0;           // SetScalar calls kept
  uint64_t overflow_scalars = 0;  // of which were summed into an overflow series
  uint64_t bad_scalars = 0;       // SetScalar calls dropped: the value was NaN or infinite
  uint64_t stack_samples = 0;     // stack samples added (sum of counts; also in `events`)
  uint64_t truncated_stacks = 0;  // stacks cut at the depth bound (ending in "[truncated]")
  uint64_t truncated_frames = 0;  // frame names cut at the length bound
};

// Completed seconds, ready to become a Batch: `series` is the table the seconds refer to.
struct CompletedSeconds {
  std::vector<SeriesDef> series;
  std::vector<SecondDelta>
      seconds;                   // increasing time, each with a histogram, scalar or stack count
  std::vector<FrameDef> frames;  // every frame and stack the seconds' stack counts use
  std::vector<StackDef> stacks;
  bool empty() const { return seconds.empty(); }
};

// A Batch (agent id and sequence left for the Shipper) holding `done` for `host`.
Batch MakeBatch(CompletedSeconds done, const std::string& host, const FieldSet& labels);
// The same cut into batches the aggregator accepts (core/batch_split.h): an over-full second
// travels as several batches, each with its own sequence. Every producer ships these.
std::vector<Batch> MakeBatches(CompletedSeconds done, const std::string& host,
                               const FieldSet& labels, const BatchLimits& limits = {});

class Bucketizer {
 public:
  explicit Bucketizer(BucketizerOptions options = {});
  Bucketizer(const Bucketizer&) = delete;
  Bucketizer& operator=(const Bucketizer&) = delete;

  // Records `count` events of `value` (in the series' unit) at `unix_second`. `series.fields`
  // must already be canonical (core/series.h).
  void Add(int64_t unix_second, const SeriesDef& series, uint64_t value, uint64_t count = 1);
  // Counts sample.count samples of the stack at sample.second in the series (sample.metric,
  // kind stacks, unit "samples", sample.fields, which must be canonical).
  void AddStack(const StackSample& sample);

  // Sets the value of scalar `series` at `unix_second` (last write wins; see the overflow rule
  // above). `series.fields` must already be canonical. True when the value was added to the
  // overflow series (kOverflowFields) instead: a caller that writes running totals
  // (agent/statsd_scalars.h) then sets that series' exact sum itself, which wins as the last write.
  bool SetScalar(int64_t unix_second, const SeriesDef& series, double value);

  // Removes and returns the seconds before `second`, oldest first, at most `max_seconds` of
  // them (call again while it returns something, to keep batches within core's BatchLimits).
  CompletedSeconds TakeSecondsBefore(int64_t second, size_t max_seconds = 60);
  // Everything held, whatever its second (for shutdown and file import).
  CompletedSeconds TakeAll(size_t max_seconds = 60) {
    return TakeSecondsBefore(std::numeric_limits<int64_t>::max(), max_seconds);
  }

  BucketizerCounters counters() const;
  // Seconds currently held.
  size_t pending_seconds() const;

 private:
  struct Cell {
    SeriesDef series;
    Histogram histogram;
    bool has_scalar = false;  // SetScalar was called for this cell
    double scalar = 0;
  };
  // One second: a cell per series, found by SeriesKey.
  struct Second {
    std::unordered_map<std::string, size_t> index;       // SeriesKey -> cells
    std::unordered_map<std::string, size_t> per_metric;  // metric -> distinct field sets
    std::vector<Cell> cells;
    std::unordered_map<uint64_t, uint64_t> stack_counts;  // cell << 32 | stack id -> samples
  };

  Histogram* FindOrAdd(Second* second, const SeriesDef& series, uint64_t count);

  const BucketizerOptions options_;
  mutable std::mutex mu_;
  std::map<int64_t, Second> seconds_;                           // guarded by mu_
  int64_t taken_before_ = std::numeric_limits<int64_t>::min();  // newest taken + 1, guarded
  BucketizerCounters counters_;                                 // guarded by mu_
  StackInterner interner_;                                      // guarded by mu_
  std::string key_;                                             // scratch, guarded by mu_
  // The last cell added to, so a run of events for one series and second (a trace import)
  // skips the hash lookup. Guarded by mu_; reset by every take.
  Second* last_second_ = nullptr;
  int64_t last_time_ = 0;
  size_t last_cell_ = 0;
};

}  // namespace trailmap
