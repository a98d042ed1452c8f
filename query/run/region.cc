#include "query/run/region.h"

#include <algorithm>
#include <utility>

#include "core/predicate.h"
#include "query/run/predicate_tree.h"
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

Result<StackQuery> RegionQuery(const std::string& region, const ViewRequest& view,
                               const QueryContext& context, const std::string& stacks_metric,
                               bool differential) {
  Result<RegionText> text = ParseRegionText(region);
  if (!text.ok()) return text.status();
  ViewRequest seconds = view;
  seconds.from = text->from;
  seconds.to = text->to;
  Result<TimeRange> range = ParseTimeRange(seconds, context.now);
  if (!range.ok()) return Status::InvalidArgument("--region: " + range.status().message());
  // The band is pushed down: only the events in it are counted, per host-second. It joins the
  // user's --where as a tree, so neither side can change what the other means.
  Result<PredicateTree> user = PredicateTree::Parse(view.where);
  if (!user.ok()) return Status::InvalidArgument("--where: " + user.status().message());
  Result<PredicateTree> band = PredicateTree::ValueBetween(text->low, text->high);
  if (!band.ok()) return RegionUsage(region, band.status().message());
  const std::string where = PredicateTree::And(*user, *band).Json();
  Result<Predicate> predicate = Predicate::Parse(where);
  if (!predicate.ok()) return Status::InvalidArgument("--where: " + predicate.status().message());
  const auto [low, high] = predicate->ValueRange();
  if (low > high) return RegionUsage(region, "LOW is above HIGH");
  StackQuery q;
  q.metric = stacks_metric;
  q.from = range->from;
  q.to = range->to;
  q.hosts = SplitList(view.hosts);
  q.region = RegionBand{view.metric, where, differential, 0, 0};
  if (differential) {
    Result<TimeRange> whole = ParseTimeRange(view, context.now);
    if (!whole.ok()) return whole.status();
    q.region->baseline_from = std::min(whole->from, q.from);
    q.region->baseline_to = std::max(whole->to, q.to);
  }
  if (Status s = CheckStackQuery(q); !s.ok()) return RegionUsage(region, s.message());
  return q;
}

}  // namespace trailmap
