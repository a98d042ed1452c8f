// Endpoints: which aggregators a command talks to.
//
// Queries go to the aggregators' QUERY ports (default 7401); `trailmap import` sends batches to
// their INGEST ports (default 7400). Either list is written "HOST:PORT,HOST:PORT" (a HOST alone
// takes the default port) and comes from, first found wins:
//   1. the command's flag (--aggregators for queries, --ingest for import);
//   2. the environment: TRAILMAP_AGGREGATORS (query ports) or TRAILMAP_INGEST (ingest ports);
//   3. a TOML config file: --config FILE, else $TRAILMAP_CONFIG, else
//      ~/.config/trailmap/trailmap.toml when it exists, with top-level keys
//        aggregators = ["10.0.0.1:7401", "10.0.0.2:7401"]
//        ingest      = ["10.0.0.1:7400", "10.0.0.2:7400"]
//   4. the default, 127.0.0.1 on the default port.
// The order of the list does not matter: import places a host by rendezvous hashing of the
// endpoints (core/cluster.h), as the agents do.
//
// A cluster file (core/cluster.h: names, zones, replicas, epochs) replaces the list: --cluster
// FILE, else $TRAILMAP_CLUSTER when no list flag is given. ResolveCluster gives either as a
// Cluster; a list is the short form (one zone, R=1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster.h"
#include "core/status.h"
#include "net/endpoint.h"

namespace trailmap {

enum class EndpointKind { kQuery, kIngest };

struct EndpointSources {
  std::string flag;         // the flag's value, "" when not given
  std::string config_path;  // --config, "" when not given
  // Read from the environment by the caller (main), so tests hand in what they like.
  std::string env_list;      // TRAILMAP_AGGREGATORS or TRAILMAP_INGEST, "" when unset
  std::string env_config;    // TRAILMAP_CONFIG, "" when unset
  std::string home;          // $HOME, "" when unset
  std::string cluster_flag;  // --cluster FILE, "" when not given
  std::string env_cluster;   // TRAILMAP_CLUSTER, "" when unset
};

// Applies the order above. An unreadable or malformed config file named by --config or
// TRAILMAP_CONFIG is an error; a missing default config file is not.
Result<std::vector<std::string>> ResolveEndpoints(EndpointKind kind,
                                                  const EndpointSources& sources);

// The cluster: --cluster, else the list flag, else $TRAILMAP_CLUSTER, else ResolveEndpoints's
// list in the short form. Both --cluster and the list flag is an error that says to pick one.
Result<Cluster> ResolveCluster(EndpointKind kind, const EndpointSources& sources);

}  // namespace trailmap
