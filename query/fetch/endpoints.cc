#include "query/fetch/endpoints.h"

#include <toml++/toml.h>

#include <filesystem>

#include "net/cluster_file.h"

namespace trailmap {
namespace {

Result<std::string> ConfigList(const std::string& path, const char* key) {
  try {
    toml::table config = toml::parse_file(path);
    const toml::node* node = config.get(key);
    if (node == nullptr) return std::string();
    if (const auto* s = node->as_string()) return s->get();
    const toml::array* array = node->as_array();
    if (array == nullptr) {
      return Status::InvalidArgument(path + ": " + key +
                                     " must be a list of \"HOST:PORT\" strings");
    }
    std::string out;
    for (const toml::node& item : *array) {
      const auto* s = item.as_string();
      if (s == nullptr) {
        return Status::InvalidArgument(path + ": " + key +
                                       " must be a list of \"HOST:PORT\" strings");
      }
      out += (out.empty() ? "" : ",") + s->get();
    }
    return out;
  } catch (const toml::parse_error& e) {
    return Status::InvalidArgument(path +
                                   ": not a valid TOML file: " + std::string(e.description()));
  }
}

}  // namespace

Result<std::vector<std::string>> ResolveEndpoints(EndpointKind kind,
                                                  const EndpointSources& sources) {
  const uint16_t port = kind == EndpointKind::kQuery ? kDefaultQueryPort : kDefaultIngestPort;
  if (!sources.flag.empty()) return ParseEndpointList(sources.flag, port);
  if (!sources.env_list.empty()) return ParseEndpointList(sources.env_list, port);

  std::string path = !sources.config_path.empty() ? sources.config_path : sources.env_config;
  const bool named = !path.empty();
  if (!named && !sources.home.empty()) path = sources.home + "/.config/trailmap/trailmap.toml";
  std::error_code ec;
  if (!path.empty() && (named || std::filesystem::exists(path, ec))) {
    if (named && !std::filesystem::exists(path, ec)) {
      return Status::InvalidArgument("config file " + path + " does not exist");
    }
    Result<std::string> list =
        ConfigList(path, kind == EndpointKind::kQuery ? "aggregators" : "ingest");
    if (!list.ok()) return list.status();
    if (!list->empty()) return ParseEndpointList(*list, port);
  }
  return ParseEndpointList("127.0.0.1", port);
}

Result<Cluster> ResolveCluster(EndpointKind kind, const EndpointSources& sources) {
  const char* list_flag = kind == EndpointKind::kQuery ? "--aggregators" : "--ingest";
  if (!sources.cluster_flag.empty() && !sources.flag.empty()) {
    return Status::InvalidArgument(std::string("give either --cluster or ") + list_flag +
                                   ", not both: a cluster file lists every aggregator");
  }
  if (!sources.cluster_flag.empty()) return LoadCluster(sources.cluster_flag);
  if (sources.flag.empty() && !sources.env_cluster.empty()) {
    Result<Cluster> c = LoadCluster(sources.env_cluster);
    if (!c.ok()) return Status::InvalidArgument("TRAILMAP_CLUSTER: " + c.status().message());
    return c;
  }
  Result<std::vector<std::string>> endpoints = ResolveEndpoints(kind, sources);
  if (!endpoints.ok()) return endpoints.status();
  return ClusterFromEndpoints(*endpoints);
}

}  // namespace trailmap
