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
#include "query/run/options.h"
#include "query/run/view_document.h"

namespace trailmap {

struct TrailsRequest {
  ViewRequest query;         // --by defaults to host here
  std::string range;         // "0..20ms"; "" = automatic (0 to the p99 of everything, rounded up)
  std::string sort = "cov";  // cov | p99 | p50 | max | bimodality | name
  size_t limit = 0;          // 0 = every trail in JSON, the trails that fit in a picture
  int height = 900;          // pixels for a picture's waterfall: how many trails fit
  bool fill = false;
  bool invert = false;
  bool border = false;
  bool linear = false;             // heights are the density, not its root
  double overlap = -1;             // < 0 = automatic
  std::string threshold = "0.2%";  // of each trail's peak density
  std::string bandwidth = "auto";  // auto | 0 | a value with a unit
  size_t points = 2048;
  std::string format;  // "" = svg, or png/json when -o ends in .png/.json
};

// The trails view's parameters (query/run/options.h): a new option is a member above and a row
// here.
inline const OptionTable<TrailsRequest>& TrailsParameters() {
  using R = TrailsRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.Include(ViewRequestParameters(), &R::query);
    t.Text("range", &R::range,
           "Value range LOW..HIGH with units (0..20ms); default 0 to the p99 of every event, "
           "rounded up to 1, 2 or 5 x 10^k",
           "0..20ms");
    t.Choice("sort", &R::sort, {"cov", "p99", "p50", "median", "max", "bimodality", "name"},
             "Order, top of the waterfall first: cov, p99, p50, max, bimodality (largest first) "
             "or name");
    t.Whole("limit", &R::limit, 0, 1'000'000,
            "Keep the first N trails after sorting (default: SVG and PNG draw the first that fit "
            "--height, 4 px apart; JSON has every trail)",
            "50");
    t.Whole("height", &R::height, 100, 100'000,
            "Pixels for the waterfall of an SVG or PNG; how many trails fit by default", "1200");
    t.Flag("fill", &R::fill, "Fill under each trail's line");
    t.Flag("invert", &R::invert, "Light trails on black");
    t.Flag("border", &R::border,
           "Outline each trail and hide what is behind it, so overlapping trails stay apart");
    t.Flag("linear", &R::linear,
           "Heights are the density itself (default: its square root, so a band beside a tall "
           "spike stays visible)");
    t.Number("overlap", &R::overlap, 0, 0.95,
             "Share of a trail's height the next one overlaps, 0..0.95 (default 0.85)", "0.5")
        .NegativeIsAutomatic();
    t.Text("threshold", &R::threshold,
           "Density below this share of a trail's peak is drawn as rug ticks", "1%");
    t.Text("bandwidth", &R::bandwidth,
           "Kernel standard deviation with a unit (50us), 0 for none, or auto (Silverman's rule "
           "per trail)",
           "50us");
    t.Whole("points", &R::points, 16, 65536, "Points across the value range", "1024");
    t.Choice("format", &R::format, {"svg", "png", "json"},
             "svg, png or json (docs/json.md); default svg, or png / json when -o ends in .png / "
             ".json")
        .Short('f')
        .EmptyIsDefault();
    return t;
  }();
  return table;
}

Result<ViewDocument> RunTrailsView(const TrailsRequest& request, const QueryContext& context);

}  // namespace trailmap
