#include "query/render/heatmap_png.h"

#include <algorithm>
#include <cmath>

#include "core/timespec.h"
#include "core/units.h"
#include "query/draw/axis.h"
#include "query/draw/palette.h"
#include "query/draw/view_text.h"
#include "query/render/heatmap_text.h"
#include "query/render/shades.h"

namespace trailmap {
namespace {

constexpr int kPanel = kHeatmapMargins.panel;  // side panel width, with its gap
constexpr int kTop = kHeatmapMargins.top;

constexpr Rgb kText{34, 34, 34};
constexpr Rgb kMuted{90, 90, 90};
constexpr Rgb kWarn{160, 48, 0};
constexpr Rgb kFrame{153, 153, 153};
constexpr Rgb kTick{85, 85, 85};
constexpr Rgb kPanelFill{246, 246, 246};

std::string Shorten(const std::string& s, size_t max_chars) {
  return s.size() <= max_chars ? s : s.substr(0, max_chars - 3) + "...";
}

}  // namespace

Canvas DrawHeatmap(const HeatmapView& view, const PngOptions& options) {
  const GridLayout l = LayoutHeatmap(view, options);
  const int cell_w = l.cell_w, cell_h = l.cell_h, plot_w = l.plot_w, plot_h = l.plot_h;
  const int panel = options.side_panel ? kPanel : 0;
  const int left = l.left, width = l.width, height = l.height;
  const int bottom = kTop + plot_h;
  Canvas canvas(width, height, Rgb{});

  // Title: the first line twice the size.
  canvas.Text(left, 24, HeatmapTitle(view), kText, TextAlign::kLeft, kTitleFont);
  canvas.Text(left, 44, HeatmapSubtitle(view), kMuted);
  if (const std::string not_drawn = HeatmapNotDrawn(view); !not_drawn.empty()) {
    canvas.Text(left, 60, not_drawn, kWarn);
  }

  // Cells.
  for (uint32_t r = 0; r < view.rows; ++r) {
    if (options.stop && options.stop()) return canvas;  // RenderHeatmapPng fails
    const int y = bottom - static_cast<int>(r + 1) * cell_h;
    for (uint32_t c = 0; c < view.columns; ++c) {
      const size_t i = view.Index(r, c);
      if (view.counts[i] == 0) continue;
      canvas.FillRect(left + static_cast<int>(c) * cell_w, y, cell_w, cell_h,
                      CellColor(view, i));
    }
  }
  canvas.StrokeRect(left - 1, kTop - 1, plot_w + 2, plot_h + 2, kFrame);

  // Percentile overlays: a dark line a percentile, joined column to column.
  for (size_t p = 0; p < view.overlay.size(); ++p) {
    const auto& line = view.overlay[p];
    const Rgb color = OverlayColor(p);
    int px = -1, py = -1;
    for (uint32_t c = 0; c < view.columns && c < line.values.size(); ++c) {
      const double y_frac = ValueFraction(view, static_cast<double>(line.values[c]));
      if (line.values[c] == 0 || y_frac < 0 || y_frac > 1) {
        px = -1;
        continue;
      }
      const int x = left + static_cast<int>(c) * cell_w + cell_w / 2;
      const int y = bottom - static_cast<int>(std::lround(y_frac * plot_h));
      if (px >= 0) {
        canvas.Line(px, py, x, y, color, 2);
      } else {
        canvas.FillRect(x - 1, y - 1, 2, 2, color);
      }
      px = x;
      py = y;
    }
  }

  // Value axis: round ticks in the metric's unit.
  for (const ValueTick& tick : ValueAxisTicks(view, std::max(2, std::min(8, plot_h / 50)))) {
    const int y = bottom - static_cast<int>(std::lround(tick.fraction * plot_h));
    canvas.FillRect(left - 5, y, 5, 1, kTick);
    canvas.Text(left - 8, y + 4, tick.label, kText, TextAlign::kRight);
  }

  // Time axis: clock-aligned UTC labels at least ~90 px apart.
  const double px_per_second = static_cast<double>(cell_w) / view.step;
  const int64_t interval = TimeTickInterval(90.0 / px_per_second);
  for (int64_t t : TimeTicks(view.from, view.to, interval)) {
    const int x = left + static_cast<int>(std::lround(static_cast<double>(t - view.from) * px_per_second));
    canvas.FillRect(x, bottom + 1, 1, 5, kTick);
    canvas.Text(x, bottom + 18, TimeTickLabel(t, interval), kText, TextAlign::kCenter);
  }
  canvas.Text(left + plot_w, bottom + 34,
              "time (UTC), " + std::to_string(view.step) + " s per column", kMuted,
              TextAlign::kRight);

  // Side panel: events per second of each row, where rows are tall enough to label (every k-th
  // row otherwise), and of the visible range.
  if (options.side_panel) {
    canvas.FillRect(0, kTop, panel - 10, plot_h, kPanelFill);
    canvas.Text(4, kTop - 6, RateHeading(view.kind), kMuted, TextAlign::kLeft, kSmallFont);
    const std::vector<double> rates = RowEventsPerSecond(view);
    const int every = std::max(1, (12 + cell_h - 1) / cell_h);
    for (uint32_t r = 0; r < view.rows; r += every) {
      const int y_mid = bottom - static_cast<int>(r) * cell_h - cell_h / 2;
      canvas.Text(panel - 14, y_mid + 4, FormatRate(rates[r]), kText, TextAlign::kRight,
                  kSmallFont);
    }
    canvas.Text(4, bottom + 18, "range avg:", kMuted, TextAlign::kLeft, kSmallFont);
    canvas.Text(4, bottom + 32, FormatRate(RangeEventsPerSecond(view)) + RateSuffix(view.kind),
                kText, TextAlign::kLeft, kSmallFont);
  }

  // Legend.
  const int ly = bottom + 50;
  int next_y = ly + 24;  // the line under the legend (overlays, then missing shards)
  if (view.groups.empty() || view.breakdown.empty()) {
    canvas.Text(left, ly + 11, "fewer", kMuted);
    const int ramp_x = left + 40;
    for (int level = 1; level < kShadeLevels; ++level) {
      canvas.FillRect(ramp_x + (level - 1) * 8, ly, 8, 14, PaletteColor(view.palette, level));
    }
    // The coloring's explanation follows the ramp, or goes under it when the image is narrow.
    const int more_x = ramp_x + (kShadeLevels - 1) * 8 + 6;
    const std::string explained = "(" + ColoringLegend(view) + ")";
    if (more_x + Canvas::TextWidth("more  " + explained) <= width - 4) {
      canvas.Text(more_x, ly + 11, "more  " + explained, kMuted);
    } else {
      canvas.Text(more_x, ly + 11, "more", kMuted);
      canvas.Text(left, ly + 29, explained, kMuted);
      next_y += 16;
    }
  } else {
    int x = left;
    const std::vector<LegendEntry> entries = GroupLegend(view, 10);
    for (size_t k = 0; k < entries.size(); ++k) {
      const LegendEntry& e = entries[k];
      const std::string name = Shorten(e.name, 24);
      // Stop at the right edge, saying how many groups the legend leaves out.
      const size_t groups_left = view.groups.size() - k;
      const std::string more = "+" + std::to_string(groups_left) + " more";
      if (e.name[0] != '+' &&
          x + 28 + Canvas::TextWidth(name) + Canvas::TextWidth(more) > width - 4) {
        canvas.Text(x, ly + 10, more, kMuted);
        break;
      }
      if (e.name[0] == '+') {
        canvas.Text(x, ly + 10, more, kMuted);
        break;
      }
      canvas.FillRect(x, ly, 12, 12, e.color);
      canvas.Text(x + 16, ly + 10, name, kText);
      x += 28 + Canvas::TextWidth(name);
    }
  }
  if (!view.overlay.empty()) {
    int x = left;
    for (size_t p = 0; p < view.overlay.size(); ++p) {
      canvas.FillRect(x, next_y, 16, 2, OverlayColor(p));
      canvas.Text(x + 20, next_y + 5, view.overlay[p].name, kText);
      x += 32 + Canvas::TextWidth(view.overlay[p].name);
    }
  }
  if (!view.missing_shards.empty()) {
    canvas.Text(left, next_y + 18, "partial: " + MissingShardsText(view), Rgb{176, 0, 0});
  }
  return canvas;
}

Result<std::string> RenderHeatmapPng(const HeatmapView& view, const PngOptions& options) {
  Canvas canvas = DrawHeatmap(view, options);
  if (options.stop && options.stop()) return Status::ResourceExhausted("drawing stopped");
  return canvas.EncodePng();
}

}  // namespace trailmap
