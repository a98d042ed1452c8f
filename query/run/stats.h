// `trailmap stats`: a percentile table per host, per field value, or for everything.
//
// The whole view: parameters in, document out (fetch, assemble, render); what the CLI and
// trailmap-query both run.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "query/fetch/view_request.h"
#include "query/run/view_document.h"

namespace trailmap {

struct StatsRequest {
  ViewRequest query;
  std::string format = "table";  // table | json | csv
  std::string sort = "name";     // name | count | mean | min | p50 | p90 | p99 | p99.9 | max
  size_t top = 0;                // 0 = every row
};

Result<ViewDocument> RunStatsView(const StatsRequest& request, const QueryContext& context);

}  // namespace trailmap
