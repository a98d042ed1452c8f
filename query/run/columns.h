// `trailmap columns`: sorted server columns (query/views/columns.h) of a metric over a time range,
// as ANSI, SVG, JSON or PNG.
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

struct ColumnsRequest {
  ViewRequest query;  // --by is refused: the columns are always per host
  uint32_t rows = 50;
  std::string ymax;  // "" = automatic; "20ms", "4KiB", or a number in the base unit
  std::string clip;  // "" = none; "0.1%"
  std::string coloring = "rank";
  std::string shading = "column";  // column | global
  std::string sort = "cov";
  bool reverse = false;
  size_t limit = 0;    // 0 = every host (in a terminal: as many as fit)
  std::string format;  // "" = ansi, or svg/json/png when -o ends in .svg/.json/.png
};

// The columns view's parameters (query/run/options.h): a new option is a member above and a row
// here.
inline const OptionTable<ColumnsRequest>& ColumnsParameters() {
  using R = ColumnsRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.Include(ViewRequestParameters(), &R::query);
    t.Choice("sort", &R::sort,
             {"cov", "p50", "p90", "p99", "mean", "max", "count", "bimodality", "name"},
             "Order hosts by cov (stddev / mean), p50, p90, p99, mean, max, count, bimodality "
             "(largest first) or name");
    t.Flag("reverse", &R::reverse, "Smallest first (or Z to A for name)");
    t.Whole("limit", &R::limit, 0, 1'000'000, "Keep the first N hosts after sorting", "100");
    t.Choice("shading", &R::shading, {"column", "per-column", "global"},
             "column: each column shaded by its own counts; global: all cells together");
    t.Choice("coloring", &R::coloring, {"rank", "linear"},
             "rank: shade by the rank of a cell's count; linear: by count / max");
    t.Whole("rows", &R::rows, 1, 2000, "Rows of the value axis", "100");
    t.Text("ymax", &R::ymax,
           "Top of the value axis, with a unit (20ms, 4KiB); default: the largest value, rounded "
           "up to 1, 2 or 5 x 10^k",
           "20ms");
    t.Text("clip", &R::clip, "Leave the top P% of events above the axis: 0.1%", "0.1%");
    t.Choice("format", &R::format, {"ansi", "svg", "png", "json"},
             "ansi, svg, json (docs/json.md) or png; default ansi, or from -o's extension")
        .Short('f')
        .EmptyIsDefault();
    return t;
  }();
  return table;
}

Result<ViewDocument> RunColumnsView(const ColumnsRequest& request, const QueryContext& context);

}  // namespace trailmap
