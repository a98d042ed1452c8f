// Grouping and SeriesFilter: how a query scan maps each (host id, series id) it meets to a group
// and decides whether the series passes the query's predicate, asking the catalog once per id.
// Shared by the histogram scan (aggregator/scan/histogram_query.cc) and the scalar scan
// (aggregator/scan/scalar_query.cc).
//
// Not thread-safe: one per scanning thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "aggregator/store/aggregates.h"  // kNoGroupValue
#include "aggregator/store/catalog.h"
#include "core/predicate.h"
#include "core/series.h"

namespace trailmap::aggregator {

// Maps (host id, series id) to a group index, asking the catalog once per id.
class Grouping {
 public:
  Grouping(const Catalog& catalog, std::string_view group_by)
      : catalog_(catalog), group_by_(group_by) {
    mode_ = group_by.empty() ? Mode::kOne : group_by == "host" ? Mode::kHost : Mode::kField;
    if (mode_ == Mode::kOne) names_.push_back("");
    hosts_.assign(catalog.host_count() + 1, kUnknown);
    series_.assign(catalog.series_count() + 1, kUnknown);
  }

  uint32_t GroupOf(uint32_t host, uint32_t series) {
    switch (mode_) {
      case Mode::kOne:
        return 0;
      case Mode::kHost:
        return HostGroup(host);
      case Mode::kField: {
        if (series >= series_.size()) series_.resize(series + 1, kUnknown);
        if (series_[series] == kUnknown) {
          const SeriesRecord record = catalog_.Series(series);
          const std::string_view value = FieldValue(record.fields, group_by_);
          series_[series] = value.empty() ? kFromHost : Intern(std::string(value));
        }
        return series_[series] == kFromHost ? HostGroup(host) : series_[series];
      }
    }
    return 0;
  }

  std::vector<std::string>& names() { return names_; }

 private:
  enum class Mode { kOne, kHost, kField };
  static constexpr int32_t kUnknown = -1;
  static constexpr int32_t kFromHost = -2;  // the series lacks the field: ask the host's labels

  uint32_t HostGroup(uint32_t host) {
    if (host >= hosts_.size()) hosts_.resize(host + 1, kUnknown);
    if (hosts_[host] == kUnknown) {
      const HostRecord record = catalog_.Host(host);
      if (mode_ == Mode::kHost) {
        hosts_[host] = Intern(record.name);
      } else {
        const std::string_view value = FieldValue(record.labels, group_by_);
        hosts_[host] = Intern(value.empty() ? std::string(kNoGroupValue) : std::string(value));
      }
    }
    return static_cast<uint32_t>(hosts_[host]);
  }

  int32_t Intern(std::string name) {
    auto [it, inserted] = index_.emplace(name, static_cast<uint32_t>(names_.size()));
    if (inserted) names_.push_back(std::move(name));
    return static_cast<int32_t>(it->second);
  }

  const Catalog& catalog_;
  const std::string group_by_;
  Mode mode_;
  std::vector<int32_t> hosts_;   // host id -> group
  std::vector<int32_t> series_;  // series id -> group, or kFromHost
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<std::string> names_;
};

// Decides, once per (host, series), whether a series passes the query's predicate: the fields
// it reads are the series' fields, "host", and the host's labels (a field wins over a label).
// What a predicate (or a --by) reads of one (host, series): "host", the series' fields, then the
// host's labels (a field wins over a label of the same key).
class SeriesFieldLookup : public FieldLookup {
 public:
  SeriesFieldLookup(HostRecord host, SeriesRecord series)
      : host_(std::move(host)), series_(std::move(series)) {}
  const std::string* Find(std::string_view name) const override {
    if (name == "host") return &host_.name;
    std::string_view v = FieldValue(series_.fields, name);
    if (v.empty()) v = FieldValue(host_.labels, name);
    if (v.empty()) return nullptr;
    scratch_.assign(v);
    return &scratch_;
  }

 private:
  HostRecord host_;
  SeriesRecord series_;
  mutable std::string scratch_;
};

class SeriesFilter {
 public:
  SeriesFilter(const Catalog& catalog, const Predicate& where) : catalog_(catalog), where_(where) {}

  bool Passes(uint32_t host, uint32_t series) {
    if (where_.always_true()) return true;
    const uint64_t key = (uint64_t{host} << 32) | series;
    auto it = decided_.find(key);
    if (it != decided_.end()) return it->second;
    const SeriesFieldLookup lookup(catalog_.Host(host), catalog_.Series(series));
    const bool pass = where_.Matches(lookup);
    decided_.emplace(key, pass);
    return pass;
  }

 private:
  const Catalog& catalog_;
  const Predicate& where_;
  std::unordered_map<uint64_t, bool> decided_;
};

}  // namespace trailmap::aggregator
