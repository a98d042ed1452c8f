#include "query/fetch/replica_choice.h"

#include <algorithm>

namespace trailmap {
namespace {

// The epochs of `cluster` that hold somewhere in [from, to), each with the part it holds.
struct EpochSpan {
  size_t epoch;
  int64_t begin;  // where placement is read (the epoch's `from`, INT64_MIN for the first)
  int64_t end;    // exclusive: min(to, the next epoch's from)
};

std::vector<EpochSpan> SpansOf(const Cluster& cluster, int64_t from, int64_t to) {
  std::vector<EpochSpan> spans;
  for (size_t e = 0; e < cluster.epochs.size(); ++e) {
    const int64_t begin = e == 0 ? INT64_MIN : cluster.epochs[e].from;
    const int64_t end = e + 1 < cluster.epochs.size() ? cluster.epochs[e + 1].from : INT64_MAX;
    if (end <= from || begin >= to) continue;
    spans.push_back({e, begin, std::min(end, to)});
  }
  return spans;
}

// Every host some member named.
std::set<std::string> NamedHosts(const ReplicaCompleteness& c) {
  std::set<std::string> hosts;
  for (const auto& named : c.through) {
    for (const auto& [host, second] : named) hosts.insert(host);
  }
  return hosts;
}

}  // namespace

int64_t CompletenessBefore(int64_t to, int64_t now) {
  return std::min(to, now - kReplicaLiveEdgeSeconds);
}

void ReplicaCompleteness::Add(size_t member, const std::vector<HostThrough>& hosts,
                              const std::vector<std::string>& named) {
  answered[member] = true;
  for (const HostThrough& h : hosts) through[member][h.host] = h.through;
  asked_by_name[member].insert(named.begin(), named.end());
}

std::vector<std::vector<std::string>> FollowUps(const Cluster& cluster, int64_t from, int64_t to,
                                                const ReplicaCompleteness& completeness) {
  std::vector<std::set<std::string>> ask(cluster.members.size());
  const std::vector<EpochSpan> spans = SpansOf(cluster, from, to);
  for (const std::string& host : NamedHosts(completeness)) {
    for (const EpochSpan& span : spans) {
      for (size_t o : cluster.Owners(host, span.begin)) {
        if (completeness.answered[o] && !completeness.through[o].count(host) &&
            !completeness.asked_by_name[o].count(host)) {
          ask[o].insert(host);
        }
      }
    }
  }
  std::vector<std::vector<std::string>> out(cluster.members.size());
  for (size_t m = 0; m < ask.size(); ++m) out[m].assign(ask[m].begin(), ask[m].end());
  return out;
}

std::vector<ReplicaPreference> ChooseReplicas(const Cluster& cluster, int64_t from, int64_t to,
                                              int64_t before,
                                              const ReplicaCompleteness& completeness) {
  std::vector<ReplicaPreference> prefer;
  const std::vector<EpochSpan> spans = SpansOf(cluster, from, to);
  for (const std::string& host : NamedHosts(completeness)) {
    for (const EpochSpan& span : spans) {
      // How far into this epoch's part of the range each owner reaches: its newest second,
      // capped at the part's last comparable second.
      const int64_t last = std::min(span.end, before) - 1;
      const std::vector<size_t> owners = cluster.Owners(host, span.begin);
      size_t best = 0;
      int64_t best_reach = INT64_MIN;
      for (size_t i = 0; i < owners.size(); ++i) {
        const size_t m = owners[i];
        int64_t reach = INT64_MIN;  // did not answer, or does not hold the host
        if (auto it = completeness.through[m].find(host); it != completeness.through[m].end()) {
          reach = std::min(it->second, last);
        } else if (completeness.answered[m] && !completeness.asked_by_name[m].count(host)) {
          reach = last;  // not named as behind: through the edge
        }
        if (i == 0 || reach > best_reach) {  // ties keep the earlier owner
          best = i;
          best_reach = reach;
        }
      }
      if (best != 0) {
        prefer.push_back(
            {host, static_cast<uint32_t>(span.epoch), cluster.members[owners[best]].name});
      }
    }
  }
  std::sort(prefer.begin(), prefer.end());
  return prefer;
}

}  // namespace trailmap
