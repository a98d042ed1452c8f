// The cluster file and the short form: how a program reads the cluster (core/cluster.h) it is
// part of, and reads it again on SIGHUP.
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
// A member's server key is the CURVE public key of its own key pair (net/curve_keys.h): clients
// (agents, `trailmap`, trailmap-query, the load generator) connect to that member with it, and
// to members without one with the shared key (--server-key, $TRAILMAP_SERVER_KEY), which they
// still need. An aggregator started with --cluster and --name refuses to start when its key pair
// is not its entry's. A running client takes a changed key on SIGHUP (CheckClusterReload), and
// reconnects to that member alone: so one member's key is rolled without restarting anyone else
// (docs/security.md, "Rolling one aggregator's key").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster.h"
#include "core/status.h"
#include "net/curve_keys.h"

namespace trailmap {

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
