#include "aggregator/store/cache_warmer.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <memory>
#include <string>

#include "aggregator/store/database.h"
#include "aggregator/store/keys.h"
#include "aggregator/store/periodic_thread.h"
#include "core/log.h"

namespace trailmap::aggregator {

void CacheWarmer::Start() {
  if (options_.warm_cache_seconds == 0) {
    warmed_.store(true, std::memory_order_release);
    return;
  }
  thread_ = std::thread([this] {
    if (!RunCaught("block cache warming", &failures_, [this] { Warm(); })) {
      warmed_.store(true, std::memory_order_release);  // ended: the cache is only colder
    }
  });
}

void CacheWarmer::Stop() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

void CacheWarmer::Warm() {
  // Below the ingest and query threads: only what they leave of the cores.
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 10);
  const auto started = std::chrono::steady_clock::now();
  const auto seconds =
      static_cast<int64_t>(std::min<size_t>(options_.warm_cache_seconds, INT32_MAX));
  const uint64_t bound = (uint64_t{options_.block_cache_mb} << 20) / 2;
  const auto cache_bytes = [this] {
    uint64_t used = 0;
    db_.db()->GetIntProperty(db_.hist(0), rocksdb::DB::Properties::kBlockCacheUsage, &used);
    return used;
  };
  constexpr uint64_t kCheckEvery = 4096;  // keys between looks at the stop flag and the bound
  bool full = false;
  DataKey key;
  for (rocksdb::ColumnFamilyHandle* family : {db_.hist(0), db_.stacks()}) {
    // Each metric from the last: its newest second, then its keys of the seconds before it.
    std::unique_ptr<rocksdb::Iterator> it(db_.db()->NewIterator(rocksdb::ReadOptions(), family));
    for (it->SeekToLast(); it->Valid() && !stop_.load(std::memory_order_relaxed);) {
      if (!DecodeDataKey(View(it->key()), &key)) break;  // not a data key: nothing to warm
      const uint32_t metric = key.metric;
      const int64_t newest = key.second;
      it->Seek(
          DataKeyPrefix(metric, newest >= INT64_MIN + seconds ? newest - seconds + 1 : newest));
      for (uint64_t n = 1; it->Valid(); it->Next(), ++n) {
        // A key's block (and its value with it) is in the cache once the iterator is on it.
        if (!DecodeDataKey(View(it->key()), &key) || key.metric != metric) break;
        warmed_keys_.fetch_add(1, std::memory_order_relaxed);
        if (n % kCheckEvery == 0 &&
            (stop_.load(std::memory_order_relaxed) || cache_bytes() >= bound)) {
          full = true;
          break;
        }
      }
      if (full || metric == 0) break;
      it->SeekForPrev(DataKeyPrefix(metric, INT64_MIN));  // the metric before: its newest key
    }
    if (full) break;
  }
  warmed_.store(true, std::memory_order_release);
  if (stop_.load(std::memory_order_relaxed)) return;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  Log("block cache: the newest " + std::to_string(seconds) + " s of every metric read in " +
      std::to_string(ms) + " ms (" + std::to_string(WarmedKeys()) + " keys, " +
      std::to_string(cache_bytes() >> 20) + " MiB cached" +
      (full ? ", stopped at half the cache" : "") + ")");
}

}  // namespace trailmap::aggregator
