// `trailmap cluster`: every aggregator and its health (query/run/cluster.h), and with
// --query-node the counters of a trailmap-query (cli/query_node.h).
#pragma once

#include <string>

#include "cli/cli_common.h"
#include "cli/query_node.h"
#include "query/run/cluster.h"

namespace trailmap {

struct ClusterFlags : ClusterRequest {
  std::string query_node;  // http://HOST[:PORT] of a trailmap-query; "" = none
  std::string token_file;  // a file holding its bearer token; "" = none
};

CLI::App* AddClusterCommand(CLI::App* app, ClusterFlags* flags);
int RunCluster(const ClusterFlags& flags, const CliContext& context);

// Adds `node` (the query node's counters, or why they could not be read: `node` not ok) to a
// cluster document: a line after the table, or "query_node" in the JSON (before
// "missing_shards"); a node not read is also in doc->missing. Pure.
void AddQueryNode(const std::string& url, const Result<QueryNodeSelf>& node, ViewDocument* doc);

}  // namespace trailmap
