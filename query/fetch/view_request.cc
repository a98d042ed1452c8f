#include "query/fetch/view_request.h"

#include <algorithm>
#include <chrono>

#include "core/predicate.h"
#include "core/timespec.h"
#include "core/units.h"
#include "query/fetch/endpoints.h"

namespace trailmap {

int64_t SystemNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

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

Result<std::vector<std::string>> QueryEndpoints(const QueryContext& context,
                                                const ViewRequest& request) {
  EndpointSources sources;
  sources.flag = request.aggregators;
  sources.config_path = request.config;
  sources.env_list = context.env_aggregators;
  sources.env_config = context.env_config;
  sources.home = context.home;
  Result<std::vector<std::string>> endpoints = ResolveEndpoints(EndpointKind::kQuery, sources);
  if (!endpoints.ok()) {
    return Status::InvalidArgument("aggregators: " + endpoints.status().message());
  }
  return endpoints;
}

Result<FanoutResult> FanOutAll(const QueryContext& context, const ViewRequest& request,
                               Query query) {
  Result<uint64_t> timeout = ParseDuration(request.timeout);
  if (!timeout.ok()) return Status::InvalidArgument("--timeout: " + timeout.status().message());
  Result<std::vector<std::string>> endpoints = QueryEndpoints(context, request);
  if (!endpoints.ok()) return endpoints.status();
  query.id = static_cast<uint64_t>(context.now) * 1000 + 1;
  FanoutOptions options;
  options.deadline = std::chrono::milliseconds(std::max<uint64_t>(1, *timeout / 1'000'000));
  FanoutResult result = FanOut(*context.zmq, *endpoints, query, options);
  if (result.answers.empty()) {
    std::string msg = "no aggregator answered:";
    for (const ShardFailure& f : result.failures) msg += "\n  " + f.endpoint + ": " + f.reason;
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
  Result<MergedGrid> grid = MergePartials(query, result->answers);
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

Status CheckRange(const char* flag, int64_t value, int64_t low, int64_t high) {
  if (value >= low && value <= high) return Status::Ok();
  return Status::InvalidArgument(std::string(flag) + " " + std::to_string(value) +
                                 ": give a number from " + std::to_string(low) + " to " +
                                 std::to_string(high));
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
