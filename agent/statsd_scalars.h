// StatsdScalars: statsd counters, gauges and sets as per-second scalars in the Bucketizer.
//
//   |c  counter  kind scalar, unit "/s":         the sum of value / rate over the second
//   |g  gauge    kind scalar, unit "1":          the gauge's value after the second's last line
//   |s  set      kind scalar, unit "distinct/s": distinct members seen in the second
//
// Why an accumulator here and not the Bucketizer's SetScalar alone: a bucketizer scalar is "last
// write wins" per (second, series), and so is the aggregator's stored scalar (a later batch for
// the same second replaces it). This class keeps the running state — per second and series the
// counter's sum and the set's members, per series the gauge's value across seconds (statsd's own
// rule: "+3" / "-3" change the last value the agent holds, and a gauge never sent before starts
// at 0) — and after each line writes the running total with SetScalar. Whatever take a second
// leaves with, the last value written is the whole second so far; a line arriving after its
// second was shipped re-sends the corrected total, which replaces the shipped one. Only statsd
// needs sums and distinct counts, so the state lives next to its server, not in ingest/.
//
// Bounds (hostile input must not grow memory without end): per-second state is kept for the
// seconds in [newest - keep_seconds, newest] and forgotten before (StatsdServer refuses
// timestamps outside its window, which is no wider); past max_entries series written and set
// members in all, the oldest seconds but the newest are forgotten early; a value for a
// forgotten second is dropped and counted as stale (re-setting it from nothing would replace
// the shipped total with a partial one); a set keeps at most max_set_members
// members per second (further new members are dropped and counted, so its value is then a lower
// bound); at most max_gauges gauges are remembered (a delta for a gauge that cannot be
// remembered is dropped and counted; an absolute value is still written).
//
// Overflow: a series past the bucketizer's max_series_per_metric goes to the metric's overflow
// series, where SetScalar adds what it is given. Running totals added up would overstate, so
// this class keeps, per second and metric, the exact sum of the overflowed series' totals (a
// counter's sum, a set's distinct count, a gauge's last value: each series counted once, at
// its latest value) and sets the overflow series to it after each line, which wins as the last
// write. A series stays in the overflow for the rest of its second once it went there.
//
// Loss: a gauge is written only in the seconds it was sent in. statsd's own server re-sends
// every gauge's last value at each flush; trailmap does not: a gauge is a reading an
// application makes when something changes, and a line chart of trailmap's shows the seconds
// without one as gaps, while re-sending every gauge ever seen each second would store up to
// max_gauges scalars a second for gauges whose senders stopped long ago — and a stale value
// drawn as live is worse than a gap.
//
// Thread safety: none; the statsd server's one receive thread owns it. The bucketizer must
// outlive it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "agent/statsd.h"
#include "ingest/bucketizer.h"

namespace trailmap {

struct StatsdScalarsOptions {
  int64_t keep_seconds = 660;        // per-second state kept behind the newest second seen
  size_t max_set_members = 100'000;  // distinct members per set per second
  size_t max_gauges = 100'000;       // gauges whose value is remembered across seconds
  size_t max_entries = 2'000'000;    // series written + set members held over all seconds
};

struct StatsdScalarsCounters {
  uint64_t set_members_dropped = 0;   // members not counted: the set's second was full
  uint64_t gauge_deltas_dropped = 0;  // deltas for a gauge past max_gauges
  uint64_t stale = 0;                 // values for a second already forgotten (before the window)
};

class StatsdScalars {
 public:
  StatsdScalars(Bucketizer* bucketizer, StatsdScalarsOptions options = {});
  StatsdScalars(const StatsdScalars&) = delete;
  StatsdScalars& operator=(const StatsdScalars&) = delete;

  // Applies a counter, gauge or set sample (other types are ignored) at `second` and writes the
  // resulting scalar to the bucketizer.
  void Add(int64_t second, const StatsdSample& sample);

  const StatsdScalarsCounters& counters() const { return counters_; }
  size_t remembered_gauges() const { return gauges_.size(); }
  size_t seconds_held() const { return seconds_.size(); }

 private:
  struct Written {
    double value = 0;       // the running total (a counter's sum) last written
    bool overflow = false;  // it went to the metric's overflow series
  };
  struct Second {
    std::unordered_map<std::string, Written> written;  // series key -> what was written
    std::unordered_map<std::string, std::unordered_set<std::string>> sets;  // set key -> members
    std::unordered_map<std::string, double> overflow;  // metric -> its overflow series' sum
    size_t entries = 0;                                // written.size() + every set's members
  };
  // Forgets seconds before newest - keep_seconds; false when `second` is itself forgotten.
  bool Keep(int64_t second);
  // Forgets the oldest seconds (never the newest) while more than max_entries are held.
  void Bound();
  // Writes `value`, the running total of the series key_ in `at`, to the bucketizer; for a
  // series in the overflow, the metric's exact overflow sum instead.
  void Write(int64_t second, Second& at, const SeriesDef& series, double value);

  Bucketizer* const bucketizer_;  // not owned
  const StatsdScalarsOptions options_;
  std::map<int64_t, Second> seconds_;
  int64_t newest_ = 0;
  int64_t floor_ = 0;                               // seconds before it are forgotten
  size_t entries_ = 0;                              // sum of Second::entries
  std::unordered_map<std::string, double> gauges_;  // gauge key -> value
  StatsdScalarsCounters counters_;
  std::string key_;  // scratch
};

}  // namespace trailmap
