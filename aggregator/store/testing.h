// Helpers shared by the aggregator's unit tests: a temporary directory that removes itself, a
// store opened in it, and histograms and batches built from readable values.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

#include "aggregator/store/database.h"
#include "aggregator/store/store.h"
#include "core/batch.h"
#include "core/histogram.h"
#include "core/query_wire.h"

namespace trailmap::aggregator::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "trailmap-aggregator-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Options for a store a test drives itself: no fsync (the reopen tests close cleanly) and no
// threads (the test calls RollUp and BackfillAggregates when it means to).
inline StoreOptions ManualOptions() {
  StoreOptions o;
  o.sync = false;
  o.rollup_interval_ms = 0;
  return o;
}

// A Store in `dir` (without fsync unless `options` say otherwise), as the store tests open one;
// null after a test failure that says why it did not open.
inline std::unique_ptr<Store> OpenTestStore(const std::string& dir, StoreOptions options = {}) {
  options.sync = false;
  Result<std::unique_ptr<Store>> s = Store::Open(dir, options);
  if (!s.ok()) {
    ADD_FAILURE() << s.status().ToString();
    return nullptr;
  }
  return std::move(s).value();
}

// A histogram holding each value once.
inline Histogram HistogramOf(std::initializer_list<uint64_t> values) {
  Histogram h;
  for (uint64_t v : values) h.Record(v);
  return h;
}

inline std::string Encoded(std::initializer_list<uint64_t> values) {
  return HistogramOf(values).Encode();
}

// A batch from `agent` for `host` with the series list `series` and no seconds yet.
inline Batch MakeBatch(std::string agent, uint64_t sequence, std::string host,
                       std::vector<SeriesDef> series) {
  Batch b;
  b.agent = std::move(agent);
  b.sequence = sequence;
  b.host = std::move(host);
  b.series = std::move(series);
  return b;
}

inline SeriesDef Latency(std::string metric, std::string fields = "") {
  return SeriesDef{std::move(metric), MetricKind::kLatency, "ns", std::move(fields)};
}

// Events `hist` holds for the metric named (its fleet aggregate's with `aggregate`), as RocksDB
// merges the keys on reading.
inline uint64_t StoredEvents(const Store& store, const std::string& metric,
                             bool aggregate = false) {
  const std::optional<uint32_t> found = store.catalog().FindMetric(metric);
  if (!found) return 0;
  const uint32_t id = *found | (aggregate ? kAggregateMetricBit : 0);
  const Database& db = store.database();
  std::unique_ptr<rocksdb::Iterator> it(db.db()->NewIterator(rocksdb::ReadOptions(), db.hist(0)));
  uint64_t events = 0;
  DataKey key;
  for (it->Seek(DataKeyPrefix(id, INT64_MIN)); it->Valid(); it->Next()) {
    if (!DecodeDataKey(View(it->key()), &key) || key.metric != id) break;
    Result<Histogram> h = Histogram::Decode(View(it->value()));
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    events += h.ok() ? h->count() : 0;
  }
  return events;
}

// Every cell of both answers, in a readable form; "" when they are the same.
inline std::string AnswerDifference(const HistogramAnswer& a, const HistogramAnswer& b) {
  if (a.groups != b.groups) return "groups differ";
  if (a.cells.size() != b.cells.size()) {
    return std::to_string(a.cells.size()) + " vs " + std::to_string(b.cells.size()) + " cells";
  }
  for (size_t i = 0; i < a.cells.size(); ++i) {
    const QueryCell& x = a.cells[i];
    const QueryCell& y = b.cells[i];
    if (x.column != y.column || x.group != y.group || !(x.histogram == y.histogram)) {
      return "cell " + std::to_string(i) + ": column " + std::to_string(x.column) + "/" +
             std::to_string(y.column) + " group " + std::to_string(x.group) + "/" +
             std::to_string(y.group) + " count " + std::to_string(x.histogram.count()) + "/" +
             std::to_string(y.histogram.count());
    }
  }
  return "";
}

}  // namespace trailmap::aggregator::testing
