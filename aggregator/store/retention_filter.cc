#include "aggregator/store/retention_filter.h"

#include <chrono>

#include "aggregator/store/keys.h"
#include "core/clock.h"

namespace trailmap::aggregator {

RetentionFilterFactory::RetentionFilterFactory(std::string family, uint32_t resolution,
                                               int64_t retention_seconds,
                                               std::function<int64_t()> clock)
    : name_("trailmap.retention." + family),
      resolution_(resolution),
      retention_seconds_(retention_seconds),
      clock_(std::move(clock)) {}

std::unique_ptr<rocksdb::CompactionFilter> RetentionFilterFactory::CreateCompactionFilter(
    const rocksdb::CompactionFilter::Context& /*context*/) {
  const int64_t now = NowSeconds(clock_);
  return std::make_unique<RetentionFilter>(resolution_, now - retention_seconds_);
}

rocksdb::CompactionFilter::Decision RetentionFilter::FilterV2(
    int /*level*/, const rocksdb::Slice& key, ValueType value_type,
    const rocksdb::Slice& /*existing_value*/, std::string* /*new_value*/,
    std::string* /*skip_until*/) const {
  if (value_type != ValueType::kValue && value_type != ValueType::kMergeOperand) {
    return Decision::kKeep;
  }
  DataKey k;
  if (!DecodeDataKey(std::string_view(key.data(), key.size()), &k)) return Decision::kKeep;
  // Compared as "bucket end <= cutoff" without overflowing near INT64_MAX.
  if (k.second > cutoff_ - static_cast<int64_t>(resolution_)) return Decision::kKeep;
  ++dropped_;
  return Decision::kRemove;
}

}  // namespace trailmap::aggregator
