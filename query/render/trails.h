// The renderings of a TrailsView: a staggered waterfall of frequency trails as SVG or PNG, and
// JSON (docs/json.md, "trails"). Pure functions from the view to bytes.
//
// The waterfall: trail 0 (the first in sort order) is at the top and at the back; each next trail
// sits `step` pixels lower and is drawn over the ones before it. A trail is `height` pixels tall,
// so with overlap F each baseline is height × (1 - F) below the previous one. Points run left to
// right over the value range; a line run is a polyline at density × height above the baseline,
// a rug tick a short vertical mark standing on it. Host names sit at the left of their baselines,
// every k-th one when they would not fit one per baseline.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "query/views/trails.h"

namespace trailmap {

// Legible at any fleet size. Drawn 2 px apart, 1,000 trails were a grey wall: every
// line touched the next, and no trail, mode or outlier could be told apart. Four pixels apart a
// trail's 1 px line has three rows of background to each neighbour where their heights agree, the
// spacing of the seed's waterfall of 200 servers; a mode or outlier that stands out still rises
// over the trails behind it, which is what the waterfall is for. So a picture draws the first
// TrailsThatFit trails in sort order (the top of the waterfall: by CoV, the least regular hosts)
// and its subtitle says how many were left out and how to draw them (--limit, --height).
inline constexpr int kDefaultTrailsHeight = 900;
inline constexpr int kMinTrailStep = 4;

struct TrailsStyle {
  bool fill = false;    // fill under the line
  bool invert = false;  // light trails on black
  bool border = false;  // a dark outline around each trail, so overlapping fills stay apart
  // Heights: true draws √density (a rootogram, after Tukey), false the density itself. A cache-hit
  // spike is commonly 25 times the peak of a disk band beside it: linear, the band stands at 4% of
  // the trail's height and looks flat; as a root it stands at 20%. The line/rug split does not
  // change (it is a threshold on the density itself).
  bool root = true;
  // Share of a trail's height that the next trail overlaps, in [0, 0.95]; < 0 = automatic
  // (0 for a single trail, 0.85 otherwise).
  double overlap = -1;
  int plot_width = 1024;  // pixels for the value range
  // Pixels for the waterfall's baselines: trails share it, kMinTrailStep to 24 px apart. More
  // trails than fit (TrailsThatFit) make the picture taller.
  int plot_height = kDefaultTrailsHeight;
  // Pixels between baselines when `overlap` leaves it free: plot_height / trails, in
  // [kMinTrailStep, 24].
  int step = 0;
};

std::string RenderTrailsSvg(const TrailsView& view, const TrailsStyle& style = {});
Result<std::string> RenderTrailsPng(const TrailsView& view, const TrailsStyle& style = {});
std::string RenderTrailsJson(const TrailsView& view);
// The same document to `emit`, part by part, each as soon as it is made (on the cores), so
// writing it out overlaps making the rest and each part's memory is reused: the CLI's output of
// 1,000 trails (14 MB).
void WriteTrailsJson(const TrailsView& view, const std::function<void(std::string_view)>& emit);

// How many trails `style`'s plot height holds at kMinTrailStep px apart (at least 1).
size_t TrailsThatFit(const TrailsStyle& style);

// "disk.latency frequency trails by host" and the subtitle both pictures share.
std::string TrailsTitle(const TrailsView& view);
std::string TrailsSubtitle(const TrailsView& view);

}  // namespace trailmap
