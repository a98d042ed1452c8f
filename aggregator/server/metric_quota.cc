#include "aggregator/server/metric_quota.h"

#include <algorithm>
#include <set>

namespace trailmap::aggregator {
namespace {

constexpr double kSecondsPerDay = 86'400;

constexpr uint32_t kDropped = UINT32_MAX;

// `items` without those whose series `keep` maps to kDropped, the rest renumbered; each left out
// added to `refusals` with reason(`metrics` of its series).
template <typename Item>
void KeepItems(std::vector<Item>* items, const std::vector<uint32_t>& keep,
               const std::vector<std::string>& metrics, RefusedItem::Kind kind, uint32_t second,
               const std::function<std::string(std::string_view)>& reason, Refusals* refusals) {
  size_t out = 0;
  for (size_t i = 0; i < items->size(); ++i) {
    Item& item = (*items)[i];
    const uint32_t to = item.series < keep.size() ? keep[item.series] : kDropped;
    if (to == kDropped) {
      const std::string_view metric =
          item.series < metrics.size() ? std::string_view(metrics[item.series]) : "";
      refusals->Add({kind, second, static_cast<uint32_t>(i), reason(metric)});
      continue;
    }
    item.series = to;
    if (out != i) (*items)[out] = std::move(item);
    ++out;
  }
  items->resize(out);
}

}  // namespace

std::vector<std::string> MetricQuota::Take(const std::string& key,
                                           const std::vector<std::string>& new_names,
                                           Clock::time_point now) {
  const double quota = options_.new_metrics_per_day;
  if (quota <= 0 || new_names.empty()) return {};
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= options_.max_keys) {
      // Forget the fullest (the least in use); a forgotten key starts full, so this loses no
      // one a name, it only forgets a debt.
      auto fullest = std::max_element(
          buckets_.begin(), buckets_.end(),
          [](const auto& a, const auto& b) { return a.second.tokens < b.second.tokens; });
      buckets_.erase(fullest);
    }
    it = buckets_.emplace(key, Bucket{quota, now}).first;
  }
  Bucket& bucket = it->second;
  const double elapsed = std::chrono::duration<double>(now - bucket.at).count();
  bucket.tokens = std::min(quota, bucket.tokens + std::max(0.0, elapsed) * quota / kSecondsPerDay);
  bucket.at = now;
  std::vector<std::string> over;
  for (const std::string& name : new_names) {
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
    } else {
      over.push_back(name);
    }
  }
  return over;
}

size_t DropMetrics(Batch* batch, const std::vector<std::string>& refused,
                   const std::function<std::string(std::string_view metric)>& reason,
                   Refusals* refusals) {
  if (refused.empty()) return 0;
  const std::set<std::string, std::less<>> names(refused.begin(), refused.end());
  std::vector<uint32_t> keep(batch->series.size(), kDropped);
  std::vector<std::string> metrics;  // of each series as handed in, for the items' reasons
  std::vector<SeriesDef> series;
  size_t dropped = 0;
  for (size_t i = 0; i < batch->series.size(); ++i) {
    metrics.push_back(batch->series[i].metric);
    if (names.count(batch->series[i].metric) > 0) {
      refusals->Add(
          {RefusedItem::Kind::kSeries, 0, static_cast<uint32_t>(i), reason(metrics.back())});
      ++dropped;
      continue;
    }
    keep[i] = static_cast<uint32_t>(series.size());
    series.push_back(std::move(batch->series[i]));
  }
  if (dropped == 0) return 0;
  batch->series = std::move(series);
  for (size_t s = 0; s < batch->seconds.size(); ++s) {
    SecondDelta& second = batch->seconds[s];
    const uint32_t at = static_cast<uint32_t>(s);
    KeepItems(&second.histograms, keep, metrics, RefusedItem::Kind::kHistogram, at, reason,
              refusals);
    KeepItems(&second.scalars, keep, metrics, RefusedItem::Kind::kScalar, at, reason, refusals);
    KeepItems(&second.stacks, keep, metrics, RefusedItem::Kind::kStackCount, at, reason, refusals);
  }
  return dropped;
}

}  // namespace trailmap::aggregator
