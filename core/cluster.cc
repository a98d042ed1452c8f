#include "core/cluster.h"

#include <algorithm>
#include <set>

namespace trailmap {
namespace {

// splitmix64's finalizer: every input bit moves every output bit.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t Fnv1a(std::string_view text, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// The chosen replica of `owners` in round r: the first not found down before r; nullptr if none.
const std::string* ChosenIn(const Cluster& c, const std::vector<size_t>& owners, uint32_t r,
                            const ReplicaSelection& s) {
  for (size_t o : owners) {
    const std::string& name = c.members[o].name;
    bool down_before = false;
    for (size_t i = 0; i < s.down.size(); ++i) down_before |= s.down[i] == name && s.down_in[i] < r;
    if (!down_before) return &name;
  }
  return nullptr;
}

bool FailedIn(const std::string& name, uint32_t r, const ReplicaSelection& s) {
  for (size_t i = 0; i < s.down.size(); ++i) {
    if (s.down[i] == name && s.down_in[i] == r) return true;
  }
  return false;
}

}  // namespace

Status CheckClusterEpochs(const Cluster& c, std::string_view source) {
  const auto error = [source](const std::string& where, const std::string& what) {
    return Status::InvalidArgument(std::string(source) + ": " + where + ": " + what);
  };
  for (size_t i = 0; i < c.epochs.size(); ++i) {
    const std::string where = "epoch " + std::to_string(i + 1);
    if (c.epochs[i].members.empty()) return error(where, "no members");
    if (c.epochs[i].members.size() < c.replication) {
      return error(where,
                   std::to_string(c.epochs[i].members.size()) +
                       " member(s), fewer than replication = " + std::to_string(c.replication));
    }
    if (i > 0 && c.epochs[i].from <= c.epochs[i - 1].from) {
      return error(where, "from must come after the previous epoch's");
    }
    for (size_t m : c.epochs[i].members) {
      if (m >= c.members.size()) return error(where, "member index out of range");
    }
  }
  if (c.replication < 1) return error("replication", "must be at least 1");
  return Status::Ok();
}

Status CheckCluster(const Cluster& cluster) {
  if (cluster.members.empty() || cluster.epochs.empty()) {
    return Status::InvalidArgument("cluster: no members or no epochs");
  }
  std::set<std::string_view> names;
  for (const ClusterMember& m : cluster.members) {
    if (m.name.empty() || !names.insert(m.name).second) {
      return Status::InvalidArgument("cluster: member name \"" + m.name + "\" empty or repeated");
    }
  }
  return CheckClusterEpochs(cluster, "cluster");
}

std::vector<int64_t> EpochCuts(const Cluster& cluster, int64_t from, int64_t to) {
  std::vector<int64_t> cuts;
  for (size_t e = 1; e < cluster.epochs.size(); ++e) {
    if (cluster.epochs[e].from > from && cluster.epochs[e].from < to) {
      cuts.push_back(cluster.epochs[e].from);
    }
  }
  return cuts;
}

void ApplyPreference(const Cluster& cluster, const ReplicaSelection& selection,
                     std::string_view host, size_t epoch, std::vector<size_t>* owners) {
  if (selection.prefer.empty()) return;
  auto it = std::lower_bound(selection.prefer.begin(), selection.prefer.end(), host,
                             [epoch](const ReplicaPreference& p, std::string_view h) {
                               const int c = std::string_view(p.host).compare(h);
                               return c < 0 || (c == 0 && p.epoch < epoch);
                             });
  if (it == selection.prefer.end() || it->host != host || it->epoch != epoch) return;
  for (size_t i = 0; i < owners->size(); ++i) {
    if (cluster.members[(*owners)[i]].name == it->member) {
      std::rotate(owners->begin(), owners->begin() + static_cast<std::ptrdiff_t>(i),
                  owners->begin() + static_cast<std::ptrdiff_t>(i) + 1);
      return;
    }
  }
}

size_t EpochIndexAt(const Cluster& cluster, int64_t t) {
  return static_cast<size_t>(&cluster.EpochAt(t) - cluster.epochs.data());
}

bool ReplicaAnswers(const Cluster& cluster, const std::vector<size_t>& owners,
                    const ReplicaSelection& selection) {
  // Not answered by an earlier round: each earlier round's choice failed in that round.
  for (uint32_t r = 0; r < selection.round; ++r) {
    const std::string* chosen = ChosenIn(cluster, owners, r, selection);
    if (chosen == nullptr || !FailedIn(*chosen, r, selection)) return false;
  }
  const std::string* chosen = ChosenIn(cluster, owners, selection.round, selection);
  return chosen != nullptr && *chosen == selection.member;
}

uint64_t RendezvousWeight(std::string_view member, std::string_view host) {
  // The name, a separator no name holds, then the host: "ab"+"c" and "a"+"bc" differ.
  return Mix(Fnv1a(host, Fnv1a(std::string_view("\0", 1), Fnv1a(member))));
}

size_t RendezvousIndex(std::string_view host, const std::vector<std::string>& members) {
  size_t best = 0;
  uint64_t best_weight = members.empty() ? 0 : RendezvousWeight(members[0], host);
  for (size_t i = 1; i < members.size(); ++i) {
    const uint64_t w = RendezvousWeight(members[i], host);
    if (w > best_weight || (w == best_weight && members[i] < members[best])) {
      best = i;
      best_weight = w;
    }
  }
  return best;
}

const ClusterEpoch& Cluster::EpochAt(int64_t t) const {
  // The last epoch whose `from` is at or before t; the first one for anything earlier.
  auto it = std::upper_bound(epochs.begin(), epochs.end(), t,
                             [](int64_t v, const ClusterEpoch& e) { return v < e.from; });
  return it == epochs.begin() ? epochs.front() : *(it - 1);
}

std::vector<size_t> Cluster::Owners(std::string_view host, int64_t t) const {
  const ClusterEpoch& epoch = EpochAt(t);
  std::vector<std::pair<uint64_t, size_t>> ranked;
  ranked.reserve(epoch.members.size());
  for (size_t m : epoch.members) ranked.push_back({RendezvousWeight(members[m].name, host), m});
  // Highest weight first; equal weights (never seen in 64 bits, but defined) by name.
  std::sort(ranked.begin(), ranked.end(), [this](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : members[a.second].name < members[b.second].name;
  });
  const size_t want = std::min<size_t>(replication, ranked.size());
  std::vector<size_t> owners;
  std::set<std::string_view> zones;
  std::vector<bool> taken(ranked.size(), false);
  for (size_t i = 0; i < ranked.size() && owners.size() < want; ++i) {
    if (zones.insert(members[ranked[i].second].zone).second) {
      owners.push_back(ranked[i].second);
      taken[i] = true;
    }
  }
  // Fewer zones than R: the rest by weight, zones repeating.
  for (size_t i = 0; i < ranked.size() && owners.size() < want; ++i) {
    if (!taken[i]) owners.push_back(ranked[i].second);
  }
  return owners;
}

const ClusterMember* Cluster::Find(std::string_view name) const {
  for (const ClusterMember& m : members) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace trailmap
