// The cluster: which aggregators exist, in which zones, since when, and which of them own a host.
//
// Every program that sends or reads data (agents, `trailmap import`, the load generator,
// `trailmap`, `trailmap-query`) and every aggregator reads the same description, either a
// cluster file (`--cluster FILE`, TOML) or the short form `--aggregators a,b,c` (one zone, R=1,
// one epoch). The file:
//
//   replication = 2                    # R: owners per host (default 1)
//   [[aggregator]]                     # one table per aggregator ever in the cluster
//   name = "agg-1"                     # unique; what placement hashes (never the address)
//   zone = "a"                         # owners are taken from distinct zones where there are R
//   ingest = "agg-1:7400"              # HOST[:PORT], default ports 7400 / 7401
//   query = "agg-1:7401"
//   server_key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"   # optional, or:
//   server_key_file = "keys/agg-1.pub"  # its .pub, relative to the cluster file
//   [[epoch]]                          # optional: who was a member from when on
//   from = 2026-11-01T00:00:00Z        # a TOML date-time, or Unix seconds
//   members = ["agg-1", "agg-2"]
//
// A member's server key is the CURVE public key of its own key pair (core/curve_keys.h): clients
// (agents, `trailmap`, trailmap-query, the load generator) connect to that member with it, and
// to members without one with the shared key (--server-key, $TRAILMAP_SERVER_KEY), which they
// still need. An aggregator started with --cluster and --name refuses to start when its key pair
// is not its entry's. A running client takes a changed key on SIGHUP (CheckClusterReload), and
// reconnects to that member alone: so one member's key is rolled without restarting anyone else
// (README, "Rolling one aggregator's key").
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
// An epoch may begin at any second. A rollup bucket (10 s, 60 s, 600 s; aggregator/store/keys.h) of a
// host can then hold seconds of two epochs, so a replicated query never reads a bucket across
// an epoch's start: its plan is cut there and the edges read finer (EpochCuts).
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

#include "core/curve_keys.h"
#include "core/status.h"

namespace trailmap {

struct ClusterMember {
  std::string name;
  std::string zone;    // "" = no zone given (all such members share one zone)
  std::string ingest;  // "tcp://host:port"
  std::string query;   // "tcp://host:port"
  std::string server_key;  // Z85 public key of its own key pair; "" = the clients' shared one
  bool operator==(const ClusterMember&) const = default;
};

struct ClusterEpoch {
  int64_t from = INT64_MIN;      // Unix seconds; the first epoch also holds before it
  std::vector<size_t> members;   // indexes into Cluster::members, sorted
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
  std::string member;              // the member asked
  uint32_t round = 0;              // 0 for the first round
  std::vector<std::string> down;   // members found down in earlier rounds
  std::vector<uint32_t> down_in;   // down[i] failed round down_in[i] (< round)
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

// Reads a cluster file's text; `source` names it in errors ("cluster.toml: aggregator 2: ...")
// and is its path: a relative server_key_file is read from the directory `source` is in (the
// one file this reads). Unknown keys, a server key that is not 40 Z85 characters, a member with
// both server_key and server_key_file, a server_key_file that does not load, duplicate names, bad
// endpoints, epochs out of order, epochs naming an unknown member and a replication larger than an
// epoch's members are errors that say which and where.
Result<Cluster> ParseCluster(std::string_view text, std::string_view source);
Result<Cluster> LoadCluster(const std::string& path);

// Whether `next`, the cluster file read again while running (SIGHUP), may replace `current`: the
// file grows, it never rewrites what placement already used. It keeps the replication, every
// member of `current` in its place with the same name, zone and endpoints, and every epoch of
// `current` that has begun by `now` as it was; new members come after the old ones, and an epoch
// it adds or changes begins after `now` (data already sent went to the owners of its time, and
// queries must find it there). A member's server key may change (a rolled key). InvalidArgument
// naming `source` and what changed, otherwise.
Status CheckClusterReload(const Cluster& current, const Cluster& next, int64_t now,
                          std::string_view source);
// Reads the cluster file `path` again for a process running with `current` (SIGHUP): the new
// cluster when it reads and CheckClusterReload takes it, else InvalidArgument naming the file
// (FILE:LINE for what is wrong inside it) and saying the old cluster is kept.
Result<Cluster> ReloadCluster(const std::string& path, const Cluster& current, int64_t now);
// What every daemon does on SIGHUP: ReloadCluster, its outcome logged ("SIGHUP: cluster file F
// read again: N members, M epochs", or the refusal); the new cluster, or nullopt when refused.
std::optional<Cluster> ReloadClusterOnSignal(const std::string& path, const Cluster& current,
                                             int64_t now);

// What a client connects to `member` with: `shared` with the member's own server key when it has
// one (nothing changes when `shared` is plaintext or unkeyed).
CurveClient MemberCurve(const CurveClient& shared, const ClusterMember& member);

// The short form: `--aggregators a,b,c`, one zone, R=1, one epoch. The list holds the endpoints
// of the role the program uses (an agent's are ingest endpoints, default port 7400; the CLI's are
// query endpoints, 7401): each member gets that endpoint as both `ingest` and `query`, and as its
// name. With R=1 every host has one owner, and a query reads every member, so the two roles'
// differing names never matter.
Result<Cluster> ClusterFromList(std::string_view aggregators, uint16_t default_port);
// The same from endpoints already parsed ("tcp://host:port").
Result<Cluster> ClusterFromEndpoints(const std::vector<std::string>& endpoints);

}  // namespace trailmap
