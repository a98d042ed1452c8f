// Replica choice by completeness (core/cluster.h "Replicas by completeness"): from what the
// members said about how far they have applied their hosts, which host-epochs of a query take an
// owner other than their first.
//
// A replicated query first asks every member a CompletenessQuery with `before` = the edge of
// what can be compared (CompletenessBefore): each answers the hosts it has applied only to a
// second before that edge, usually none. A member that answered and did not name a host is
// through the edge for it, unless it does not hold the host at all; so each host someone named
// is then asked by name of its other owners that did not name it (FollowUps), and a member asked
// by name that does not answer for a host does not hold it. A query of only some hosts asks
// about those by name at once (every member's answer is then complete for them). ChooseReplicas
// then takes, per host and epoch of the query's range, the owner applied furthest into the part
// of the range that epoch holds, ties by the owner order.
//
// What it cannot see: a replica that lost seconds in the middle of its history (a spool that
// overflowed while it was down) is as far through as its peer; and a store made before the 'T'
// records (aggregator/store/keys.h) names a host only once a batch of it is applied again.
//
// Pure functions over value types; no I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/query_wire.h"

namespace trailmap {

// Seconds this close to now are still arriving at every replica (agents ship each second once it
// closes): replicas are compared only up to this edge, so two live replicas never differ by
// the second or two one received first.
inline constexpr int64_t kReplicaLiveEdgeSeconds = 5;

// The `before` of a replicated query's CompletenessQuery: min(to, now - kReplicaLiveEdgeSeconds).
int64_t CompletenessBefore(int64_t to, int64_t now);

// What the members said, by member index (into Cluster::members).
struct ReplicaCompleteness {
  explicit ReplicaCompleteness(size_t members)
      : answered(members, false), through(members), asked_by_name(members) {}
  std::vector<bool> answered;                           // answered a CompletenessQuery
  std::vector<std::map<std::string, int64_t>> through;  // the hosts it named, their newest second
  std::vector<std::set<std::string>> asked_by_name;     // asked by name (and answered)
  // Adds a member's answer (its hosts' newest seconds); `named` the hosts it was asked about by
  // name (empty: every host behind the edge).
  void Add(size_t member, const std::vector<HostThrough>& hosts,
           const std::vector<std::string>& named = {});
};

// For each member, the hosts to ask it about by name: the hosts another member named that it
// owns in an epoch of [from, to), answered a query for, and neither named nor was asked about.
// Empty lists for members with nothing to ask.
std::vector<std::vector<std::string>> FollowUps(const Cluster& cluster, int64_t from, int64_t to,
                                                const ReplicaCompleteness& completeness);

// The preferences of a query over [from, to) whose first CompletenessQuery had `before`: for each
// host some member named and each epoch of the range, the owner whose newest second reaches
// furthest into the part of the range that epoch holds (up to `before`), when that is not the
// first owner. Members that did not answer count as holding nothing. Sorted by (host, epoch).
std::vector<ReplicaPreference> ChooseReplicas(const Cluster& cluster, int64_t from, int64_t to,
                                              int64_t before,
                                              const ReplicaCompleteness& completeness);

}  // namespace trailmap
