// `trailmap stats`: a percentile table per host, per field value, or for everything.
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

struct StatsRequest {
  ViewRequest query;
  std::string format = "table";  // table | json | csv
  std::string sort = "name";     // name | count | mean | min | p50 | p90 | p99 | p99.9 | max
  size_t top = 0;                // 0 = every row
};

// The stats view's parameters (query/run/options.h): a new option is a member above and a row
// here.
inline const OptionTable<StatsRequest>& StatsParameters() {
  using R = StatsRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.Include(ViewRequestParameters(), &R::query);
    t.Choice("format", &R::format, {"table", "json", "csv"},
             "table (values with units), json or csv (base units)")
        .Short('f');
    t.Choice("sort", &R::sort,
             {"name", "count", "mean", "min", "p50", "p90", "p99", "p99.9", "p999", "max"},
             "Order rows by name, or largest first by count, mean, min, p50, p90, p99, p99.9, max");
    t.Whole("top", &R::top, 0, 1'000'000, "Keep the first N rows after sorting", "20");
    return t;
  }();
  return table;
}

Result<ViewDocument> RunStatsView(const StatsRequest& request, const QueryContext& context);

}  // namespace trailmap
