// `trailmap columns`: sorted server columns (query/views/columns.h) of a metric over a time range, as
// ANSI, SVG, JSON or PNG.
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

Result<ViewDocument> RunColumnsView(const ColumnsRequest& request, const QueryContext& context);

}  // namespace trailmap
