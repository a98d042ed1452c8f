// `trailmap flame`: a flame graph of folded stacks, from a local file (--folded FILE, "-" for
// standard input, e.g. from `trailmap collapse`) or, without --folded, from the fleet: every
// aggregator merges the stack samples of a `stacks` metric (default cpu.stacks) over --from/--to,
// --hosts and --where and answers with its merged folded stacks, which are merged again here.
// Output: an interactive SVG (default), the d3-flame-graph JSON tree, or the merged folded stacks.
//
// Differential (query/views/flame.h BuildDiffFlameTree): widths from the target, red/blue by the change
// against a BASELINE — a local file (--baseline-folded) or, from the fleet,
// --baseline-from/--baseline-to/--baseline-where (any of them not given is the target's), fetched
// the same way. Both paths come out as the folded text a --folded file holds and feed one
// renderer; `--format folded` then writes difffolded.pl's "stack baseline target".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/folded.h"

#include "core/status.h"
#include "query/fetch/view_request.h"
#include "query/run/view_document.h"

namespace trailmap {

// Where fleet stacks come from (when --folded is not given).
struct FlameFleetRequest {
  // What every view shares (metric, range, hosts, where, by, aggregators, timeout, limits); `by`
  // gives each value a first frame. The metric is the stacks metric, or with `region` the
  // latency or size metric whose events are selected.
  ViewRequest view{.metric = "cpu.stacks"};
  std::string baseline_from;     // "" = the target's
  std::string baseline_to;
  std::string baseline_where;
  // Region -> code (query/run/region.h): "FROM..TO,LOW..HIGH" selects the events of `metric`
  // (then a latency or size metric, the heat map's) there; the stacks, of `stacks`, are those of
  // the host-seconds holding them, each weighted by how many it holds; `hosts` and `where` filter
  // the selected events. `region_differential` compares them with the same hosts' other seconds
  // of [from, to).
  std::string region;
  std::string stacks = "cpu.stacks";
  bool region_differential = false;
  bool has_baseline() const {
    return !baseline_from.empty() || !baseline_to.empty() || !baseline_where.empty();
  }
};

// The fleet's merged stacks for the target and, when asked for, the baseline.
struct FleetStacks {
  FoldedStacks target;
  std::optional<FoldedStacks> baseline;
  std::vector<std::string> missing;  // shards that did not answer: "endpoint: reason"
  // With a region: what it selected (events, host-seconds, and the events per host).
  uint64_t region_events = 0;
  uint64_t region_host_seconds = 0;
  std::vector<std::pair<std::string, uint64_t>> region_hosts;  // most events first
};

// Asks every aggregator for the target (and baseline) stacks and merges the answers.
// InvalidArgument for bad flags, Unavailable when no shard answered.
Result<FleetStacks> FetchFleetStacks(const FlameFleetRequest& flags, const QueryContext& context);

struct FlameRequest {
  std::string folded;            // --folded FILE|-; "" = query the fleet
  FlameFleetRequest fleet;  // without `folded`: the fleet's stacks
  std::string format = "svg";    // svg | json | folded
  std::string palette = "hot";   // hot | mem | io | java | js | self
  std::string title;             // "" = "Flame Graph" / "Icicle Graph"
  bool inverted = false;         // icicle graph
  double min_width = 0.1;        // pixels
  int width = 1200;              // pixels
  std::string count_name = "samples";
  std::string baseline_folded;   // --baseline-folded FILE: a differential graph against it
  bool no_normalize = false;     // --no-normalize: compare raw counts, not shares
};

// `in` is read when `folded` or `baseline_folded` is "-". The notes say what was ignored.
Result<ViewDocument> RunFlameView(const FlameRequest& request, const QueryContext& context,
                                  std::istream& in);

}  // namespace trailmap
