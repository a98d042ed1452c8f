// The fleet's sub-second map as a whole view (query/views/subsecond.h): FlameScope's offset heat
// map of the agents' cpu.offsets, one column per second of [from, to), and with `range` the
// flame graph of those seconds' stacks. What `trailmap subsecond` without a FILE runs (and what
// trailmap-query can serve), so their documents agree.
#pragma once

#include <string>

#include "core/status.h"
#include "query/fetch/view_request.h"
#include "query/run/view_document.h"

namespace trailmap {

struct SubsecondFleetRequest {
  ViewRequest query{.metric = "cpu.offsets", .from = "-2m"};  // hosts and where filter the hosts
  int rows = 50;
  // "A..B" seconds from `from`: the flame graph of whole seconds floor(A) .. ceil(B) (stacks are
  // counted per second; the subtitle says which seconds).
  std::string range;
  std::string stacks = "cpu.stacks";
  std::string format;  // text | svg | png | json; with range svg | folded | json. "" = text / svg
};

// InvalidArgument for bad parameters (naming the flag) before any shard is asked, and for a
// range of more than kMaxSubsecondColumns seconds.
Result<ViewDocument> RunSubsecondFleetView(const SubsecondFleetRequest& request,
                                           const QueryContext& context);

}  // namespace trailmap
