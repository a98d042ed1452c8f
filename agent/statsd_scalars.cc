#include "agent/statsd_scalars.h"

#include <algorithm>

namespace trailmap {

StatsdScalars::StatsdScalars(Bucketizer* bucketizer, StatsdScalarsOptions options)
    : bucketizer_(bucketizer), options_(options) {}

bool StatsdScalars::Keep(int64_t second) {
  if (second < floor_) return false;
  if (second > newest_) newest_ = second;
  floor_ = std::max(floor_, newest_ - options_.keep_seconds);
  while (!seconds_.empty() && seconds_.begin()->first < floor_) {
    entries_ -= seconds_.begin()->second.entries;
    seconds_.erase(seconds_.begin());
  }
  return second >= floor_;
}

void StatsdScalars::Bound() {
  while (entries_ > options_.max_entries && seconds_.size() > 1) {
    floor_ = seconds_.begin()->first + 1;
    entries_ -= seconds_.begin()->second.entries;
    seconds_.erase(seconds_.begin());
  }
}

void StatsdScalars::Write(int64_t second, Second& at, const SeriesDef& series, double value) {
  const auto [it, added] = at.written.try_emplace(key_);
  if (added) {
    ++at.entries;
    ++entries_;
  }
  Written& w = it->second;
  const double before = added ? 0 : w.value;
  w.value = value;
  if (!w.overflow) {
    if (!bucketizer_->SetScalar(second, series, value)) return;
    w.overflow = true;  // the bucketizer added `value` to the overflow sum; set it exactly below
  }
  double& sum = at.overflow[series.metric];
  sum += value - before;
  bucketizer_->SetScalar(second,
                         SeriesDef{series.metric, series.kind, series.unit, kOverflowFields}, sum);
}

void StatsdScalars::Add(int64_t second, const StatsdSample& sample) {
  // The type first: a counter and a gauge of one name are two series (two units).
  key_.assign(1, static_cast<char>('0' + static_cast<int>(sample.type)));
  key_.append(sample.metric);
  key_.push_back('|');
  key_.append(sample.fields);
  switch (sample.type) {
    case StatsdType::kCounter: {
      if (!Keep(second)) {
        counters_.stale += sample.values.size();
        return;
      }
      Second& at = seconds_[second];
      const auto it = at.written.find(key_);
      double sum = it == at.written.end() ? 0 : it->second.value;
      for (const double v : sample.values) sum += v / sample.rate;
      Write(second, at, SeriesDef{sample.metric, MetricKind::kScalar, "/s", sample.fields}, sum);
      Bound();
      return;
    }
    case StatsdType::kSet: {
      if (!Keep(second)) {
        counters_.stale += sample.members.size();
        return;
      }
      Second& at = seconds_[second];
      std::unordered_set<std::string>& members = at.sets[key_];
      for (const std::string& m : sample.members) {
        if (members.size() < options_.max_set_members || members.contains(m)) {
          if (members.insert(m).second) {
            ++at.entries;
            ++entries_;
          }
        } else {
          ++counters_.set_members_dropped;
        }
      }
      Write(second, at, SeriesDef{sample.metric, MetricKind::kScalar, "distinct/s", sample.fields},
            static_cast<double>(members.size()));
      Bound();
      return;
    }
    case StatsdType::kGauge: {
      auto it = gauges_.find(key_);
      if (it == gauges_.end() && gauges_.size() < options_.max_gauges) {
        it = gauges_.emplace(key_, 0.0).first;
      }
      double value = it == gauges_.end() ? 0 : it->second;
      if (sample.gauge_delta && it == gauges_.end()) {
        counters_.gauge_deltas_dropped += sample.values.size();
        return;
      }
      for (const double v : sample.values) value = sample.gauge_delta ? value + v : v;
      if (it != gauges_.end()) it->second = value;
      const SeriesDef series{sample.metric, MetricKind::kScalar, "1", sample.fields};
      if (!Keep(second)) {  // too old to hold an overflow sum for: written as it is
        bucketizer_->SetScalar(second, series, value);
        return;
      }
      Write(second, seconds_[second], series, value);
      Bound();
      return;
    }
    default:
      return;
  }
}

}  // namespace trailmap
