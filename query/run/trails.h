// `trailmap trails`: one frequency trail per host (or field value), staggered into a waterfall
// sorted by a statistic, as SVG, PNG or JSON (query/views/trails.h, query/render/trails.h).
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

struct TrailsRequest {
  ViewRequest query;           // --by defaults to host here
  std::string range;          // "0..20ms"; "" = automatic (0 to the p99 of everything, rounded up)
  std::string sort = "cov";   // cov | p99 | p50 | max | bimodality | name
  size_t limit = 0;           // 0 = every trail in JSON, the trails that fit in a picture
  int height = 900;           // pixels for a picture's waterfall: how many trails fit
  bool fill = false;
  bool invert = false;
  bool border = false;
  bool linear = false;        // heights are the density, not its root
  double overlap = -1;        // < 0 = automatic
  std::string threshold = "0.2%";  // of each trail's peak density
  std::string bandwidth = "auto";  // auto | 0 | a value with a unit
  size_t points = 2048;
  std::string format;  // "" = svg, or png/json when -o ends in .png/.json
};

Result<ViewDocument> RunTrailsView(const TrailsRequest& request, const QueryContext& context);

}  // namespace trailmap
