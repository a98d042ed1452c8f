#include "query/run/cluster.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/timespec.h"
#include "core/units.h"
#include "query/fetch/fanout.h"

namespace trailmap {
namespace {

struct Member {
  std::string name;      // the cluster file's name, else the aggregator's --name or endpoint
  std::string zone;      // "" = none given
  std::string endpoint;  // its query endpoint
  std::string epoch;     // "current", "past" or "next": in the epoch holding now, an older, a later
  std::string state;     // "up", "error" (a background error or a full disk), "down"
  std::string error;     // why not up; else its last write or rollup error since start
  ShardStatus status;
};

// Whether member m is in the epoch holding at `now`, only in earlier ones, or only in later ones.
std::string EpochOf(const Cluster& cluster, size_t m, int64_t now) {
  const ClusterEpoch& current = cluster.EpochAt(now);
  if (std::find(current.members.begin(), current.members.end(), m) != current.members.end()) {
    return "current";
  }
  for (const ClusterEpoch& e : cluster.epochs) {
    if (e.from > now) break;
    if (std::find(e.members.begin(), e.members.end(), m) != e.members.end()) return "past";
  }
  return "next";
}

std::vector<Member> Members(const Cluster& cluster, const FanoutResult& result, int64_t now) {
  std::vector<Member> members;
  for (size_t i = 0; i < cluster.members.size(); ++i) {
    const ClusterMember& c = cluster.members[i];
    Member m{c.name, c.zone, c.query, EpochOf(cluster, i, now), "down", "", {}};
    for (const Answer& a : result.answers) {
      if (a.endpoint != c.query && a.shard != c.name) continue;
      const ShardStatus& s = a.status;
      if (c.name == c.query && !a.shard.empty()) m.name = a.shard;  // the short form: its --name
      m.state = s.background_error.empty() ? "up" : "error";
      m.error = s.background_error.empty() ? s.last_error : s.background_error;
      m.status = s;
    }
    for (const ShardFailure& f : result.failures) {
      if (f.endpoint == c.query || f.endpoint.rfind(c.name + " (", 0) == 0) m.error = f.reason;
    }
    members.push_back(std::move(m));
  }
  std::sort(members.begin(), members.end(),
            [](const Member& a, const Member& b) { return a.name < b.name; });
  return members;
}

nlohmann::ordered_json LimitedAgentsJson(const ShardStatus& status) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ShardStatus::LimitedAgent& a : status.limited_agents) {
    list.push_back({{"agent", a.agent}, {"batches", a.batches}, {"limit", a.limit}});
  }
  return list;
}

std::string Lag(const Member& m, int64_t now) {
  if (m.state == "down" || m.status.newest_second == 0) return "-";
  return std::to_string(std::max<int64_t>(0, now - m.status.newest_second)) + " s";
}

}  // namespace

