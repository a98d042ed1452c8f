// Region -> code: a rectangle of a heat map (seconds FROM..TO × values LOW..HIGH of a latency or
// size metric) turned into the one stack query that shows what those requests' hosts were
// running.
//
// RegionQuery makes a StackQuery with a RegionBand (core/query_wire.h): every aggregator counts
// the metric's events in the band per host-second itself (`value >= LOW and value <= HIGH`,
// with the view's --where), and answers the stacks of those host-seconds, each counted once per
// such event, and with --differential the same hosts' other seconds of the view. Nothing per
// second travels. docs/region-flame.md says why and what the numbers mean.
//
// Errors: InvalidArgument names the flag ("--region: ...").
// Value types; may run on several threads at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/query_wire.h"
#include "core/status.h"
#include "query/fetch/view_request.h"

namespace trailmap {

// "FROM..TO,LOW..HIGH" as typed: times in any --from form, values with units ("10ms").
struct RegionText {
  std::string from, to, low, high;
};
Result<RegionText> ParseRegionText(const std::string& text);

// The stack query of `region` over the view (its metric, --hosts and --where select the events),
// drawing `stacks_metric`; with `differential`, also the baseline over the view's range [from,
// to) widened to hold the region.
Result<StackQuery> RegionQuery(const std::string& region, const ViewRequest& view,
                               const QueryContext& context, const std::string& stacks_metric,
                               bool differential);

}  // namespace trailmap
