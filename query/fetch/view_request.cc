#include "query/fetch/view_request.h"

#include <algorithm>
#include <chrono>

#include "core/predicate.h"
#include "core/timespec.h"
#include "core/units.h"
#include "query/fetch/endpoints.h"
#include "query/fetch/request_checks.h"

namespace trailmap {

Result<TimeRange> ParseTimeRange(const ViewRequest& request, int64_t now) {
  Result<int64_t> from = ParseTimeSpec(request.from, now);
  if (!from.ok()) return Status::InvalidArgument("--from: " + from.status().message());
  Result<int64_t> to = ParseTimeSpec(request.to, now);
  if (!to.ok()) return Status::InvalidArgument("--to: " + to.status().message());
  if (*to <= *from) {
    return Status::InvalidArgument("--from " + FormatRfc3339(*from) + " is not before --to " +
                                   FormatRfc3339(*to) + ": the time range is empty");
  }
  return TimeRange{*from, *to};
}

Result<Cluster> QueryCluster(const QueryContext& context, const ViewRequest& request) {
  if (context.cluster) return *context.cluster;
  EndpointSources sources;
  sources.flag = request.aggregators;
  sources.config_path = request.config;
  sources.env_list = context.env_aggregators;
  sources.env_config = context.env_config;
  sources.home = context.home;
  sources.cluster_flag = request.cluster;
  sources.env_cluster = context.env_cluster;
  Result<Cluster> cluster = ResolveCluster(EndpointKind::kQuery, sources);
  if (!cluster.ok()) return Status::InvalidArgument("aggregators: " + cluster.status().message());
  return cluster;
}

namespace {

// The members a query over [from, to) asks: those of every epoch the range touches.
std::vector<size_t> MembersOver(const Cluster& cluster, int64_t from, int64_t to) {
  std::vector<bool> in(cluster.members.size(), false);
  for (size_t e = 0; e < cluster.epochs.size(); ++e) {
    const int64_t begin = e == 0 ? INT64_MIN : cluster.epochs[e].from;
    const int64_t end = e + 1 < cluster.epochs.size() ? cluster.epochs[e + 1].from : INT64_MAX;
    if (end <= from || begin >= to) continue;
    for (size_t m : cluster.epochs[e].members) in[m] = true;
  }
  std::vector<size_t> out;
  for (size_t m = 0; m < in.size(); ++m) {
    if (in[m]) out.push_back(m);
  }
  return out;
}

}  // namespace

Result<FanoutResult> FanOutAll(const QueryContext& context, const ViewRequest& request,
                               Query query) {
  // Names that do not validate and outsized timeouts are refused here, before any shard is
  // asked: every view's fan-out passes through this function.
  if (Status s = CheckViewRequest(request); !s.ok()) return s;
  Result<uint64_t> timeout = ParseDuration(request.timeout);
  if (!timeout.ok()) return Status::InvalidArgument("--timeout: " + timeout.status().message());
  if (Status s = context.curve.Usable(); !s.ok()) return s;
  Result<Cluster> cluster = QueryCluster(context, request);
  if (!cluster.ok()) return cluster.status();
  query.id = static_cast<uint64_t>(context.now) * 1000 + 1;
  FanoutOptions options;
  options.curve = context.curve;
  for (const ClusterMember& m : cluster->members) {
    if (!m.server_key.empty()) options.server_keys[m.query] = m.server_key;
  }
  options.deadline = std::chrono::milliseconds(std::max<uint64_t>(1, *timeout / 1'000'000));
  options.cancelled = context.cancelled;
  // The shards stop a little before the fan-out stops waiting, so their "over budget" arrives.
  query.limits.deadline_ms = std::max<uint64_t>(1, *timeout / 1'000'000 * 9 / 10);
  query.limits.max_keys = request.max_keys;
  query.limits.max_cells = request.max_cells;
  const bool ranged = query.kind == Query::Kind::kHistograms || query.kind == Query::Kind::kStacks;
  std::vector<size_t> asked;
  if (ranged) {
    const bool stacks = query.kind == Query::Kind::kStacks;
    asked = MembersOver(*cluster, stacks ? query.stacks.from : query.histograms.from,
                        stacks ? query.stacks.to : query.histograms.to);
  } else {
    for (size_t m = 0; m < cluster->members.size(); ++m) asked.push_back(m);
  }
  FanoutResult result;
  if (ranged && cluster->replication > 1) {
    result = FanOutReplicas(*context.zmq, *cluster, asked, std::move(query), options);
  } else {
    std::vector<std::string> endpoints;
    for (size_t m : asked) endpoints.push_back(cluster->members[m].query);
    result = FanOut(*context.zmq, endpoints, query, options);
    for (ShardFailure& f : result.failures) {  // named as the cluster file names it
      for (size_t m : asked) {
        const ClusterMember& member = cluster->members[m];
        if (member.query == f.endpoint && member.name != f.endpoint) {
          f.endpoint = member.name + " (" + f.endpoint + ")";
        }
      }
    }
  }
  for (const ShardFailure& f : result.over_budget) {  // named as the cluster file names it
    for (const ClusterMember& member : cluster->members) {
      if (member.query == f.endpoint && member.name != f.endpoint) {
        return Status::InvalidArgument(member.name + " (" + f.endpoint + "): " + f.reason);
      }
    }
    return Status::InvalidArgument(f.endpoint + ": " + f.reason);
  }
  // No shard answered and some refused the key: not a partial view, an error saying why.
  if (result.answers.empty() && !result.key_refused.empty()) {
    std::string msg;
    for (const ShardFailure& f : result.key_refused) {
      for (const ClusterMember& member : cluster->members) {
        if (member.query == f.endpoint && member.name != f.endpoint) {
          msg += (msg.empty() ? "" : "; ") + member.name + " (" + f.endpoint + ") " + f.reason;
        }
      }
      if (msg.find(f.endpoint) == std::string::npos) {
        msg += (msg.empty() ? "" : "; ") + f.endpoint + " " + f.reason;
      }
    }
    return Status::PermissionDenied(msg);
  }
  if (result.answers.empty() && !result.failures.empty() && context.empty_when_none_answer) {
    return result;  // every shard missing: the view's document says so
  }
  if (result.answers.empty()) {
    std::string msg = "no aggregator answered:";
    for (const ShardFailure& f : result.failures) msg += "\n  " + f.endpoint + ": " + f.reason;
    for (const ShardFailure& f : result.skipped) msg += "\n  " + f.endpoint + ": " + f.reason;
    return Status::Unavailable(msg);
  }
  return result;
}

Result<Fetched> FetchGrid(const QueryContext& context, const ViewRequest& request,
                          const HistogramQuery& query) {
  Query q;
  q.kind = Query::Kind::kHistograms;
  q.histograms = query;
  q.histograms.where = request.where;  // every view filters the same way
  if (Result<Predicate> where = Predicate::Parse(request.where); !where.ok()) {
    return Status::InvalidArgument("--where: " + where.status().message());
  }
  Result<FanoutResult> result = FanOutAll(context, request, std::move(q));
  if (!result.ok()) return result.status();
  Fetched fetched;
  for (const ShardFailure& f : result->failures) {
    fetched.missing.push_back(f.endpoint + ": " + f.reason);
  }
  for (const ShardFailure& f : result->skipped) {
    fetched.skipped.push_back(f.endpoint + ": " + f.reason);
  }
  Result<MergedGrid> grid = MergePartials(query, std::move(result->answers));
  if (!grid.ok()) return grid.status();
  fetched.grid = std::move(grid).value();
  return fetched;
}

Result<uint64_t> ParseAxisFlag(const char* flag, const std::string& text, const std::string& metric,
                               const std::string& unit) {
  Result<uint64_t> value = ParseQuantity(text, unit);
  if (!value.ok()) {
    // A scalar's fixed-point unit ("0.01%") is shown as the unit people type ("%").
    return Status::InvalidArgument(std::string(flag) + ": " + metric + " is in " +
                                   std::string(SplitFixedPointUnit(unit).second) + ": " +
                                   value.status().message());
  }
  return value;
}

Status GoOn(const QueryContext& context, const ViewRequest& request) {
  if (context.cancelled && context.cancelled()) {
    return Status::Unavailable("cancelled: nobody waits for the answer any more");
  }
  if (context.received == std::chrono::steady_clock::time_point{}) return Status::Ok();
  Result<uint64_t> timeout = ParseDuration(request.timeout);
  if (!timeout.ok()) return Status::Ok();  // FanOutAll has refused it already
  // The shards may take the whole timeout (one silent shard does); drawing gets as long again.
  if (std::chrono::steady_clock::now() - context.received <=
      2 * std::chrono::nanoseconds(*timeout)) {
    return Status::Ok();
  }
  return Status::ResourceExhausted("not drawn within twice --timeout " + request.timeout +
                                   " (the shards' time, and as long again to draw): ask for "
                                   "fewer pixels (width, height) or columns, a shorter range, or "
                                   "a longer timeout");
}

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace trailmap

namespace trailmap {

HistogramQuery WholeRangeQuery(const ViewRequest& request, const TimeRange& range,
                               const std::string& group_by) {
  HistogramQuery query;
  query.metric = request.metric;
  query.from = range.from;
  query.to = range.to;
  query.step = static_cast<uint32_t>(std::min<int64_t>(range.to - range.from, UINT32_MAX));
  query.group_by = group_by;
  query.hosts = SplitList(request.hosts);
  return query;
}

}  // namespace trailmap
