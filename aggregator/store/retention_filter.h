// RetentionFilterFactory: drops a data column family's keys (hist, hist_10s, hist_60s, scalar,
// stacks, stacks_60s) once their time bucket is older than the family's retention, as RocksDB
// compacts them (aggregator/store/keys.h has the key grammar).
//
// A key of resolution r at second b holds [b, b + r); it is dropped when b + r <= now - retention,
// i.e. when all of its bucket has aged out. Merge operands and values are dropped alike, so a key
// part-merged across levels disappears whole once every part of it has been compacted. A key that
// is not a 20-byte data key is kept (never drop what we cannot read).
//
// `now` is read once per compaction from the injected clock (unix seconds), not per key, and
// not from any global: tests hand down a fixed clock.
//
// Retention works when compactions run. Store sets periodic_compaction_seconds on every
// family with a retention, so files that no write touches are still rewritten (and filtered) at
// least once a day. Until then, data past retention may still be read by queries.
//
// Thread safety: RocksDB may create filters from any thread; the factory is immutable.
#pragma once

#include <rocksdb/compaction_filter.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace trailmap::aggregator {

class RetentionFilterFactory : public rocksdb::CompactionFilterFactory {
 public:
  // `family` names the column family in Name(); keys there span `resolution` seconds; kept for
  // `retention_seconds` (> 0). `clock` returns unix seconds; empty = the system clock.
  RetentionFilterFactory(std::string family, uint32_t resolution, int64_t retention_seconds,
                         std::function<int64_t()> clock);

  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  const char* Name() const override { return name_.c_str(); }

 private:
  const std::string name_;
  const uint32_t resolution_;
  const int64_t retention_seconds_;
  const std::function<int64_t()> clock_;
};

// The filter one compaction uses: drops keys whose bucket ends at or before `cutoff`.
class RetentionFilter : public rocksdb::CompactionFilter {
 public:
  RetentionFilter(uint32_t resolution, int64_t cutoff) : resolution_(resolution), cutoff_(cutoff) {}
  Decision FilterV2(int level, const rocksdb::Slice& key, ValueType value_type,
                    const rocksdb::Slice& existing_value, std::string* new_value,
                    std::string* skip_until) const override;
  const char* Name() const override { return "trailmap.retention"; }
  // Keys dropped so far by this filter.
  uint64_t dropped() const { return dropped_; }

 private:
  const uint32_t resolution_;
  const int64_t cutoff_;
  mutable uint64_t dropped_ = 0;
};

}  // namespace trailmap::aggregator
