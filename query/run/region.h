// Region -> code: a rectangle of a heat map (seconds FROM..TO × values LOW..HIGH of a latency or
// size metric) turned into the stack queries that show what those requests' hosts were running.
//
// SelectRegion asks every aggregator how many of the metric's events fall in the rectangle per
// host and second (a summaries query grouped by host, step 1, the value band pushed down as
// `value >= LOW and value < HIGH`, so only counts travel). Each host-second holding n > 0 of them
// gets weight n: RegionStackQuery asks for the stacks of exactly those host-seconds, each
// counted n times (StackQuery::weights); RegionBaselineQuery for the same hosts' other seconds of
// the view, each once. docs/region-flame.md says why and what the numbers mean.
//
// Errors: InvalidArgument names the flag ("--region: ..."), Unavailable when no shard answered.
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

struct RegionSelection {
  int64_t from = 0;  // the region's seconds [from, to)
  int64_t to = 0;
  uint64_t low = 0;  // its values [low, high] in the base unit (bucket midpoints, inclusive)
  uint64_t high = 0;
  std::vector<HostSecondWeights> weights;  // per host: its seconds holding selected events
  uint64_t events = 0;                     // selected events, all hosts
  uint64_t host_seconds = 0;               // host-seconds holding any
  std::vector<std::string> missing;        // shards that did not answer
};

// The events of `view.metric` in `region` (also filtered by view.hosts and view.where), counted
// per host and second.
Result<RegionSelection> SelectRegion(const std::string& region, const ViewRequest& view,
                                     const QueryContext& context);

// The stacks of `stacks_metric` of the selection's host-seconds, each weighted by its events.
StackQuery RegionStackQuery(const RegionSelection& selection, const std::string& stacks_metric);

// The same hosts' seconds of [from, to) (widened to hold the region) that hold none of the
// selected events, each weighted 1: what the differential compares against.
StackQuery RegionBaselineQuery(const RegionSelection& selection, const std::string& stacks_metric,
                               int64_t from, int64_t to);

}  // namespace trailmap
