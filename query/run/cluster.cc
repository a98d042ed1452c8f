#include "query/run/cluster.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "query/fetch/fanout.h"

namespace trailmap {
namespace {

struct Member {
  std::string name;   // the aggregator's --name, or its endpoint when it did not answer
  std::string state;  // "up", "error" (a background error or a full disk), "down"
  std::string error;  // why not up
  ShardStatus status;
};

std::vector<Member> Members(const FanoutResult& result) {
  std::vector<Member> members;
  for (const Answer& a : result.answers) {
    const ShardStatus& s = a.status;
    members.push_back({a.shard, s.background_error.empty() ? "up" : "error", s.background_error, s});
  }
  for (const ShardFailure& f : result.failures) members.push_back({f.endpoint, "down", f.reason, {}});
  std::sort(members.begin(), members.end(),
            [](const Member& a, const Member& b) { return a.name < b.name; });
  return members;
}

}  // namespace

Result<ViewDocument> RunClusterView(const ClusterRequest& request, const QueryContext& context) {
  if (request.format != "table" && request.format != "json") {
    return Status::InvalidArgument("--format " + request.format + ": give table or json");
  }
  Query query;
  query.kind = Query::Kind::kStatus;
  Result<FanoutResult> result = FanOutAll(context, request.query, query);
  if (!result.ok()) return result.status();
  const std::vector<Member> members = Members(*result);
  ViewDocument doc;
  doc.format = request.format;
  for (const ShardFailure& f : result->failures) doc.missing.push_back(f.endpoint + ": " + f.reason);
  if (request.format == "json") {
    nlohmann::ordered_json j;
    j["view"] = "cluster";
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Member& m : members) {
      list.push_back({{"name", m.name},
                      {"state", m.state},
                      {"error", m.error},
                      {"agents", m.status.agents},
                      {"agents_pruned", m.status.agents_pruned},
                      {"pending_rollups", m.status.pending_rollups},
                      {"rollup_failures", m.status.rollup_failures},
                      {"rollup_aged_out", m.status.rollup_aged_out},
                      {"background_errors", m.status.background_errors},
                      {"recoveries", m.status.recoveries}});
    }
    j["members"] = std::move(list);
    j["missing_shards"] = doc.missing;
    doc.bytes = j.dump(2) + "\n";
    return doc;
  }
  size_t width = 10;
  for (const Member& m : members) width = std::max(width, m.name.size());
  std::string out = PadCell("aggregator", width) + PadCell("state", 5) + PadCell("agents", 6) +
                    PadCell("rollups behind", 14) + "error\n";
  for (const Member& m : members) {
    const bool answered = m.state != "down";
    out += PadCell(m.name, width) + PadCell(m.state, 5) +
           PadCell(answered ? std::to_string(m.status.agents) : "-", 6) +
           PadCell(answered ? std::to_string(m.status.pending_rollups) + " min" : "-", 14) +
           (m.error.empty() ? "-" : m.error) + "\n";
  }
  doc.bytes = std::move(out);
  return doc;
}

}  // namespace trailmap
