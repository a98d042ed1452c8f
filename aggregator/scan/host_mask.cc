#include "aggregator/scan/host_mask.h"

#include <algorithm>

namespace trailmap::aggregator {

HostMask HostMask::Make(const Catalog& catalog, const std::vector<std::string>& hosts,
                        const std::optional<ReplicaScope>& replicas, int64_t from, int64_t to) {
  HostMask mask;
  if (hosts.empty() && !replicas) return mask;
  const size_t ids = catalog.host_count() + 1;  // ids start at 1
  std::vector<uint8_t> named(ids, hosts.empty() ? 1 : 0);
  named[0] = 0;
  for (const std::string& name : hosts) {
    if (std::optional<uint32_t> id = catalog.FindHost(name); id && *id < ids) named[*id] = 1;
  }
  if (!replicas) {
    mask.none_ = std::find(named.begin(), named.end(), 1) == named.end();
    mask.spans_.push_back(Span{INT64_MIN, std::move(named)});
    return mask;
  }
  // One span per epoch that holds somewhere in [from, to).
  const Cluster& cluster = replicas->cluster;
  mask.none_ = true;
  for (size_t e = 0; e < cluster.epochs.size(); ++e) {
    const int64_t begin = e == 0 ? INT64_MIN : cluster.epochs[e].from;
    const int64_t end = e + 1 < cluster.epochs.size() ? cluster.epochs[e + 1].from : INT64_MAX;
    if (end <= from || begin >= to) continue;
    Span span{begin, named};
    for (uint32_t id = 1; id < ids; ++id) {
      if (!span.kept[id]) continue;
      const std::string name = catalog.Host(id).name;
      std::vector<size_t> owners = cluster.Owners(name, begin);
      ApplyPreference(cluster, replicas->selection, name, e, &owners);
      span.kept[id] = ReplicaAnswers(cluster, owners, replicas->selection) ? 1 : 0;
      if (span.kept[id]) mask.none_ = false;
    }
    mask.spans_.push_back(std::move(span));
  }
  return mask;
}

const HostMask::Span& HostMask::SpanAt(int64_t second) const {
  auto it = std::upper_bound(spans_.begin(), spans_.end(), second,
                             [](int64_t t, const Span& s) { return t < s.from; });
  return it == spans_.begin() ? spans_.front() : *(it - 1);
}

}  // namespace trailmap::aggregator
