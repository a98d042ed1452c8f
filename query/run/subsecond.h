// The sub-second map as a whole view (query/views/subsecond.h): FlameScope's offset heat map, one
// column per second, and with `range` the flame graph of a range's stacks. Of the fleet (the
// agents' cpu.offsets in [from, to): what `trailmap subsecond` without a FILE runs and
// trailmap-query serves) or of a perf script file (`trailmap subsecond FILE`), through the same
// views and renderers.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "query/fetch/view_request.h"
#include "query/run/options.h"
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
// The fleet's sub-second map's parameters (query/run/options.h): a new option is a member above
// and a row here. `trailmap subsecond FILE` reads rows, range and format from them too.
inline const OptionTable<SubsecondFleetRequest>& SubsecondParameters() {
  using R = SubsecondFleetRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> view;
    view.Include(ViewRequestParameters(), &R::query);
    view.Find("metric").Optional().Help(
        "The fleet's offsets metric (default cpu.offsets, which agents with --perf record): draw "
        "the fleet's map, not a FILE's");
    view.Find("from").Help("The fleet's map: start (-2m, unix seconds, RFC 3339)");
    view.Find("to").Help("The fleet's map: end, exclusive");
    view.Find("hosts").Help("The fleet's map: only these hosts: web-1,web-2");
    view.Find("where").Help(
        "The fleet's map: only hosts that pass a predicate of host and labels, e.g. 'role == "
        "\"web\"' (a test of the value is refused: the values are offsets)");
    view.Find("by").Help("Refused: the map adds up every host it covers (--hosts, --where)");
    OptionTable<R> t;
    t.Append(view);
    t.Text("stacks", &R::stacks, "The fleet's stacks metric for --range (default cpu.stacks)",
           "cpu.stacks");
    t.Whole("rows", &R::rows, 1, 1000, "Rows per second (50: 20 ms each)", "100");
    t.Text("range", &R::range,
           "FROM..TO in seconds from the first column (12.340..13.020): the flame graph of the "
           "samples in that range instead of the map",
           "12.340..13.020");
    t.Choice("format", &R::format, {"text", "svg", "png", "json", "folded"},
             "text, svg, png or json (default text, or as -o ends); with --range: svg (default), "
             "folded or json")
        .Short('f')
        .EmptyIsDefault();
    return t;
  }();
  return table;
}

Result<ViewDocument> RunSubsecondFleetView(const SubsecondFleetRequest& request,
                                           const QueryContext& context);

struct SubsecondFileRequest {
  std::string name;  // the input as the user named it (FILE, or "-"): in messages and subtitles
  int rows = 50;
  std::string range;  // "A..B" seconds from the first column: the flame graph of those samples
  bool include_idle = false;  // keep the idle samples (swapper in an idle function)
  std::string format;  // text | svg | png | json; with range svg | folded | json. "" = text / svg
};

// `perf_script` (the text of `perf script`) drawn. InvalidArgument for input without samples
// (naming `name`) or bad parameters; a note counts the samples without a time left out.
Result<ViewDocument> RunSubsecondFileView(const SubsecondFileRequest& request,
                                          std::string_view perf_script);

}  // namespace trailmap
