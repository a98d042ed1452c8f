// Catalog: the aggregator's id maps — metrics (with kind and unit), hosts (with labels) and
// series (a metric plus a canonical field set), and stacks (folded text, global across agents)
// — held in memory and mirrored in the `meta`
// column family (grammar in aggregator/store/keys.h). Ids start at 1 and are dense; 0 means "none".
//
// Thread safety: every method may be called from any thread (a shared_mutex inside). Entries are
// only added by the store's writer, which is serialized by the store, so "find or add" never races
// with another adder. Added entries are visible at once: the store adds them before it writes the
// data that uses them, so a query never meets an id it cannot name, and removes them again with
// Rollback() if that write fails.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "aggregator/store/keys.h"
#include "core/query_wire.h"
#include "core/status.h"

namespace trailmap::aggregator {

class Catalog {
 public:
  Catalog() = default;
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  // Loading at open, in increasing id order; an id that is not the next one is Corruption.
  Status RestoreMetric(uint32_t id, MetricRecord record);
  Status RestoreHost(uint32_t id, HostRecord record);
  Status RestoreSeries(uint32_t id, SeriesRecord record);
  Status RestoreStack(uint32_t id, std::string folded);

  // The writer's side. FindOrAdd* returns the id, and sets *added when the entry is new (the
  // caller then writes its meta entries). A metric keeps the kind and unit it was first seen with.
  uint32_t FindOrAddMetric(const MetricRecord& record, bool* added);
  uint32_t FindOrAddHost(std::string_view name, std::string_view labels, bool* added);
  uint32_t FindOrAddSeries(uint32_t metric, std::string_view fields, bool* added);
  void SetHostLabels(uint32_t host, std::string labels);
  uint32_t FindOrAddStack(std::string_view folded, bool* added);
  // A metric's one-line description: the latest non-empty one its agents sent (also used at
  // load, from the 'D' meta entries). The store sets it only after the write that persists it.
  void SetDescription(uint32_t metric, std::string description);
  std::string Description(uint32_t metric) const;

  // How many entries of each kind; Rollback(mark) removes what was added after mark().
  struct Mark {
    size_t metrics = 0, hosts = 0, series = 0, stacks = 0;
  };
  Mark mark() const;
  void Rollback(const Mark& mark);

  // The reader's side.
  std::optional<uint32_t> FindMetric(std::string_view name, MetricRecord* record = nullptr) const;
  std::optional<uint32_t> FindHost(std::string_view name) const;
  std::optional<uint32_t> FindSeries(uint32_t metric, std::string_view fields) const;
  // Copies of one entry; empty when the id is unknown.
  MetricRecord Metric(uint32_t id) const;
  HostRecord Host(uint32_t id) const;
  SeriesRecord Series(uint32_t id) const;
  // The folded text of a stack id; "" when unknown.
  std::string Stack(uint32_t id) const;
  size_t stack_count() const;
  size_t host_count() const;
  size_t series_count() const;
  // Every metric, by name.
  std::vector<MetricInfo> Metrics() const;

 private:
  static std::string SeriesMapKey(uint32_t metric, std::string_view fields);

  mutable std::shared_mutex mu_;
  std::vector<MetricRecord> metrics_;  // [id - 1]
  std::vector<HostRecord> hosts_;
  std::vector<SeriesRecord> series_;
  std::unordered_map<uint32_t, std::string> descriptions_;  // metric id -> description
  std::unordered_map<std::string, uint32_t> metric_ids_;
  std::unordered_map<std::string, uint32_t> host_ids_;
  std::unordered_map<std::string, uint32_t> series_ids_;  // SeriesMapKey -> id
  std::deque<std::string> stacks_;                        // [id - 1]; a deque keeps them in place
  std::unordered_map<std::string_view, uint32_t> stack_ids_;  // views into stacks_
};

}  // namespace trailmap::aggregator
