#include "query/run/region.h"

#include <algorithm>
#include <utility>

#include "core/predicate.h"
#include "query/views/line.h"

namespace trailmap {
namespace {

Status RegionUsage(const std::string& text, const std::string& why) {
  return Status::InvalidArgument("--region " + text + ": " + why +
                                 " (give FROM..TO,LOW..HIGH, e.g. -2m..-1m,50ms..200ms)");
}

// A value literal as the predicate language takes it: a number, then letters of a unit.
bool IsValueLiteral(const std::string& v) {
  if (v.empty() || !(v[0] >= '0' && v[0] <= '9')) return false;
  for (unsigned char c : v) {
    if (!(std::isalnum(c) || c == '.' || c == '%' || c == '/' || c >= 0x80)) return false;
  }
  return true;
}

}  // namespace

Result<RegionText> ParseRegionText(const std::string& text) {
  const size_t comma = text.find(',');
  if (comma == std::string::npos) return RegionUsage(text, "no ',' between time and value");
  const std::string time = text.substr(0, comma), value = text.substr(comma + 1);
  const size_t t = time.find(".."), v = value.find("..");
  if (t == std::string::npos) return RegionUsage(text, "no '..' between FROM and TO");
  if (v == std::string::npos) return RegionUsage(text, "no '..' between LOW and HIGH");
  RegionText out{time.substr(0, t), time.substr(t + 2), value.substr(0, v), value.substr(v + 2)};
  if (out.from.empty() || out.to.empty()) return RegionUsage(text, "FROM and TO are both needed");
  if (!IsValueLiteral(out.low) || !IsValueLiteral(out.high)) {
    return RegionUsage(text, "LOW and HIGH are values such as 1500, 20ms or 4KiB");
  }
  return out;
}

Result<RegionSelection> SelectRegion(const std::string& region, const ViewRequest& view,
                                     const QueryContext& context) {
  Result<RegionText> text = ParseRegionText(region);
  if (!text.ok()) return text.status();
  ViewRequest seconds = view;
  seconds.from = text->from;
  seconds.to = text->to;
  Result<TimeRange> range = ParseTimeRange(seconds, context.now);
  if (!range.ok()) return Status::InvalidArgument("--region: " + range.status().message());
  // The band is pushed down: only the events in it are counted, per host-second.
  const std::string band = "value >= " + text->low + " and value <= " + text->high;
  const std::string where = view.where.empty() ? band : "(" + view.where + ") and " + band;
  Result<Predicate> predicate = Predicate::Parse(where);
  if (!predicate.ok()) return Status::InvalidArgument("--where: " + predicate.status().message());
  RegionSelection out;
  out.from = range->from;
  out.to = range->to;
  std::tie(out.low, out.high) = predicate->ValueRange();
  if (out.low > out.high) return RegionUsage(region, "LOW is above HIGH");

  HistogramQuery query;
  query.metric = view.metric;
  query.from = out.from;
  query.to = out.to;
  query.step = 1;
  query.group_by = "host";
  query.hosts = SplitList(view.hosts);
  query.where = where;
  query.summaries = true;  // counts are all it needs
  Query q;
  q.kind = Query::Kind::kHistograms;
  q.histograms = query;
  Result<FanoutResult> fanout = FanOutAll(context, view, std::move(q));
  if (!fanout.ok()) return fanout.status();
  for (const ShardFailure& f : fanout->failures)
    out.missing.push_back(f.endpoint + ": " + f.reason);
  Result<SummaryGrid> grid = MergeSummaries(query, fanout->answers);
  if (!grid.ok()) return grid.status();
  for (size_t g = 0; g < grid->groups.size(); ++g) {
    HostSecondWeights host;
    host.host = grid->groups[g];
    for (size_t c = 0; c < grid->cells[g].size(); ++c) {
      const uint64_t n = grid->cells[g][c].count;
      if (n == 0) continue;
      host.seconds.push_back(out.from + static_cast<int64_t>(c));
      host.weights.push_back(n);
      out.events += n;
    }
    out.host_seconds += host.seconds.size();
    if (!host.seconds.empty()) out.weights.push_back(std::move(host));
  }
  // What an aggregator would refuse (or never receive: too large a message) is refused here.
  if (Status s = CheckStackQuery(RegionStackQuery(out, "cpu.stacks")); !s.ok()) {
    return RegionUsage(region, "it holds events in " + std::to_string(out.host_seconds) +
                                   " host-seconds, more than one query carries: " + s.message());
  }
  return out;
}

StackQuery RegionStackQuery(const RegionSelection& selection, const std::string& stacks_metric) {
  StackQuery q;
  q.metric = stacks_metric;
  q.from = selection.from;
  q.to = selection.to;
  q.weights = selection.weights;
  return q;
}

StackQuery RegionBaselineQuery(const RegionSelection& selection, const std::string& stacks_metric,
                               int64_t from, int64_t to) {
  StackQuery q;
  q.metric = stacks_metric;
  q.from = std::min(from, selection.from);
  q.to = std::max(to, selection.to);
  for (const HostSecondWeights& h : selection.weights) {
    HostSecondWeights other;
    other.host = h.host;
    other.seconds = h.seconds;
    other.weights.assign(h.seconds.size(), 0);  // the selected seconds are left out
    other.other_seconds = 1;
    q.weights.push_back(std::move(other));
  }
  return q;
}

}  // namespace trailmap
