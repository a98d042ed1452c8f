// The cluster: which aggregators exist, in which zones, since when, and which of them own a host.
//
// Every program that sends or reads data and every aggregator reads the same description: a
// cluster file (net/cluster_file.h) or the short form `--aggregators a,b,c`. This is the
// description as values, and what placement and replicated queries compute from it.
//
// Without [[epoch]] tables every aggregator is a member for all time. With them, epoch i holds
// from its `from` until the next one's; the first holds from the beginning of time too, so
// history written before it still has owners. Data is never moved: a host's data for second t
// lives on the owners of the epoch that held at t.
//
// Placement is rendezvous (highest-random-weight) hashing: every member gets a weight from a
// hash of (member name, host name), and the host's owners are the R members of highest weight,
// skipping a member whose zone is already taken while members of untaken zones remain. Adding
// or removing one of N members moves only the hosts it gains or loses, about R/N of them; the
// order of the list does not matter.
//
// An epoch may begin at any second. A rollup bucket (10 s, 60 s, 600 s; aggregator/store/keys.h) of
// a host can then hold seconds of two epochs, so a replicated query never reads a bucket across an
// epoch's start: its plan is cut there and the edges read finer (EpochCuts).
//
// Replicas in queries. With R > 1 a host-second is stored on each of its owners, and histograms
// merge by addition, so a query that added every owner's answer would count it R times. A query
// therefore asks every member in rounds, and each member answers only for the host-seconds it
// is chosen for (ReplicaSelection, ReplicaAnswers). In round r a host-second's chosen replica is
// the first of its owners (placement order) not found down before round r; every member asked
// answers for the host-seconds it is chosen for that no earlier round answered, that is, whose
// chosen replica failed in each earlier round. The members that fail round r are `down` from
// round r + 1 on, with the round they failed in, and only they are not asked again. So every
// host-second is answered exactly once, by the first chosen replica that answered, even when a
// member answers one round and fails a later one; a host-second whose owners all failed is
// answered by no one, and the query names those owner sets as missing. At most R rounds.
//
// Replicas by completeness. A replica still replaying an agent's spool holds less of the recent
// past than its peer, so the owner order above is only the default: before its rounds, a query
// asks every member how far it has applied each host (the newest second of the host it applied;
// an agent's batches are applied strictly in sequence, so everything the agent sent before that
// second is applied too) and, where an owner later in the order is further through the query's
// range than the first, sends a ReplicaPreference: for that host and epoch, that owner moves to
// the front of the order. Everything else (rounds, down members) works on the reordered order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trailmap {

struct ClusterMember {
  std::string name;
  std::string zone;        // "" = no zone given (all such members share one zone)
  std::string ingest;      // "tcp://host:port"
  std::string query;       // "tcp://host:port"
  std::string server_key;  // Z85 public key of its own key pair; "" = the clients' shared one
  bool operator==(const ClusterMember&) const = default;
};

struct ClusterEpoch {
  int64_t from = INT64_MIN;     // Unix seconds; the first epoch also holds before it
  std::vector<size_t> members;  // indexes into Cluster::members, sorted
  bool operator==(const ClusterEpoch&) const = default;
};

struct Cluster {
  uint32_t replication = 1;
  std::vector<ClusterMember> members;  // every aggregator the file lists, in its order
  std::vector<ClusterEpoch> epochs;    // ascending `from`, at least one

  // The epoch holding at Unix second t.
  const ClusterEpoch& EpochAt(int64_t t) const;
  // The owners of `host` among the members of the epoch holding at t: min(R, members) indexes
  // into `members`, highest weight first (the first is the host's primary).
  std::vector<size_t> Owners(std::string_view host, int64_t t) const;
  // The member named `name`, or nullptr.
  const ClusterMember* Find(std::string_view name) const;
};

// Everything placement needs (names, zones, R, epochs) holds; what ParseCluster checks after
// reading. Queries carry their cluster to the aggregators, which check it with this.
Status CheckCluster(const Cluster& cluster);
// The part of CheckCluster on epochs and replication, its errors named "SOURCE: epoch N: ..."
// (ParseCluster names the file).
Status CheckClusterEpochs(const Cluster& cluster, std::string_view source);

// The starts of the epochs after the first that fall in (from, to), ascending: where a replicated
// query's scan plan is cut.
std::vector<int64_t> EpochCuts(const Cluster& cluster, int64_t from, int64_t to);

// For `host` in epoch `epoch` (an index into Cluster::epochs), the owner `member` comes first.
struct ReplicaPreference {
  std::string host;
  uint32_t epoch = 0;
  std::string member;
  bool operator==(const ReplicaPreference&) const = default;
  auto operator<=>(const ReplicaPreference&) const = default;
};

// Which host-seconds a member answers for in one round of a replicated query (above).
struct ReplicaSelection {
  std::string member;             // the member asked
  uint32_t round = 0;             // 0 for the first round
  std::vector<std::string> down;  // members found down in earlier rounds
  std::vector<uint32_t> down_in;  // down[i] failed round down_in[i] (< round)
  // Hosts whose most complete owner is not their first (above), sorted by (host, epoch), at
  // most one per (host, epoch). The same in every round and for every member asked.
  std::vector<ReplicaPreference> prefer;
  bool operator==(const ReplicaSelection&) const = default;
};

// `owners` (Cluster::Owners of `host` in epoch `epoch`) in the order the selection chooses them:
// a preferred owner moved to the front, the rest in their order. A preference naming a member
// that is not an owner changes nothing.
void ApplyPreference(const Cluster& cluster, const ReplicaSelection& selection,
                     std::string_view host, size_t epoch, std::vector<size_t>* owners);
// The index in cluster.epochs of the epoch holding at t.
size_t EpochIndexAt(const Cluster& cluster, int64_t t);

// Whether `selection.member` answers this round for host-seconds owned by `owners` (indexes
// into cluster.members, Cluster::Owners order).
bool ReplicaAnswers(const Cluster& cluster, const std::vector<size_t>& owners,
                    const ReplicaSelection& selection);

// The rendezvous weight of `host` on the member named `member` (a 64-bit mix of both names).
uint64_t RendezvousWeight(std::string_view member, std::string_view host);
// The index in `members` (names) of `host`'s owner at R=1: the highest weight. 0 when empty.
size_t RendezvousIndex(std::string_view host, const std::vector<std::string>& members);

}  // namespace trailmap
