// Backfill of pre-aggregates (aggregator/store/aggregates.h) configured on a store that already
// holds data: an operator adds `--aggregate-by role` to a running aggregator, or enables the fleet
// aggregate on a store made with --no-aggregates. From the restart on, ingest writes the new
// aggregate with every batch; the backfill writes it for what was stored before, from the hosts'
// 1 s histograms, and then marks it complete so queries read it.
//
// How (BackfillDriver::Backfill, on the driver's own thread: backfill_driver.h):
//   - Which seconds. Every minute of `hist` up to `through`, the newest second any host had
//     applied when the backfill began (later seconds were written with the aggregate). Queries
//     read the aggregate once it is complete from `complete_from`: the beginning of time when
//     `hist` holds, for every metric, all its stored history (no coarser family holds anything
//     older than its first minute in `hist`, and nothing is near the 1 s retention's edge);
//     else from the first whole minute that every metric has in `hist` and that the 1 s
//     retention (less an hour) keeps, since older seconds live only in the rollups. A query
//     that starts earlier reads the hosts, exactly as before.
//   - Each minute, like a rollup (rollup.h): under the store's write lock the minute is marked in
//     a set whose generation every ingest write to it bumps and a snapshot is taken; the minute's
//     host histograms are read at the snapshot and summed per (second, owner group, value) of
//     the aggregates being backfilled (ComputeAggregateMinute); then, under the lock again and
//     only if no write came to the minute since, those sums are PUT over the aggregate's keys
//     (they include whatever ingest merged into them since the aggregate was configured, since
//     the hosts' keys hold it too), the aggregate's minute is marked pending for the rollups
//     (which then redo its 10 s, 60 s and 600 s keys from `hist`), and the backfill's cursor
//     moves past the minute, all in one WriteBatch. A write that came meanwhile makes it redo
//     the minute from a newer snapshot. So every histogram is counted once, whatever ingest does.
//   - Resumable: the state (meta "Backfill", below) holds the cursor; after a kill, Open resumes
//     at the minute after the last one written. Redoing a minute is harmless (a Put of the same
//     sums). If the set of aggregates to backfill changes between runs, it starts over.
//   - Done: one write puts each aggregate's 'A' marker with `complete_from` and deletes the state.
//   - Progress: logged every 10% and at the end; Store::BackfillMinutesLeft is the self-metric
//     trailmap.aggregator.aggregates.backfill_pending.
//   - The fleet and the other complete aggregates share the aggregate metric's keys: the
//     backfill writes only the keys of the values it backfills, and the fleet's stay as they are.
//
// Meta (keys.h): "Backfill" -> state, with this grammar (fixed-width big-endian; fields as a
// comma-separated list, "" = the fleet, e.g. ",role" for the fleet and role):
//
//   state := complete_from:i64 through:i64 metric:u32 minute:i64 done:u64 total:u64 fields
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "aggregator/store/keys.h"
#include "core/histogram.h"
#include "core/status.h"

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
class Snapshot;
}  // namespace rocksdb

namespace trailmap::aggregator {

inline constexpr char kBackfillKey[] = "Backfill";

struct BackfillState {
  std::vector<std::string> fields;    // the aggregates being backfilled ("" = the fleet)
  int64_t complete_from = INT64_MIN;  // they answer queries from this second once done
  int64_t through = 0;                // minutes after this one were written with them
  uint32_t metric = 0;                // the next minute to do: (metric, minute) and after
  int64_t minute = INT64_MIN;
  uint64_t done = 0, total = 0;  // minutes written / to write (counted when it began)
};

std::string EncodeBackfillState(const BackfillState& state);
// Corruption for a value that does not follow the grammar.
Result<BackfillState> DecodeBackfillState(std::string_view value);

// One minute's sums: (second, owner list, value text) -> histogram; value text "" = the fleet.
using AggregateSums = std::map<std::tuple<int64_t, std::string, std::string>, Histogram>;

// What a host key adds to: its owner list at that second and the value texts it counts under.
using ClassifyKey =
    std::function<void(const DataKey& key, std::string* owners, std::vector<std::string>* values)>;

// Reads minute [start, start + 60) of `metric` from `hist` at `snapshot` and adds each host
// histogram to (second, owners, value) for every value `classify` gives it. Corruption if a
// stored histogram does not decode; sums saturate (core/counts.h), counted in *saturated.
Status ComputeAggregateMinute(rocksdb::DB* db, const rocksdb::Snapshot* snapshot,
                              rocksdb::ColumnFamilyHandle* hist, uint32_t metric, int64_t start,
                              const ClassifyKey& classify, AggregateSums* sums,
                              uint64_t* saturated = nullptr);

}  // namespace trailmap::aggregator
