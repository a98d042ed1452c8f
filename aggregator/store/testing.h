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

// A Store in `dir` without fsync, as the store tests open one; null after a test failure that
// says why it did not open.
inline std::unique_ptr<Store> OpenTestStore(const std::string& dir) {
  StoreOptions options;
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
