// `trailmap line`: a line or area chart of a metric over time, one line per group (host or field
// value) — made for the scalars (cpu.usage, mem.rss, net.rx.bytes) and fine for any metric's
// per-column avg/max/min/sum. SVG, PNG, JSON or ANSI sparklines (query/views/line.h,
// query/render/line.h).
//
// The whole view: parameters in, document out (fetch, assemble, render); what the CLI and
// trailmap-query both run.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "query/fetch/view_request.h"
#include "query/run/options.h"
#include "query/run/view_document.h"

namespace trailmap {

struct LineRequest {
  ViewRequest query;
  std::string stat = "avg";  // avg | max | min | sum
  size_t top = 10;           // lines of their own, the rest "other"; 0 = all
  bool area = false;
  bool stacked = false;
  uint32_t step = 0;   // seconds a point; 0 = the range over at most 300 points (RollupStep)
  std::string format;  // "" = from -o's extension (.svg .png .json), else ansi
};

// The line view's parameters (query/run/options.h): a new option is a member above and a row
// here.
inline const OptionTable<LineRequest>& LineParameters() {
  using R = LineRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.Include(ViewRequestParameters(), &R::query);
    t.Choice("stat", &R::stat, {"avg", "max", "min", "sum"},
             "What each point shows of its group's samples in its time step: avg, max, min or sum "
             "(sum over hosts = the fleet's total)");
    t.Whole("top", &R::top, 0, 1'000'000,
            "Lines of their own (largest mean first); the other groups are merged into one grey "
            "line \"other\"; 0 = every group",
            "5");
    t.Flag("area", &R::area, "Fill under each line");
    t.Flag("stacked", &R::stacked, "Stack the lines as areas (parts of a total, e.g. --by mode)");
    t.Whole("step", &R::step, 0, UINT32_MAX,
            "Seconds a point (default: the range over at most 300 points, in a step the stored "
            "rollups serve exactly: 1, 2, 5, 10, 20, 30 s, 1, 2, 5, 10, 20, 30 min, 1, 2, 3, 6, "
            "12 h or whole days, starting on a multiple of that rollup)",
            "10");
    t.Choice("format", &R::format, {"ansi", "svg", "png", "json"},
             "svg, png, json or ansi; default from -o's extension, else ansi sparklines")
        .Short('f')
        .EmptyIsDefault();
    return t;
  }();
  return table;
}

Result<ViewDocument> RunLineView(const LineRequest& request, const QueryContext& context);

}  // namespace trailmap
