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

Result<ViewDocument> RunLineView(const LineRequest& request, const QueryContext& context);

}  // namespace trailmap
