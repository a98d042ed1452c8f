#include "aggregator/store/catalog.h"

#include <set>

#include "core/series.h"

#include <algorithm>
#include <mutex>

namespace trailmap::aggregator {
namespace {

Status NotNext(const char* what, uint32_t id, size_t size) {
  return Status::Corruption(std::string("meta: ") + what + " id " + std::to_string(id) + " where " +
                            std::to_string(size + 1) + " was expected (ids not dense)");
}

}  // namespace

std::string Catalog::SeriesMapKey(uint32_t metric, std::string_view fields) {
  std::string key = EncodeId(metric);
  key.append(fields);
  return key;
}

Status Catalog::RestoreMetric(uint32_t id, MetricRecord record) {
  std::unique_lock lock(mu_);
  if (id != metrics_.size() + 1) return NotNext("metric", id, metrics_.size());
  if (!metric_ids_.emplace(record.name, id).second) {
    return Status::Corruption("meta: metric " + record.name + " has two ids");
  }
  metrics_.push_back(std::move(record));
  return Status::Ok();
}

Status Catalog::RestoreHost(uint32_t id, HostRecord record) {
  std::unique_lock lock(mu_);
  if (id != hosts_.size() + 1) return NotNext("host", id, hosts_.size());
  if (!host_ids_.emplace(record.name, id).second) {
    return Status::Corruption("meta: host " + record.name + " has two ids");
  }
  hosts_.push_back(std::move(record));
  return Status::Ok();
}

Status Catalog::RestoreSeries(uint32_t id, SeriesRecord record) {
  std::unique_lock lock(mu_);
  if (id != series_.size() + 1) return NotNext("series", id, series_.size());
  if (record.metric == 0 || record.metric > metrics_.size()) {
    return Status::Corruption("meta: series " + std::to_string(id) + " names unknown metric " +
                              std::to_string(record.metric));
  }
  if (!series_ids_.emplace(SeriesMapKey(record.metric, record.fields), id).second) {
    return Status::Corruption("meta: series " + std::to_string(id) + " repeats another");
  }
  series_.push_back(std::move(record));
  return Status::Ok();
}

Status Catalog::RestoreStack(uint32_t id, std::string folded) {
  std::unique_lock lock(mu_);
  if (id != stacks_.size() + 1) return NotNext("stack", id, stacks_.size());
  stacks_.push_back(std::move(folded));
  if (!stack_ids_.emplace(stacks_.back(), id).second) {
    stacks_.pop_back();
    return Status::Corruption("meta: stack " + std::to_string(id) + " repeats another");
  }
  return Status::Ok();
}

uint32_t Catalog::FindOrAddStack(std::string_view folded, bool* added) {
  *added = false;
  {
    std::shared_lock lock(mu_);
    if (auto it = stack_ids_.find(folded); it != stack_ids_.end()) return it->second;
  }
  std::unique_lock lock(mu_);
  if (auto it = stack_ids_.find(folded); it != stack_ids_.end()) return it->second;
  stacks_.emplace_back(folded);
  const auto id = static_cast<uint32_t>(stacks_.size());
  stack_ids_.emplace(stacks_.back(), id);
  *added = true;
  return id;
}

std::string Catalog::Stack(uint32_t id) const {
  std::shared_lock lock(mu_);
  return id >= 1 && id <= stacks_.size() ? stacks_[id - 1] : std::string();
}

size_t Catalog::stack_count() const {
  std::shared_lock lock(mu_);
  return stacks_.size();
}

// The FindOrAdd* methods look under the shared lock first: entries are found far more often than
// added, and the unique lock would stall every query thread on each lookup.
uint32_t Catalog::FindOrAddMetric(const MetricRecord& record, bool* added) {
  *added = false;
  {
    std::shared_lock lock(mu_);
    if (auto it = metric_ids_.find(record.name); it != metric_ids_.end()) return it->second;
  }
  std::unique_lock lock(mu_);
  auto [it, inserted] = metric_ids_.emplace(record.name, metrics_.size() + 1);
  *added = inserted;
  if (inserted) metrics_.push_back(record);
  return it->second;
}

uint32_t Catalog::FindOrAddHost(std::string_view name, std::string_view labels, bool* added) {
  *added = false;
  std::string key(name);
  {
    std::shared_lock lock(mu_);
    if (auto it = host_ids_.find(key); it != host_ids_.end()) return it->second;
  }
  std::unique_lock lock(mu_);
  auto [it, inserted] = host_ids_.emplace(std::move(key), hosts_.size() + 1);
  *added = inserted;
  if (inserted) hosts_.push_back(HostRecord{std::string(name), std::string(labels)});
  return it->second;
}

std::optional<uint32_t> Catalog::FindSeries(uint32_t metric, std::string_view fields) const {
  const std::string key = SeriesMapKey(metric, fields);
  std::shared_lock lock(mu_);
  if (auto it = series_ids_.find(key); it != series_ids_.end()) return it->second;
  return std::nullopt;
}

uint32_t Catalog::FindOrAddSeries(uint32_t metric, std::string_view fields, bool* added) {
  *added = false;
  std::string key = SeriesMapKey(metric, fields);
  {
    std::shared_lock lock(mu_);
    if (auto it = series_ids_.find(key); it != series_ids_.end()) return it->second;
  }
  std::unique_lock lock(mu_);
  auto [it, inserted] = series_ids_.emplace(std::move(key), series_.size() + 1);
  *added = inserted;
  if (inserted) series_.push_back(SeriesRecord{metric, std::string(fields)});
  return it->second;
}

void Catalog::SetHostLabels(uint32_t host, std::string labels) {
  std::unique_lock lock(mu_);
  if (host >= 1 && host <= hosts_.size()) hosts_[host - 1].labels = std::move(labels);
}

void Catalog::SetDescription(uint32_t metric, std::string description) {
  std::unique_lock lock(mu_);
  descriptions_[metric] = std::move(description);
}

std::string Catalog::Description(uint32_t metric) const {
  std::shared_lock lock(mu_);
  auto it = descriptions_.find(metric);
  return it == descriptions_.end() ? std::string() : it->second;
}

Catalog::Mark Catalog::mark() const {
  std::shared_lock lock(mu_);
  return Mark{metrics_.size(), hosts_.size(), series_.size(), stacks_.size()};
}

void Catalog::Rollback(const Mark& mark) {
  std::unique_lock lock(mu_);
  while (stacks_.size() > mark.stacks) {
    stack_ids_.erase(stacks_.back());
    stacks_.pop_back();
  }
  while (series_.size() > mark.series) {
    series_ids_.erase(SeriesMapKey(series_.back().metric, series_.back().fields));
    series_.pop_back();
  }
  while (hosts_.size() > mark.hosts) {
    host_ids_.erase(hosts_.back().name);
    hosts_.pop_back();
  }
  while (metrics_.size() > mark.metrics) {
    metric_ids_.erase(metrics_.back().name);
    descriptions_.erase(static_cast<uint32_t>(metrics_.size()));
    metrics_.pop_back();
  }
}

std::optional<uint32_t> Catalog::FindMetric(std::string_view name, MetricRecord* record) const {
  std::shared_lock lock(mu_);
  auto it = metric_ids_.find(std::string(name));
  if (it == metric_ids_.end()) return std::nullopt;
  if (record) *record = metrics_[it->second - 1];
  return it->second;
}

std::optional<uint32_t> Catalog::FindHost(std::string_view name) const {
  std::shared_lock lock(mu_);
  auto it = host_ids_.find(std::string(name));
  if (it == host_ids_.end()) return std::nullopt;
  return it->second;
}

MetricRecord Catalog::Metric(uint32_t id) const {
  std::shared_lock lock(mu_);
  return id >= 1 && id <= metrics_.size() ? metrics_[id - 1] : MetricRecord{};
}

HostRecord Catalog::Host(uint32_t id) const {
  std::shared_lock lock(mu_);
  return id >= 1 && id <= hosts_.size() ? hosts_[id - 1] : HostRecord{};
}

SeriesRecord Catalog::Series(uint32_t id) const {
  std::shared_lock lock(mu_);
  return id >= 1 && id <= series_.size() ? series_[id - 1] : SeriesRecord{};
}

size_t Catalog::host_count() const {
  std::shared_lock lock(mu_);
  return hosts_.size();
}

size_t Catalog::series_count() const {
  std::shared_lock lock(mu_);
  return series_.size();
}

std::vector<MetricInfo> Catalog::Metrics() const {
  std::vector<MetricInfo> out;
  {
    std::shared_lock lock(mu_);
    out.reserve(metrics_.size());
    for (const MetricRecord& m : metrics_) out.push_back(MetricInfo{m.name, m.kind, m.unit, {}});
    for (const auto& [id, text] : descriptions_) {
      if (id >= 1 && id <= out.size()) out[id - 1].description = text;
    }
    // The field keys each metric's series carry.
    std::vector<std::set<std::string>> keys(metrics_.size());
    for (const SeriesRecord& series : series_) {
      if (series.metric == 0 || series.metric > keys.size()) continue;
      Result<FieldSet> fields = ParseFields(series.fields);
      if (!fields.ok()) continue;
      for (const Field& f : *fields) keys[series.metric - 1].insert(f.first);
    }
    for (size_t i = 0; i < out.size(); ++i) out[i].fields.assign(keys[i].begin(), keys[i].end());
  }
  std::sort(out.begin(), out.end(),
            [](const MetricInfo& a, const MetricInfo& b) { return a.name < b.name; });
  return out;
}

}  // namespace trailmap::aggregator
