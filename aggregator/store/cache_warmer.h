// CacheWarmer: after Open, reads the newest warm_cache_seconds of each metric's 1 s histograms
// and stacks into the block cache, on a niced thread of its own, so the first query after a start
// does not read and decompress them itself (StoreOptions::warm_cache_seconds says what it saves).
//
// It stops at half the block cache, and when stopped (the store closing). It reads only: a
// warming that ends early costs the first queries time, never an answer.
//
// Thread safety: every method may be called from any thread; Start once.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "aggregator/store/store_options.h"

namespace trailmap::aggregator {

class Database;

class CacheWarmer {
 public:
  // `db` outlives the warmer (the Store owns both).
  CacheWarmer(const StoreOptions& options, const Database& db) : options_(options), db_(db) {}
  ~CacheWarmer() { Stop(); }
  CacheWarmer(const CacheWarmer&) = delete;
  CacheWarmer& operator=(const CacheWarmer&) = delete;

  // Starts the thread; with warm_cache_seconds = 0 it is done at once.
  void Start();
  // Ends the reading early and waits for the thread.
  void Stop();

  // Keys read so far, and whether the warming has ended (done, stopped at its bound, or off).
  uint64_t WarmedKeys() const { return warmed_keys_.load(std::memory_order_relaxed); }
  bool Warmed() const { return warmed_.load(std::memory_order_acquire); }
  // Whether the thread ended on an exception (logged; the cache is then only cold).
  uint64_t thread_failures() const { return failures_.load(std::memory_order_relaxed); }

 private:
  void Warm();

  const StoreOptions& options_;
  const Database& db_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> warmed_keys_{0};
  std::atomic<bool> warmed_{false};
  std::atomic<uint64_t> failures_{0};
  std::thread thread_;
};

}  // namespace trailmap::aggregator
