#include "cli/cluster_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "core/units.h"

namespace trailmap {

CLI::App* AddClusterCommand(CLI::App* app, ClusterFlags* flags) {
  CLI::App* cmd = app->add_subcommand(
      "cluster",
      "Every aggregator of the cluster and its health: zone, epoch, up, down or in error, hosts "
      "it holds, agents, ingest lag, bytes on disk, rollups behind, last error; with "
      "--query-node, a trailmap-query's own counters too");
  AddShardFlags(cmd, &flags->query);
  AddTableOrJsonFormat(cmd, &flags->format);
  cmd->add_option("--query-node", flags->query_node,
                  "Also show this trailmap-query's counters from its GET /api/self: requests, "
                  "401s, 4xx and 5xx replies, uptime and RSS. http://HOST[:PORT] (default port "
                  "7402)");
  cmd->add_option("--token-file", flags->token_file,
                  "A file holding the bearer token for --query-node (the token itself, as given "
                  "to its user; trailmap-query's --tokens file holds only its hash)");
  cmd->footer(
      "Exit status 3 when an aggregator does not answer (it is listed as down), or the query "
      "node cannot be read.\n"
      "Examples:\n  trailmap cluster\n  trailmap cluster --cluster /etc/trailmap/cluster.toml\n"
      "  trailmap cluster --format json --aggregators agg-1,agg-2\n"
      "  trailmap cluster --query-node http://query-1:7402 --token-file "
      "~/.config/trailmap/ops.token");
  return cmd;
}

void AddQueryNode(const std::string& url, const Result<QueryNodeSelf>& node, ViewDocument* doc) {
  if (!node.ok()) doc->missing.push_back(node.status().message());
  if (doc->format != "json") {
    doc->bytes += node.ok() ? FormatQueryNodeLine(*node) : node.status().message() + "\n";
    return;
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(doc->bytes);
  nlohmann::ordered_json missing = j["missing_shards"];
  j.erase("missing_shards");
  if (node.ok()) {
    j["query_node"] = {{"url", url},
                       {"state", "up"},
                       {"uptime_seconds", node->uptime_seconds},
                       {"requests", node->requests},
                       {"unauthorized", node->unauthorized},
                       {"client_errors", node->client_errors},
                       {"server_errors", node->server_errors},
                       {"rss_bytes", node->rss_bytes}};
  } else {
    j["query_node"] = {{"url", url}, {"state", "down"}, {"error", node.status().message()}};
  }
  j["missing_shards"] = std::move(missing);
  doc->bytes = j.dump(2) + "\n";
}

int RunCluster(const ClusterFlags& flags, const CliContext& context) {
  Result<ViewDocument> doc = RunClusterView(flags, context);
  if (doc.ok() && !flags.query_node.empty()) {
    std::string token;
    if (!flags.token_file.empty()) {
      Result<std::string> read = ReadTokenFile(flags.token_file);
      if (!read.ok()) return FinishView(context, "cluster", read.status(), "");
      token = std::move(read).value();
    }
    if (Status s = ParseQueryNodeUrl(flags.query_node).status(); !s.ok()) {
      return FinishView(context, "cluster", s, "");
    }
    Result<uint64_t> timeout = ParseDuration(flags.query.timeout);  // RunClusterView checked it
    const auto wait = std::chrono::milliseconds(
        timeout.ok() ? std::max<uint64_t>(1, *timeout / 1'000'000) : 5000);
    AddQueryNode(flags.query_node, FetchQueryNodeSelf(flags.query_node, token, wait), &*doc);
  }
  return FinishView(context, "cluster", doc, "");
}

}  // namespace trailmap
