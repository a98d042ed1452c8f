#include "aggregator/store/aggregates_backfill.h"

#include <rocksdb/db.h>

#include <memory>

namespace trailmap::aggregator {
namespace {

constexpr size_t kFixedSize = 8 + 8 + 4 + 8 + 8 + 8;

}  // namespace

std::string EncodeBackfillState(const BackfillState& state) {
  std::string out(kFixedSize, '\0');
  char* p = out.data();
  PutFixed64BE(p, static_cast<uint64_t>(state.complete_from));
  PutFixed64BE(p + 8, static_cast<uint64_t>(state.through));
  PutFixed32BE(p + 16, state.metric);
  PutFixed64BE(p + 20, static_cast<uint64_t>(state.minute));
  PutFixed64BE(p + 28, state.done);
  PutFixed64BE(p + 36, state.total);
  for (size_t i = 0; i < state.fields.size(); ++i) {
    if (i > 0) out += ',';
    out += state.fields[i];
  }
  return out;
}

Result<BackfillState> DecodeBackfillState(std::string_view value) {
  if (value.size() < kFixedSize) {
    return Status::Corruption("aggregate backfill state of " + std::to_string(value.size()) +
                              " bytes (at least " + std::to_string(kFixedSize) + ")");
  }
  BackfillState s;
  const char* p = value.data();
  s.complete_from = static_cast<int64_t>(GetFixed64BE(p));
  s.through = static_cast<int64_t>(GetFixed64BE(p + 8));
  s.metric = GetFixed32BE(p + 16);
  s.minute = static_cast<int64_t>(GetFixed64BE(p + 20));
  s.done = GetFixed64BE(p + 28);
  s.total = GetFixed64BE(p + 36);
  std::string_view list = value.substr(kFixedSize);
  // "" is the fleet alone; "a,b" two fields; ",role" the fleet and role.
  for (size_t start = 0;;) {
    const size_t comma = list.find(',', start);
    s.fields.emplace_back(
        list.substr(start, comma == std::string_view::npos ? list.npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return s;
}

Status ComputeAggregateMinute(rocksdb::DB* db, const rocksdb::Snapshot* snapshot,
                              rocksdb::ColumnFamilyHandle* hist, uint32_t metric, int64_t start,
                              const ClassifyKey& classify, AggregateSums* sums,
                              uint64_t* saturated) {
  const std::string upper = DataKeyPrefix(metric, start + 60);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions read_options;
  read_options.snapshot = snapshot;
  read_options.iterate_upper_bound = &upper_slice;
  read_options.fill_cache = false;  // read once: do not evict what queries use
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(read_options, hist));
  std::string owners;
  std::vector<std::string> values;
  DataKey key;
  for (it->Seek(DataKeyPrefix(metric, start)); it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key();
    if (!DecodeDataKey(std::string_view(k.data(), k.size()), &key)) {
      return Status::Corruption("hist: key of " + std::to_string(k.size()) + " bytes");
    }
    owners.clear();
    values.clear();
    classify(key, &owners, &values);
    const rocksdb::Slice v = it->value();
    for (const std::string& value : values) {
      Histogram& sum = (*sums)[{key.second, owners, value}];
      if (Status st = sum.MergeEncoded(std::string_view(v.data(), v.size())); !st.ok()) {
        return Status::Corruption("hist: second " + std::to_string(key.second) + ", host " +
                                  std::to_string(key.host) + ", series " +
                                  std::to_string(key.series) + ": " + st.message());
      }
    }
  }
  if (!it->status().ok()) return Status::IOError("reading hist: " + it->status().ToString());
  if (saturated) {
    for (const auto& [cell, h] : *sums) *saturated += h.saturated() ? 1 : 0;
  }
  return Status::Ok();
}

}  // namespace trailmap::aggregator
