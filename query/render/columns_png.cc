// RenderColumnsPng (query/render/columns.h): the columns view as a PNG, drawn on a raster Canvas
// (query/draw/raster.h) with the same layout as the SVG: title, plot, host names read upwards under
// the columns (every n-th when they do not fit), the shade ramp.
#include <algorithm>

#include "core/units.h"
#include "query/draw/axis.h"
#include "query/draw/palette.h"
#include "query/draw/raster.h"
#include "query/draw/view_text.h"
#include "query/render/columns.h"
#include "query/render/heatmap_text.h"
#include "query/render/shades.h"

namespace trailmap {
namespace {

constexpr int kLeft = kColumnsMargins.left;  // room for value labels
constexpr int kTop = kColumnsMargins.top;
constexpr Rgb kInk{34, 34, 34};
constexpr Rgb kGrey{85, 85, 85};
constexpr Rgb kFrame{153, 153, 153};
constexpr Rgb kWarn{160, 48, 0};

// Draws `text` reading upwards in kSmallFont (as the SVG's 11 px names), its start at the bottom:
// the glyphs are drawn black on a white strip whose darkness is then the coverage of `color`,
// blended in turned 90° counter-clockwise, so the name's first letter sits at y_top + width
// and its last at y_top. x is the left edge of the turned text (the top of its letters).
void UpwardText(Canvas* canvas, int x, int y_top, std::string_view text, Rgb color) {
  const int w = Canvas::TextWidth(text, kSmallFont);
  const int ascent = FontAscent(kSmallFont);
  const int h = ascent + FontDescent(kSmallFont);
  constexpr Rgb kPaper{255, 255, 255};
  Canvas strip(w, h, kPaper);
  strip.Text(0, ascent, text, Rgb{0, 0, 0}, TextAlign::kLeft, kSmallFont);
  for (int sy = 0; sy < h; ++sy) {
    for (int sx = 0; sx < w; ++sx) {
      // (sx, sy) turns to (x + sy, y_top + w - 1 - sx): reading bottom to top.
      canvas->Blend(x + sy, y_top + w - 1 - sx, color, 255 - strip.At(sx, sy).r);
    }
  }
}

}  // namespace

Result<std::string> RenderColumnsPng(const ColumnsView& view, const ColumnsSvgOptions& options) {
  const HeatmapView& grid = view.grid;
  const ColumnsLayout layout = LayoutColumns(view, options);
  const GridLayout& l = layout.grid;
  const int cell_w = l.cell_w, cell_h = l.cell_h, plot_w = l.plot_w, plot_h = l.plot_h;
  const int bottom = l.bottom();
  const uint32_t every = layout.label_every;
  const int legend_y = layout.legend_y;
  const int width = layout.width;
  const int height = layout.height;

  Canvas canvas(width, height);
  canvas.Text(kLeft, 24, ColumnsTitle(view), kInk, TextAlign::kLeft, kTitleFont);
  canvas.Text(kLeft, 44, ColumnsSubtitle(view), kGrey);
  if (const std::string not_drawn = HeatmapNotDrawn(grid); !not_drawn.empty()) {
    canvas.Text(kLeft, 62, not_drawn, kWarn);
  }

  for (uint32_t c = 0; c < grid.columns; ++c) {
    const int x = kLeft + static_cast<int>(c) * cell_w;
    for (uint32_t r = 0; r < grid.rows; ++r) {
      const size_t i = grid.Index(r, c);
      if (grid.counts[i] == 0) continue;
      canvas.FillRect(x, bottom - static_cast<int>(r + 1) * cell_h, cell_w, cell_h,
                      ShadeColor(grid.levels[i]));
    }
  }
  canvas.StrokeRect(kLeft - 1, kTop - 1, plot_w + 2, plot_h + 2, kFrame);

  const double span = static_cast<double>(grid.ymax - grid.ymin);
  for (double v : ValueTicks(span, std::max(2, std::min(8, plot_h / 50)), view.unit)) {
    const int y = bottom - static_cast<int>(v / span * plot_h + 0.5);
    canvas.Line(kLeft - 5, y, kLeft - 1, y, kGrey);
    canvas.Text(kLeft - 8, y + 4, FormatQuantity(static_cast<double>(grid.ymin) + v, view.unit),
                kInk, TextAlign::kRight);
  }

  for (uint32_t c = 0; c < grid.columns; c += every) {
    const int x = kLeft + static_cast<int>(c) * cell_w + cell_w / 2;
    canvas.Line(x, bottom + 1, x, bottom + 3, kGrey);
    UpwardText(&canvas, x - FontAscent(kSmallFont) + 3, bottom + 6, ColumnLabel(view.hosts[c].host),
               kInk);
  }
  canvas.Text(kLeft + plot_w, layout.caption_y, ColumnsCaption(view, every), kGrey,
              TextAlign::kRight);

  canvas.Text(kLeft, legend_y + 11, "fewer", kGrey);
  const int ramp_x = kLeft + 40;
  for (int level = 1; level < kShadeLevels; ++level) {
    canvas.FillRect(ramp_x + (level - 1) * 8, legend_y, 8, 14, ShadeColor(level));
  }
  canvas.Text(ramp_x + (kShadeLevels - 1) * 8 + 6, legend_y + 11,
              "more  (" + ShadingLegend(view) + ")", kGrey);
  if (!view.missing_shards.empty()) {
    std::string missing = "partial: shards missing: ";
    for (size_t i = 0; i < view.missing_shards.size(); ++i) {
      missing += (i > 0 ? "; " : "") + view.missing_shards[i];
    }
    canvas.Text(kLeft, legend_y + 34, missing, Rgb{176, 0, 0});
  }
  return canvas.EncodePng();
}

}  // namespace trailmap
