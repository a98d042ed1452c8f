// StoreOptions: everything a Store is opened with, each with its default. Read by the store and
// by each of its parts (database.h, batch_applier.h, rollup_driver.h, backfill_driver.h,
// cache_warmer.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "aggregator/store/aggregates.h"
#include "aggregator/store/keys.h"
#include "aggregator/store/stack_dictionary.h"

namespace trailmap::aggregator {

struct StoreOptions {
  // fsync the WAL before ApplyBatch returns. An ack is a promise: with false, a power loss can
  // lose acknowledged batches (a process crash cannot).
  bool sync = true;
  // Merge operands of one key kept in a memtable before RocksDB merges them on write (bounds read
  // cost for hot keys; 0 would leave it unbounded).
  size_t max_successive_merges = 16;
  // Shared block cache over all column families, MiB. A heat map of 100 hosts x 1 h at 1 s reads
  // 720,000 keys (~100 bytes each): with 64 MiB each repeat read and decompressed its blocks
  // again (470 ms of aggregator CPU, against 370 ms with 256 MiB, on bench/cluster-bench data).
  // A region -> flame query of 1,000 hosts x 10 min reads ~320 MB of blocks (histograms and
  // stacks, as the cache holds them): with 256 MiB every repeat decompressed them all again
  // (1.6-2.1 s of aggregator CPU), with 1,024 MiB 0.9-1.0 s (docs/benchmarks-log.md, "The web
  // page and trailmap-query").
  // An LRU bound, not an allocation: an aggregator that is not read from stays small.
  size_t block_cache_mb = 1024;
  // Memtable size of the `hist` column family, MiB (the others use a quarter of it).
  size_t write_buffer_mb = 32;
  // Free space, MiB, that the data directory's file system must keep: below it a write is
  // refused (not written, so not acked; the agents resend) until space returns. RocksDB must
  // never meet ENOSPC itself: Debian's RocksDB 7.8 is built with assertions, and the first WAL
  // append that fails with ENOSPC aborts the process (WritableFileWriter,
  // `sync_without_flush_called_`). The reserve leaves room for flushes and compactions of what is
  // already written. 0 = no check.
  size_t min_free_mb = 256;
  // After Open, a background thread (niced) reads the newest this many seconds of each metric's
  // 1 s histograms and stacks into the block cache, so the first query after a start does not
  // read and decompress them itself: a region -> flame query of 1,000 hosts x 10 min took
  // 0.89-1.27 s first against ~0.5 s warm (docs/benchmarks-log.md, "The web page and
  // trailmap-query"). It stops at half the block cache, and when the store closes. 0 = off.
  size_t warm_cache_seconds = 600;
  // Flushes plus compactions at once: sized for a 2-core box.
  int background_jobs = 2;
  // Threads one histogram query scans with (time slices of a long range in parallel); 1 = the
  // caller's thread only.
  int query_threads = 2;
  // Bounds on the agents' stack dictionaries held in memory.
  StackDictionaryOptions dictionaries;
  // Seconds each histogram family keeps its data, in kHistogramResolutions order (hist, hist_10s,
  // hist_60s, hist_600s); 0 = forever. A key goes when all of its bucket is older than now -
  // retention. A Store keeps everything unless told; trailmap-aggregator's config starts from
  // kDefaultRetention (aggregator_config.h).
  std::array<int64_t, kHistogramResolutionCount> retention_seconds = {0, 0, 0, 0};
  // Seconds `scalar`, `stacks` (per second) and `stacks_60s` (per minute) keep their data; 0 =
  // forever. trailmap-aggregator's defaults are in aggregator_config.h.
  int64_t scalar_retention_seconds = 0;
  int64_t stacks_retention_seconds = 0;
  int64_t stacks_60s_retention_seconds = 0;
  // The watermark of an agent that has sent nothing for this long is deleted (batch_applier.h:
  // what happens if it comes back); 0 = never.
  int64_t agent_idle_seconds = 0;
  // Unix seconds now, for retention; empty = the system clock. Tests hand down a fixed clock.
  std::function<int64_t()> clock;
  // A background thread rolls up pending minutes this often; 0 = no thread (the caller runs
  // RollUp, as tests do).
  int rollup_interval_ms = 1000;
  // A minute is rolled up once nothing has been written to it for this long (a minute that is
  // still being written would be rolled up again and again).
  int rollup_quiet_ms = 2000;
  // Tests: called by the rollup pass after it has computed a minute, before its last write.
  std::function<void(uint32_t metric, int64_t minute)> before_rollup_write;
  // Tests: the same for a 10-minute block (its start second).
  std::function<void(uint32_t metric, int64_t block)> before_block_write;
  // Tests: called by the aggregate backfill after it has computed a minute, before its write.
  std::function<void(uint32_t metric, int64_t minute)> before_backfill_write;
  // Pre-aggregates written at ingest (aggregator/store/aggregates.h): the fleet always, these
  // fields too; the cluster file gives each host's owner group.
  AggregateOptions aggregates;
};

}  // namespace trailmap::aggregator
