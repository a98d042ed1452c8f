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