Result<ViewDocument> RunClusterView(const ClusterRequest& request, const QueryContext& context) {
  if (request.format != "table" && request.format != "json") {
    return Status::InvalidArgument("--format " + request.format + ": give table or json");
  }
  Result<Cluster> cluster = QueryCluster(context, request.query);
  if (!cluster.ok()) return cluster.status();
  Query query;
  query.kind = Query::Kind::kStatus;
  Result<FanoutResult> result = FanOutAll(context, request.query, query);
  FanoutResult none;  // no member answered: every one is listed down
  if (!result.ok()) {
    if (result.status().code() != Status::Code::kUnavailable) return result.status();
    for (const ClusterMember& m : cluster->members) none.failures.push_back({m.query, "no answer"});
  }
  const FanoutResult& answered = result.ok() ? *result : none;
  const std::vector<Member> members = Members(*cluster, answered, context.now);
  ViewDocument doc;
  doc.format = request.format;
  for (const Member& m : members) {
    if (m.state == "down") doc.missing.push_back(m.name + " (" + m.endpoint + "): " + m.error);
  }
  const ClusterEpoch& epoch = cluster->EpochAt(context.now);
  const size_t epoch_index = static_cast<size_t>(&epoch - cluster->epochs.data());
  if (request.format == "json") {
    nlohmann::ordered_json j;
    j["view"] = "cluster";
    j["replication"] = cluster->replication;
    nlohmann::ordered_json e;
    e["index"] = epoch_index + 1;
    e["of"] = cluster->epochs.size();
    if (epoch.from != INT64_MIN) e["from"] = FormatRfc3339(epoch.from);
    std::vector<std::string> names;
    for (size_t m : epoch.members) names.push_back(cluster->members[m].name);
    e["members"] = names;
    j["epoch"] = std::move(e);
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Member& m : members) {
      list.push_back({{"name", m.name},
                      {"zone", m.zone},
                      {"endpoint", m.endpoint},
                      {"epoch", m.epoch},
                      {"state", m.state},
                      {"error", m.error},
                      {"hosts", m.status.hosts},
                      {"agents", m.status.agents},
                      {"ingest_lag_seconds", m.status.newest_second == 0
                                                 ? nlohmann::ordered_json()
                                                 : nlohmann::ordered_json(std::max<int64_t>(
                                                       0, context.now - m.status.newest_second))},
                      {"disk_bytes", m.status.disk_bytes},
                      {"agents_pruned", m.status.agents_pruned},
                      {"pending_rollups", m.status.pending_rollups},
                      {"rollup_failures", m.status.rollup_failures},
                      {"rollup_aged_out", m.status.rollup_aged_out},
                      {"background_errors", m.status.background_errors},
                      {"recoveries", m.status.recoveries},
                      {"refused_batches", m.status.refused_batches},
                      {"refused_connections", m.status.refused_connections},
                      {"refused_at_cap", m.status.refused_at_cap},
                      {"ingest_connections", m.status.ingest_connections},
                      {"query_connections", m.status.query_connections},
                      {"max_connections", m.status.max_connections},
                      {"rate_limited", m.status.rate_limited},
                      {"busy", m.status.busy},
                      {"limited_agents", LimitedAgentsJson(m.status)},
                      {"last_error", m.status.last_error}});
    }
    j["members"] = std::move(list);
    j["missing_shards"] = doc.missing;
    doc.bytes = j.dump(2) + "\n";
    return doc;
  }
  std::string out =
      "replication " + std::to_string(cluster->replication) + ", epoch " +
      std::to_string(epoch_index + 1) + " of " + std::to_string(cluster->epochs.size()) +
      (epoch.from == INT64_MIN ? std::string() : " since " + FormatRfc3339(epoch.from)) + "\n";
  size_t width = 10;
  for (const Member& m : members) width = std::max(width, m.name.size());
  size_t zone_width = 4;
  for (const Member& m : members) zone_width = std::max(zone_width, m.zone.size());
  out += PadCell("aggregator", width) + PadCell("zone", zone_width) + PadCell("epoch", 7) +
         PadCell("state", 5) + PadCell("hosts", 6) + PadCell("agents", 6) +
         PadCell("ingest lag", 10) + PadCell("disk", 9) + PadCell("rollups behind", 14) +
         PadCell("refused", 7) + PadCell("limited", 7) + "error\n";
  for (const Member& m : members) {
    const bool answered = m.state != "down";
    out += PadCell(m.name, width) + PadCell(m.zone.empty() ? "-" : m.zone, zone_width) +
           PadCell(m.epoch, 7) + PadCell(m.state, 5) +
           PadCell(answered ? std::to_string(m.status.hosts) : "-", 6) +
           PadCell(answered ? std::to_string(m.status.agents) : "-", 6) +
           PadCell(Lag(m, context.now), 10) +
           PadCell(answered ? FormatBytes(static_cast<double>(m.status.disk_bytes)) : "-", 9) +
           PadCell(answered ? std::to_string(m.status.pending_rollups) + " min" : "-", 14) +
           PadCell(answered ? std::to_string(m.status.refused_batches) + "/" +
                                  std::to_string(m.status.refused_connections)
                            : "-",
                   7) +
           PadCell(answered
                       ? std::to_string(m.status.rate_limited) + "/" + std::to_string(m.status.busy)
                       : "-",
                   7) +
           (m.error.empty() ? "-" : m.error) + "\n";
  }
  // Connections refused at the cap: the fleet outgrew [limits] max_connections, or a crowd.
  for (const Member& m : members) {
    if (m.status.refused_at_cap == 0) continue;
    out += "connections on " + m.name + ": " + std::to_string(m.status.ingest_connections) +
           " ingest, " + std::to_string(m.status.query_connections) + " query, at most " +
           std::to_string(m.status.max_connections) + " each; " +
           std::to_string(m.status.refused_at_cap) + " refused at the cap\n";
  }
  // Who was held back, so an operator can find the agent that floods.
  for (const Member& m : members) {
    for (const ShardStatus::LimitedAgent& a : m.status.limited_agents) {
      out += "limited on " + m.name + ": agent " + a.agent + ", " + std::to_string(a.batches) +
             " batches answered retryLater, mostly for " + a.limit + "\n";
    }
  }
  doc.bytes = std::move(out);
  return doc;
}

}  // namespace trailmap
