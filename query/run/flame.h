// `trailmap flame`: a flame graph of folded stacks, from a local file (--folded FILE, "-" for
// standard input, e.g. from `trailmap collapse`) or, without --folded, from the fleet: every
// aggregator merges the stack samples of a `stacks` metric (default cpu.stacks) over --from/--to,
// --hosts and --where and answers with its merged folded stacks, which are merged again here.
// Output: an interactive SVG (default), the d3-flame-graph JSON tree, or the merged folded stacks.
//
// Differential (query/views/flame.h BuildDiffFlameTree): widths from the target, red/blue by the
// change against a BASELINE — a local file (--baseline-folded) or, from the fleet,
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
#include "query/run/options.h"
#include "query/run/view_document.h"

namespace trailmap {

// Where fleet stacks come from (when --folded is not given).
struct FlameFleetRequest {
  // What every view shares (metric, range, hosts, where, by, aggregators, timeout, limits); `by`
  // gives each value a first frame. The metric is the stacks metric, or with `region` the
  // latency or size metric whose events are selected.
  ViewRequest view{.metric = "cpu.stacks"};
  std::string baseline_from;  // "" = the target's
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
// The fleet's stacks parameters (query/run/options.h), the CLI's "Fleet" group: a new option is a
// member above and a row here.
inline const OptionTable<FlameFleetRequest>& FlameFleetParameters() {
  using R = FlameFleetRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> view;
    view.Include(ViewRequestParameters(), &R::view);
    view.Find("metric").Optional().Help("Stacks metric to draw");
    view.Find("from").Help(
        "Start: -10m, -1h, now, unix seconds or RFC 3339 (2026-11-22T16:00:00Z)");
    view.Find("where").Help(
        "Only stacks whose host, labels or fields pass, evaluated in the aggregators: 'host =~ "
        "\"web-1[0-9]\" and execname == \"nginx\"' (docs/predicates.md)");
    view.Find("by").Help(
        "Decompose by host, a label or a field (execname, pid): each value becomes a first "
        "frame, so the groups stand side by side");
    OptionTable<R> t;
    for (const char* name : {"metric", "from", "to", "hosts", "where", "by"}) {
      for (const OptionRow<R>& row : view.rows()) {
        if (row.spec.name == name) t.Append(row);
      }
    }
    t.Text("baseline-from", &R::baseline_from,
           "Differential: the baseline starts here (default: --from)", "-1h");
    t.Text("baseline-to", &R::baseline_to, "Differential: the baseline ends here (default: --to)",
           "-55m");
    t.Text("baseline-where", &R::baseline_where,
           "Differential: the baseline's predicate (default: --where), e.g. the hosts that are "
           "not slow",
           "not (host =~ \"db-(3|7)\")");
    t.Text("region", &R::region,
           "Region -> code: FROM..TO,LOW..HIGH selects the events of --metric (then a latency or "
           "size metric) in those seconds and that value band; the graph is of the stacks of the "
           "host-seconds holding them, each weighted by how many it holds "
           "(docs/region-flame.md)",
           "-5m..-4m,50ms..200ms");
    t.Text("stacks", &R::stacks, "With --region: the stacks metric to draw", "cpu.stacks");
    t.Flag("differential", &R::region_differential,
           "With --region: red/blue against the same hosts' other seconds of --from..--to");
    // The shards, the deadline and the budget, as every query command takes them.
    for (const OptionRow<R>& row : view.rows()) {
      if (row.spec.front == OptionFront::kCli || row.spec.name == "timeout" ||
          row.spec.name.starts_with("max-")) {
        t.Append(row);
      }
    }
    for (const OptionRow<R>& row : t.rows())
      t.Find(row.spec.name).Group("Fleet (without --folded)");
    return t;
  }();
  return table;
}

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
  std::string folded;           // --folded FILE|-; "" = query the fleet
  FlameFleetRequest fleet;      // without `folded`: the fleet's stacks
  std::string format = "svg";   // svg | json | folded
  std::string palette = "hot";  // hot | mem | io | java | js | self
  std::string title;            // "" = "Flame Graph" / "Icicle Graph"
  bool inverted = false;        // icicle graph
  double min_width = 0.1;       // pixels
  int width = 1200;             // pixels
  std::string count_name = "samples";
  std::string baseline_folded;  // --baseline-folded FILE: a differential graph against it
  bool no_normalize = false;    // --no-normalize: compare raw counts, not shares
};

// `in` is read when `folded` or `baseline_folded` is "-". The notes say what was ignored.
// The flame graph's parameters (query/run/options.h): the fleet's, then the drawing's. The input
// files (--folded, --baseline-folded) are the CLI's own (cli/flame_command.cc): the API reads no
// files.
inline const OptionTable<FlameRequest>& FlameParameters() {
  using R = FlameRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.Include(FlameFleetParameters(), &R::fleet);
    t.Choice("format", &R::format, {"svg", "json", "folded"},
             "svg, json (d3-flame-graph) or folded")
        .Short('f');
    t.Choice("palette", &R::palette, {"hot", "mem", "io", "java", "js", "self"},
             "hot, mem, io, java / js (by the _[j] _[i] _[k] annotations), self (self time)");
    t.Text("title", &R::title, "Title (default Flame Graph / Icicle Graph)", "CPU");
    t.Flag("inverted", &R::inverted, "Icicle graph: root at the top");
    t.Number("minwidth", &R::min_width, 0, std::numeric_limits<double>::infinity(),
             "Omit frames narrower than this many pixels", "0.5");
    t.Whole("width", &R::width, 100, 100000, "Image width in pixels", "1600");
    t.Text("countname", &R::count_name, "What a count is, in tooltips", "samples");
    t.Flag("no-normalize", &R::no_normalize,
           "With a baseline (--baseline-folded or --baseline-from/-to/-where): compare raw counts "
           "instead of scaling the baseline to the target's total");
    return t;
  }();
  return table;
}

Result<ViewDocument> RunFlameView(const FlameRequest& request, const QueryContext& context,
                                  std::istream& in);

}  // namespace trailmap
