// BackfillDriver: the background pass that writes the fleet pre-aggregates a store lacks for the
// data it held before they were configured (what and why: aggregates_backfill.h).
//
// At Open, Begin marks the aggregates of a store without data complete, and resumes the backfill
// from meta or begins it for the aggregates that are not. Then its thread (every
// rollup_interval_ms, half a second a pass, so the rollups keep their pace beside it) or the
// caller (Backfill) reads `hist` minute by minute, each minute at a snapshot, and PUTs its sums
// under the database's write lock only if no ingest write came to that minute meanwhile (the
// applier reports each one: NoteWrite), with the cursor in the same WriteBatch, so a kill
// resumes where it stopped and nothing counts twice. After the last minute the aggregates are
// marked complete and read from then on, and the thread ends.
//
// Thread safety: every method may be called from any thread; one Backfill at a time (its own
// lock).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>

#include "aggregator/store/aggregates_backfill.h"
#include "aggregator/store/periodic_thread.h"
#include "aggregator/store/rollup.h"
#include "aggregator/store/store_options.h"
#include "core/status.h"

namespace trailmap::aggregator {

class Aggregates;
class Catalog;
class Database;
class RollupDriver;

class BackfillDriver {
 public:
  // Every reference outlives the driver (the Store owns them all).
  BackfillDriver(const StoreOptions& options, Database& db, const Catalog& catalog,
                 Aggregates& aggregates, RollupDriver& rollups);
  ~BackfillDriver() { Stop(); }
  BackfillDriver(const BackfillDriver&) = delete;
  BackfillDriver& operator=(const BackfillDriver&) = delete;

  // At Open, after the catalog and the aggregates are loaded: marks the aggregates of a store
  // without hosts complete, logs those that are not, and resumes or begins their backfill
  // (unless backfill is off). `newest_through` is the newest second any host was applied to.
  Status Begin(int64_t newest_through);
  // Starts the thread (rollup_interval_ms > 0, a backfill pending); Stop ends it.
  void Start();
  void Stop();

  // Backfills up to `max_minutes` minutes, or until `budget` has passed (0: no limit) or the
  // thread stops. When the last minute is written the aggregates are marked complete. Returns
  // how many minutes it wrote; an error (a histogram that does not decode, a write error) stops
  // this call, and the next call retries the minute.
  Result<size_t> Backfill(size_t max_minutes = SIZE_MAX, std::chrono::milliseconds budget = {});

  // The applier, for each write to a (non-aggregate) metric's minute: a minute being read must
  // see this write or be redone.
  void NoteWrite(uint32_t metric, int64_t minute) {
    if (backfilling_.load(std::memory_order_relaxed)) minutes_.TouchIfPending(metric, minute);
  }
  // Minutes still to write (0 when none runs).
  uint64_t MinutesLeft() const { return left_.load(std::memory_order_relaxed); }
  uint64_t thread_failures() const { return thread_.failures(); }

 private:
  // Marks the aggregates of a store without data complete; logs those that are not.
  Status MarkAggregates();
  // Resumes the backfill from meta, or begins it for the incomplete aggregates.
  Status StartBackfill(int64_t newest_through);
  // The next minute to backfill from the state's cursor on; nullopt when none is left.
  Result<std::optional<std::pair<uint32_t, int64_t>>> NextMinute() const;
  // Backfills one minute: true when written, false when a write to it came meanwhile.
  Result<bool> BackfillMinute(uint32_t metric, int64_t minute);
  // Marks the backfilled aggregates complete and ends the backfill.
  Status Finish();

  const StoreOptions& options_;
  Database& db_;
  const Catalog& catalog_;
  Aggregates& aggregates_;
  RollupDriver& rollups_;
  std::mutex mu_;  // one Backfill at a time; guards state_
  std::optional<BackfillState> state_;
  std::atomic<bool> backfilling_{false};
  // The minute being read: every ingest write to it bumps its generation while backfilling_.
  PendingMinutes minutes_;
  std::atomic<uint64_t> left_{0};
  PeriodicThread thread_;
};

}  // namespace trailmap::aggregator
