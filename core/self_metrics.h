// Self-metrics: the half that both daemons share of how they measure themselves. The agent
// (agent/self_metrics.h) and the aggregator (aggregator/server/self_metrics.h) publish their own
// counters once a second as scalar metrics of their own host, so trailmap draws them like any
// other metric.
//
// A SelfReading is one reading of one series: a gauge (its value now: bytes held, descriptors
// open) or a counter (a running total since the process started: batches sent). CounterDeltas
// turns readings into the values to store for one second: a gauge as read; a counter as what it
// gained since the previous reading of the same series, the first reading counting from 0 (the
// process's start). So a counter's stored values summed over a range are exactly what happened
// in it, and one second's value is the per-second rate whenever readings are one second apart
// (they are unless the daemon stalled: then that one second holds the whole gap). A counter that
// went backwards (its source restarted its count) stores its new total.
//
// ProcessStats reads this process's resident memory, open descriptors and CPU time (from
// /proc/self/statm, /proc/self/fd and getrusage); AddProcessReadings names them under a prefix:
//
//   PREFIX.process.rss   gauge    B      resident memory (statm resident pages x page size)
//   PREFIX.process.fds   gauge    fds    open file descriptors (entries of /proc/self/fd)
//   PREFIX.process.cpu   counter  ns     CPU time, fields mode=user and mode=system: per second,
//                                        1s is one core busy
//
// Value types and pure functions, except CounterDeltas (it holds the previous readings; not
// thread-safe) and ReadProcessStats (reads /proc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/batch.h"
#include "core/status.h"

namespace trailmap {

struct SelfReading {
  SeriesDef series;      // kind kScalar, with a unit and a one-line description
  bool counter = false;  // a running total, stored as its gain; false: a gauge, stored as is
  double value = 0;
};
using SelfReadings = std::vector<SelfReading>;

// Appends a gauge / a counter of metric `metric` with the canonical field set `fields`.
void AddGauge(SelfReadings* readings, std::string metric, std::string unit,
              std::string description, double value, std::string fields = "");
void AddCounter(SelfReadings* readings, std::string metric, std::string unit,
                std::string description, uint64_t total, std::string fields = "");

// One uint64_t field of a part's counters struct as a metric: a table of these turns the struct
// into readings, one line per metric (agent/self_metrics.cc, aggregator/server/self_metrics.cc).
template <typename Counters>
struct CounterField {
  const char* metric;
  bool counter;  // false: a gauge
  const char* unit;
  const char* description;
  uint64_t Counters::*field;
};

// Appends one reading of `counters` per row of `table`, each with the field set `fields`.
template <typename Counters, size_t N>
void AddFields(const Counters& counters, const CounterField<Counters> (&table)[N],
               const std::string& fields, SelfReadings* readings) {
  for (const CounterField<Counters>& m : table) {
    if (m.counter) {
      AddCounter(readings, m.metric, m.unit, m.description, counters.*m.field, fields);
    } else {
      AddGauge(readings, m.metric, m.unit, m.description,
               static_cast<double>(counters.*m.field), fields);
    }
  }
}

class CounterDeltas {
 public:
  // The value to store for each reading, in order (see the header).
  std::vector<double> Take(const SelfReadings& readings);

 private:
  std::unordered_map<std::string, double> last_;  // metric '\0' fields -> previous total
};

struct ProcessStats {
  uint64_t rss_bytes = 0;
  uint64_t open_fds = 0;
  uint64_t user_cpu_ns = 0;
  uint64_t system_cpu_ns = 0;
};

// The resident pages of /proc/PID/statm ("size resident shared text lib data 0"): its second
// number. InvalidArgument naming the file when it is not there or not a number.
Result<uint64_t> ParseStatmResidentPages(std::string_view text);
// This process now. `proc_self` is the /proc/self directory (tests point it elsewhere). IOError
// naming the file when statm or the fd directory cannot be read.
Result<ProcessStats> ReadProcessStats(const std::string& proc_self = "/proc/self");
// PREFIX.process.rss, .fds and .cpu (see the header) of `stats`.
void AddProcessReadings(std::string_view prefix, const ProcessStats& stats,
                        SelfReadings* readings);

}  // namespace trailmap
