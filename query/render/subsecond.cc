#include "query/render/subsecond.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "query/draw/raster.h"
#include "query/draw/svg_text.h"

namespace trailmap {
namespace {

constexpr Rgb kWhite{255, 255, 255};
constexpr Rgb kMid{0xFF, 0x50, 0x32};
constexpr Rgb kTop{0xE5, 0x09, 0x14};
constexpr Rgb kInk{0x22, 0x22, 0x22};
constexpr Rgb kMuted{0x44, 0x44, 0x44};
constexpr Rgb kFrame{0xBB, 0xBB, 0xBB};

uint8_t Mix(uint8_t a, uint8_t b, double t) {
  return static_cast<uint8_t>(std::lround(a + (b - a) * t));
}
Rgb MixRgb(Rgb a, Rgb b, double t) {
  return {Mix(a.r, b.r, t), Mix(a.g, b.g, t), Mix(a.b, b.b, t)};
}

// Where things go: cells are whole pixels, between 2 and 12 wide (FlameScope: 6 to 10) so a
// long profile still fits, 8 high (50 rows: 400 px).
struct Layout {
  int left = 64, top = 72, cell_w = 10, cell_h = 8, plot_w = 0, plot_h = 0, width = 0, height = 0;
  int label_every = 1;  // seconds between x labels
};

Layout LayOut(const SubsecondView& view, const std::string& subtitle) {
  Layout l;
  const int columns = std::max(view.columns(), 1);
  l.cell_w = std::clamp(1200 / columns, 2, 12);
  l.cell_h = std::max(2, 400 / std::max(view.rows, 1));
  l.plot_w = l.cell_w * columns;
  l.plot_h = l.cell_h * view.rows;
  // Wide enough for the subtitle in the PNG's 6 px font (the SVG's 12 px Helvetica is narrower).
  l.width = std::max({l.left + l.plot_w + 24, 420, l.left + Canvas::TextWidth(subtitle) + 16});
  l.height = l.top + l.plot_h + 40;
  for (int every : {1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600}) {
    l.label_every = every;
    if (every * l.cell_w >= 36) break;
  }
  return l;
}

std::string Subtitle(const SubsecondView& view, const SubsecondDrawOptions& options) {
  std::string s = options.subtitle.empty() ? "" : options.subtitle + ": ";
  s += std::to_string(view.samples) + " samples over " + std::to_string(view.columns()) +
       " s from " + std::to_string(view.start_second) + ", " + std::to_string(view.rows) +
       " rows of " + SvgNumber(1000.0 / view.rows) + " ms; largest cell " +
       std::to_string(view.max_count);
  if (view.idle > 0) s += "; " + std::to_string(view.idle) + " idle samples left out";
  return s;
}

std::string RowLabel(const SubsecondView& view, int row) {
  return SvgNumber(1000.0 * row / view.rows);
}

}  // namespace

Rgb SubsecondColor(uint64_t count, uint64_t max) {
  if (count == 0 || max == 0) return kWhite;
  const double half = max / 2.0;
  const double v = static_cast<double>(count);
  if (v <= half) return MixRgb(kWhite, kMid, v / half);
  return MixRgb(kMid, kTop, (v - half) / (max - half));
}

std::string RenderSubsecondSvg(const SubsecondView& view, const SubsecondDrawOptions& options) {
  const std::string subtitle = Subtitle(view, options);
  const Layout l = LayOut(view, subtitle);
  std::string out = SvgOpen(l.width, l.height);
  out += SvgHeading(l.left, options.title, subtitle, "");
  out += "<rect x=\"" + std::to_string(l.left) + "\" y=\"" + std::to_string(l.top) + "\" width=\"" +
         std::to_string(l.plot_w) + "\" height=\"" + std::to_string(l.plot_h) +
         "\" fill=\"#ffffff\" stroke=\"#bbbbbb\"/>\n";
  for (int c = 0; c < view.columns(); ++c) {
    for (int r = 0; r < view.rows; ++r) {
      const uint64_t n = view.counts[c][r];
      if (n == 0) continue;
      const int x = l.left + c * l.cell_w;
      const int y = l.top + (view.rows - 1 - r) * l.cell_h;
      out += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
             std::to_string(l.cell_w) + "\" height=\"" + std::to_string(l.cell_h) + "\" fill=\"" +
             HexColor(SubsecondColor(n, view.max_count)) + "\"><title>second " + std::to_string(c) +
             ", " + RowLabel(view, r) + "-" + RowLabel(view, r + 1) + " ms: " + std::to_string(n) +
             (n == 1 ? " sample" : " samples") + "</title></rect>\n";
    }
  }
  // Axes: milliseconds every 200 (and 0, 1000) on the left, seconds at the bottom.
  for (int ms = 0; ms <= 1000; ms += 200) {
    const double y = l.top + l.plot_h - l.plot_h * ms / 1000.0;
    out += "<text x=\"" + std::to_string(l.left - 6) + "\" y=\"" + SvgNumber(y + 4) +
           "\" text-anchor=\"end\">" + std::to_string(ms) + "</text>\n";
  }
  out += "<text x=\"12\" y=\"" + std::to_string(l.top - 8) + "\" fill=\"#444444\">ms</text>\n";
  for (int c = 0; c < view.columns(); c += l.label_every) {
    out += "<text x=\"" + SvgNumber(l.left + (c + 0.5) * l.cell_w) + "\" y=\"" +
           std::to_string(l.top + l.plot_h + 16) + "\" text-anchor=\"middle\">" +
           std::to_string(c) + "</text>\n";
  }
  out += "<text x=\"" + std::to_string(l.left) + "\" y=\"" + std::to_string(l.top + l.plot_h + 32) +
         "\" fill=\"#444444\">seconds from " + std::to_string(view.start_second) + "</text>\n";
  out += "</svg>\n";
  return out;
}

Result<std::string> RenderSubsecondPng(const SubsecondView& view,
                                       const SubsecondDrawOptions& options) {
  const std::string subtitle = Subtitle(view, options);
  const Layout l = LayOut(view, subtitle);
  Canvas canvas(l.width, l.height);
  canvas.Text(l.left, 24, options.title, kInk, TextAlign::kLeft, kTitleFont);
  canvas.Text(l.left, 44, subtitle, kMuted);
  for (int c = 0; c < view.columns(); ++c) {
    for (int r = 0; r < view.rows; ++r) {
      const uint64_t n = view.counts[c][r];
      if (n == 0) continue;
      canvas.FillRect(l.left + c * l.cell_w, l.top + (view.rows - 1 - r) * l.cell_h, l.cell_w,
                      l.cell_h, SubsecondColor(n, view.max_count));
    }
  }
  canvas.StrokeRect(l.left - 1, l.top - 1, l.plot_w + 2, l.plot_h + 2, kFrame);
  for (int ms = 0; ms <= 1000; ms += 200) {
    const int y = l.top + l.plot_h - l.plot_h * ms / 1000;
    canvas.Text(l.left - 6, y + 3, std::to_string(ms), kInk, TextAlign::kRight);
  }
  canvas.Text(12, l.top - 8, "ms", kMuted);
  for (int c = 0; c < view.columns(); c += l.label_every) {
    canvas.Text(l.left + c * l.cell_w + l.cell_w / 2, l.top + l.plot_h + 16, std::to_string(c),
                kInk, TextAlign::kCenter);
  }
  canvas.Text(l.left, l.top + l.plot_h + 32, "seconds from " + std::to_string(view.start_second),
              kMuted);
  return canvas.EncodePng();
}

std::string RenderSubsecondJson(const SubsecondView& view) {
  nlohmann::ordered_json j;
  j["view"] = "subsecond";
  j["start_second"] = view.start_second;
  j["rows"] = view.rows;
  j["row_ms"] = 1000.0 / view.rows;
  j["columns"] = view.columns();
  j["max_count"] = view.max_count;
  j["samples"] = view.samples;
  j["idle"] = view.idle;
  j["untimed"] = view.untimed;
  j["counts"] = view.counts;
  return j.dump() + "\n";
}

std::string RenderSubsecondText(const SubsecondView& view) {
  static constexpr std::string_view kShades = " .:-=+*#%@";
  std::string out;
  for (int r = view.rows - 1; r >= 0; --r) {
    std::string label = RowLabel(view, r);
    out += std::string(label.size() < 6 ? 6 - label.size() : 0, ' ') + label + " |";
    for (int c = 0; c < view.columns(); ++c) {
      const uint64_t n = view.counts[c][r];
      // 1 ('.') for the faintest, 9 ('@') for the largest count.
      const size_t shade = n == 0 ? 0 : 1 + static_cast<size_t>(n * 8 / view.max_count);
      out += kShades[shade];
    }
    out += "|\n";
  }
  out += "       " + std::string(static_cast<size_t>(view.columns()) + 2, '-') + "\n";
  out += "ms / seconds from " + std::to_string(view.start_second) + ": " +
         std::to_string(view.samples) + " samples, largest cell " + std::to_string(view.max_count) +
         "\n";
  return out;
}

}  // namespace trailmap
