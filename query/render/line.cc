#include "query/render/line.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/timespec.h"
#include "core/units.h"
#include "query/draw/axis.h"
#include "query/draw/svg_text.h"

namespace trailmap {
namespace {

// A value in the metric's unit; FormatQuantity formats magnitudes, so a negative value gets its
// sign here.
std::string SignedQuantity(double v, const std::string& unit) {
  return v < 0 ? "-" + FormatQuantity(-v, unit) : FormatQuantity(v, unit);
}

constexpr int kLeft = 80, kTop = 64, kBottom = 48, kLegend = 220;
constexpr Rgb kGrey{150, 150, 150}, kAxis{90, 90, 90}, kGrid{230, 230, 230}, kInk{30, 30, 30};

std::string Title(const LineView& view) {
  std::string t = view.metric + " · " + LineStatName(view.stat);
  if (!view.by.empty()) t += " by " + view.by;
  if (view.stacked) t += ", stacked";
  return t;
}

std::string Subtitle(const LineView& view) {
  const int64_t to = view.from + static_cast<int64_t>(view.columns) * view.step;
  std::string s = FormatRfc3339(view.from) + " to " + FormatRfc3339(to) + ", " +
                  std::to_string(view.step) + " s a point, " + std::to_string(view.series.size()) +
                  " line" + (view.series.size() == 1 ? "" : "s");
  if (view.merged > 0) s += " (" + std::to_string(view.merged) + " groups merged into \"other\")";
  return s;
}

// Each line's values as drawn: stacked lines add the ones below; NaN stays NaN unstacked.
std::vector<std::vector<double>> Drawn(const LineView& view) {
  std::vector<std::vector<double>> out;
  std::vector<double> base(view.columns, 0);
  std::vector<bool> any(view.columns, false);  // stacked: some line so far has data in c
  for (const LineSeries& s : view.series) {
    std::vector<double> v = s.values;
    if (view.stacked) {
      // A missing value stacks as 0 on the lines below it; a column no line so far has data in
      // stays a gap.
      for (uint32_t c = 0; c < view.columns; ++c) {
        any[c] = any[c] || !std::isnan(v[c]);
        base[c] += std::isnan(v[c]) ? 0 : v[c];
        v[c] = any[c] ? base[c] : std::nan("");
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

// Runs of columns with data: [begin, end).
std::vector<std::pair<uint32_t, uint32_t>> Runs(const std::vector<double>& v) {
  std::vector<std::pair<uint32_t, uint32_t>> runs;
  for (uint32_t c = 0; c < v.size();) {
    if (std::isnan(v[c])) {
      ++c;
      continue;
    }
    uint32_t e = c;
    while (e < v.size() && !std::isnan(v[e])) ++e;
    runs.emplace_back(c, e);
    c = e;
  }
  return runs;
}

Rgb Tint(Rgb c, double keep) {
  auto mix = [keep](uint8_t v) {
    return static_cast<uint8_t>(std::lround(255 - (255 - v) * keep));
  };
  return Rgb{mix(c.r), mix(c.g), mix(c.b)};
}

std::string Legend(const LineView& view, size_t i) {
  return view.series[i].name + "  " + SignedQuantity(view.series[i].mean, view.unit);
}

}  // namespace

double LineLayout::X(const LineView& view, double column) const {
  const double w = view.columns > 0 ? static_cast<double>(plot_w) / view.columns : plot_w;
  return left + (column + 0.5) * w;
}

double LineLayout::Y(double value) const {
  const double span = top_value - bottom_value;
  const double f = span > 0 ? std::clamp((value - bottom_value) / span, 0.0, 1.0) : 0;
  return top + plot_h - f * plot_h;
}

std::vector<double> LineLayout::Ticks(std::string_view unit) const {
  if (bottom_value >= 0) return ValueTicks(top_value, 5, unit);
  std::vector<double> ticks;
  const long first = std::lround(bottom_value / tick_step),
             last = std::lround(top_value / tick_step);
  for (long k = first; k <= last; ++k) ticks.push_back(static_cast<double>(k) * tick_step);
  return ticks;
}

LineLayout LayoutLine(const LineView& view, const LineStyle& style) {
  LineLayout l;
  l.left = kLeft;
  l.top = kTop;
  l.plot_w = style.plot_width;
  l.plot_h = style.plot_height;
  l.width = kLeft + style.plot_width + kLegend;
  l.height = kTop + style.plot_height + kBottom;
  const double bottom = view.Bottom();
  if (bottom < 0) {
    // Both ends rounded out to whole ticks of one step, so 0 is a tick and the zero line falls on
    // it; about five ticks over the whole span.
    const double top = std::max(view.Top(), 0.0);
    const double step = NiceStep((top - bottom) / 5, view.unit);
    l.tick_step = step;
    l.top_value = std::ceil(top / step - 1e-3) * step;
    l.bottom_value = std::floor(bottom / step + 1e-3) * step;
    if (l.top_value <= 0) l.top_value = step;
    return l;
  }
  // The top of the axis: the data's top rounded up to a whole tick (91% -> 100%).
  const double top = view.Top() > 0 ? view.Top() : 1;
  // Within 0.1% above a tick counts as the tick: stacked percentages that sum to 100.01%.
  const double step = NiceStep(top / 6, view.unit);
  l.top_value = std::ceil(top / step - 1e-3) * step;
  return l;
}

Rgb LineColor(const LineView& view, size_t i) {
  // GroupColor(7) is a grey like "other"'s: lines skip it.
  return view.series[i].other ? kGrey : GroupColor(i < 7 ? i : i + 1);
}

std::string RenderLineSvg(const LineView& view, const LineStyle& style) {
  const LineLayout l = LayoutLine(view, style);
  std::string out = SvgOpen(l.width, l.height);
  out += SvgHeading(l.left, Title(view), Subtitle(view), "");
  // Value axis and grid.
  for (double v : l.Ticks(view.unit)) {
    const std::string y = SvgNumber(l.Y(v));
    out += "<line x1=\"" + SvgNumber(l.left) + "\" y1=\"" + y + "\" x2=\"" +
           SvgNumber(l.left + l.plot_w) + "\" y2=\"" + y + "\" stroke=\"" + HexColor(kGrid) +
           "\"/>\n";
    out += "<text x=\"" + SvgNumber(l.left - 6) + "\" y=\"" + SvgNumber(l.Y(v) + 4) +
           "\" text-anchor=\"end\">" + XmlEscape(SignedQuantity(v, view.unit)) + "</text>\n";
  }
  if (l.bottom_value < 0) {  // the zero line, over the grid and under the data
    const std::string y = SvgNumber(l.Y(0));
    out += "<line x1=\"" + SvgNumber(l.left) + "\" y1=\"" + y + "\" x2=\"" +
           SvgNumber(l.left + l.plot_w) + "\" y2=\"" + y + "\" stroke=\"" + HexColor(kAxis) +
           "\"/>\n";
  }
  // Time axis.
  const int64_t to = view.from + static_cast<int64_t>(view.columns) * view.step;
  const int64_t interval =
      TimeTickInterval(static_cast<double>(to - view.from) * 90.0 / std::max(1, l.plot_w));
  for (int64_t t : TimeTicks(view.from, to, interval)) {
    const double x = l.X(view, static_cast<double>(t - view.from) / view.step - 0.5);
    out += "<line x1=\"" + SvgNumber(x) + "\" y1=\"" + SvgNumber(l.top + l.plot_h) + "\" x2=\"" +
           SvgNumber(x) + "\" y2=\"" + SvgNumber(l.top + l.plot_h + 4) + "\" stroke=\"" +
           HexColor(kAxis) + "\"/>\n";
    out += "<text x=\"" + SvgNumber(x) + "\" y=\"" + SvgNumber(l.top + l.plot_h + 18) +
           "\" text-anchor=\"middle\">" + TimeTickLabel(t, interval) + "</text>\n";
  }
  out += "<text x=\"" + SvgNumber(l.left + l.plot_w / 2.0) + "\" y=\"" +
         SvgNumber(l.top + l.plot_h + 38) +
         "\" text-anchor=\"middle\" fill=\"#666\">time (UTC)</text>\n";
  out += "<rect x=\"" + SvgNumber(l.left) + "\" y=\"" + SvgNumber(l.top) + "\" width=\"" +
         SvgNumber(l.plot_w) + "\" height=\"" + SvgNumber(l.plot_h) + "\" fill=\"none\" stroke=\"" +
         HexColor(kAxis) + "\"/>\n";

  const std::vector<std::vector<double>> drawn = Drawn(view);
  // Areas first (stacked: from the line below), then the lines over them.
  for (size_t i = view.area ? drawn.size() : 0; i-- > 0;) {
    const std::string color = HexColor(LineColor(view, i));
    for (auto [b, e] : Runs(drawn[i])) {
      std::string points;
      for (uint32_t c = b; c < e; ++c)
        points += SvgNumber(l.X(view, c)) + "," + SvgNumber(l.Y(drawn[i][c])) + " ";
      for (uint32_t c = e; c-- > b;) {
        const double below = view.stacked && i > 0 ? drawn[i - 1][c] : 0;
        points += SvgNumber(l.X(view, c)) + "," + SvgNumber(l.Y(below)) + " ";
      }
      points.pop_back();
      out += "<polygon points=\"" + points + "\" fill=\"" + color + "\" fill-opacity=\"" +
             (view.stacked ? "0.75" : "0.25") + "\" stroke=\"none\"/>\n";
    }
  }
  for (size_t i = 0; i < drawn.size(); ++i) {
    const std::string color = HexColor(LineColor(view, i));
    out += "<g stroke=\"" + color + "\" fill=\"none\" stroke-width=\"1.5\"><title>" +
           XmlEscape(view.series[i].name) + "</title>\n";
    for (auto [b, e] : Runs(drawn[i])) {
      std::string points;
      for (uint32_t c = b; c < e; ++c)
        points += SvgNumber(l.X(view, c)) + "," + SvgNumber(l.Y(drawn[i][c])) + " ";
      points.pop_back();
      if (e - b == 1) {
        out += "<circle cx=\"" + SvgNumber(l.X(view, b)) + "\" cy=\"" +
               SvgNumber(l.Y(drawn[i][b])) + "\" r=\"1.5\" fill=\"" + color + "\"/>\n";
      } else {
        out += "<polyline points=\"" + points + "\"/>\n";
      }
    }
    out += "</g>\n";
  }
  // Legend.
  const int lx = l.left + l.plot_w + 16;
  out += "<text x=\"" + std::to_string(lx) + "\" y=\"" + std::to_string(l.top + 4) +
         "\" fill=\"#666\">mean over the range</text>\n";
  for (size_t i = 0; i < view.series.size(); ++i) {
    const int y = l.top + 20 + static_cast<int>(i) * 18;
    out += "<rect x=\"" + std::to_string(lx) + "\" y=\"" + std::to_string(y - 9) +
           "\" width=\"12\" height=\"10\" fill=\"" + HexColor(LineColor(view, i)) + "\"/>\n";
    out += "<text x=\"" + std::to_string(lx + 18) + "\" y=\"" + std::to_string(y) + "\">" +
           XmlEscape(Legend(view, i)) + "</text>\n";
  }
  if (view.series.empty()) {
    out += "<text x=\"" + SvgNumber(l.left + l.plot_w / 2.0) + "\" y=\"" +
           SvgNumber(l.top + l.plot_h / 2.0) +
           "\" text-anchor=\"middle\" fill=\"#666\">no data in the range</text>\n";
  }
  out += "</svg>\n";
  return out;
}

Canvas DrawLine(const LineView& view, const LineStyle& style) {
  const LineLayout l = LayoutLine(view, style);
  Canvas canvas(l.width, l.height);
  canvas.Text(l.left, 20, Title(view), kInk, TextAlign::kLeft, kTitleFont);
  canvas.Text(l.left, 40, Subtitle(view), Rgb{102, 102, 102});
  for (double v : l.Ticks(view.unit)) {
    const int y = static_cast<int>(std::lround(l.Y(v)));
    canvas.Line(l.left, y, l.left + l.plot_w - 1, y, kGrid);
    canvas.Text(l.left - 6, y + 4, SignedQuantity(v, view.unit), kInk, TextAlign::kRight);
  }
  if (l.bottom_value < 0) {  // the zero line, over the grid and under the data
    const int y = static_cast<int>(std::lround(l.Y(0)));
    canvas.Line(l.left, y, l.left + l.plot_w - 1, y, kAxis);
  }
  const int64_t to = view.from + static_cast<int64_t>(view.columns) * view.step;
  const int64_t interval =
      TimeTickInterval(static_cast<double>(to - view.from) * 90.0 / std::max(1, l.plot_w));
  for (int64_t t : TimeTicks(view.from, to, interval)) {
    const int x = static_cast<int>(
        std::lround(l.X(view, static_cast<double>(t - view.from) / view.step - 0.5)));
    canvas.Line(x, l.top + l.plot_h, x, l.top + l.plot_h + 3, kAxis);
    canvas.Text(x, l.top + l.plot_h + 16, TimeTickLabel(t, interval), kInk, TextAlign::kCenter);
  }
  canvas.Text(l.left + l.plot_w / 2, l.top + l.plot_h + 34, "time (UTC)", Rgb{102, 102, 102},
              TextAlign::kCenter);

  const std::vector<std::vector<double>> drawn = Drawn(view);
  if (view.area) {
    // Each pixel column between two points: a vertical span from the line down to the one below.
    for (size_t i = drawn.size(); i-- > 0;) {
      const Rgb fill = Tint(LineColor(view, i), view.stacked ? 0.75 : 0.25);
      for (auto [b, e] : Runs(drawn[i])) {
        const int x0 = static_cast<int>(std::lround(l.X(view, b)));
        const int x1 = static_cast<int>(std::lround(l.X(view, e - 1)));
        for (int x = x0; x <= x1; ++x) {
          const double pos =
              e - b == 1 ? b : b + static_cast<double>(x - x0) / std::max(1, x1 - x0) * (e - 1 - b);
          const uint32_t c = std::min<uint32_t>(static_cast<uint32_t>(pos), e - 1);
          const uint32_t d = std::min<uint32_t>(c + 1, e - 1);
          const double f = pos - c;
          const double top = drawn[i][c] * (1 - f) + drawn[i][d] * f;
          const double below =
              view.stacked && i > 0 ? drawn[i - 1][c] * (1 - f) + drawn[i - 1][d] * f : 0;
          const int y0 = static_cast<int>(std::lround(l.Y(top))),
                    y1 = static_cast<int>(std::lround(l.Y(below)));
          canvas.FillRect(x, y0, 1, std::max(0, y1 - y0), fill);
        }
      }
    }
  }
  for (size_t i = 0; i < drawn.size(); ++i) {
    const Rgb color = LineColor(view, i);
    for (auto [b, e] : Runs(drawn[i])) {
      for (uint32_t c = b; c < e; ++c) {
        const int x = static_cast<int>(std::lround(l.X(view, c)));
        const int y = static_cast<int>(std::lround(l.Y(drawn[i][c])));
        if (c + 1 < e) {
          canvas.Line(x, y, static_cast<int>(std::lround(l.X(view, c + 1))),
                      static_cast<int>(std::lround(l.Y(drawn[i][c + 1]))), color, 2);
        } else if (e - b == 1) {
          canvas.FillRect(x - 1, y - 1, 3, 3, color);
        }
      }
    }
  }
  canvas.StrokeRect(l.left, l.top, l.plot_w, l.plot_h, kAxis);
  const int lx = l.left + l.plot_w + 16;
  canvas.Text(lx, l.top + 4, "mean over the range", Rgb{102, 102, 102});
  for (size_t i = 0; i < view.series.size(); ++i) {
    const int y = l.top + 20 + static_cast<int>(i) * 18;
    canvas.FillRect(lx, y - 8, 12, 10, LineColor(view, i));
    canvas.Text(lx + 18, y, Legend(view, i), kInk);
  }
  if (view.series.empty()) {
    canvas.Text(l.left + l.plot_w / 2, l.top + l.plot_h / 2, "no data in the range",
                Rgb{102, 102, 102}, TextAlign::kCenter);
  }
  return canvas;
}

Result<std::string> RenderLinePng(const LineView& view, const LineStyle& style) {
  return DrawLine(view, style).EncodePng();
}

std::string RenderLineJson(const LineView& view) {
  nlohmann::ordered_json j;
  j["view"] = "line";
  j["metric"] = view.metric;
  j["unit"] = view.unit;
  j["stat"] = LineStatName(view.stat);
  j["by"] = view.by;
  j["from"] = view.from;
  j["step"] = view.step;
  j["columns"] = view.columns;
  j["stacked"] = view.stacked;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const LineSeries& s : view.series) {
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (double v : s.values) {
      if (std::isnan(v)) {
        values.push_back(nullptr);
      } else {
        values.push_back(v);
      }
    }
    list.push_back(
        {{"name", s.name}, {"other", s.other}, {"mean", s.mean}, {"values", std::move(values)}});
  }
  j["series"] = std::move(list);
  j["merged_into_other"] = view.merged;
  j["missing_shards"] = view.missing_shards;
  return j.dump(2) + "\n";
}

std::string RenderLineAnsi(const LineView& view, int width) {
  static constexpr const char* kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  const int cells =
      std::max(1, std::min<int>(width, static_cast<int>(std::max<uint32_t>(1, view.columns))));
  double top = 0, bottom = 0;
  std::vector<std::vector<double>> rows;
  for (const LineSeries& s : view.series) {
    std::vector<double> row(cells, std::nan(""));
    for (int k = 0; k < cells; ++k) {
      const uint32_t b = static_cast<uint32_t>(static_cast<uint64_t>(k) * view.columns / cells);
      const uint32_t e = std::max(
          b + 1, static_cast<uint32_t>(static_cast<uint64_t>(k + 1) * view.columns / cells));
      double total = 0;
      int n = 0;
      for (uint32_t c = b; c < e && c < s.values.size(); ++c) {
        if (!std::isnan(s.values[c])) {
          total += s.values[c];
          ++n;
        }
      }
      if (n > 0) {
        row[k] = total / n;
        top = std::max(top, row[k]);
        bottom = std::min(bottom, row[k]);
      }
    }
    rows.push_back(std::move(row));
  }
  // With a negative value each line takes two rows, one scale for both (as the SVG's one axis):
  // above the zero line the blocks grow up; below it they hang down from it (a lower block in
  // reverse video is the upper block of the rest of the cell), and ▔ marks zero where the value is
  // not negative.
  const bool negative = bottom < 0;
  const double span = std::max(top, -bottom);
  auto level = [span](double magnitude) {
    return span > 0 ? std::clamp(static_cast<int>(std::floor(magnitude / span * 7.999)), 0, 7) : 0;
  };
  size_t name_width = 4;
  for (const LineSeries& s : view.series)
    name_width = std::max(name_width, std::min<size_t>(s.name.size(), 24));
  std::string out = Title(view) + "\n" + Subtitle(view) + "\n";
  out += std::string(name_width + 2 + cells + 2, ' ') + "last      mean      max" +
         (negative ? "       min" : "") + "\n";
  for (size_t i = 0; i < view.series.size(); ++i) {
    const LineSeries& s = view.series[i];
    std::string name = s.name.substr(0, 24);
    out += name + std::string(name_width - name.size() + 2, ' ');
    for (double v : rows[i]) {
      if (std::isnan(v) || (negative && v <= 0)) {
        out += " ";
      } else {
        out += kBlocks[level(v)];
      }
    }
    double last = std::nan(""), max = std::nan(""), min = std::nan("");
    for (double v : s.values) {
      if (!std::isnan(v)) {
        last = v;
        max = std::isnan(max) ? v : std::max(max, v);
        min = std::isnan(min) ? v : std::min(min, v);
      }
    }
    auto cell = [&view](double v) {
      std::string t = std::isnan(v) ? "-" : SignedQuantity(v, view.unit);
      return t + std::string(t.size() < 10 ? 10 - t.size() : 1, ' ');
    };
    out += "  " + cell(last) + cell(s.mean) + cell(max) + (negative ? cell(min) : "") + "\n";
    if (!negative) continue;
    out += std::string(name_width + 2, ' ');
    for (double v : rows[i]) {
      if (std::isnan(v)) {
        out += " ";
      } else if (v >= 0) {
        out += "▔";
      } else if (const int l = level(-v); l == 7) {
        out += kBlocks[7];
      } else {
        out += std::string("\x1b[7m") + kBlocks[6 - l] + "\x1b[27m";
      }
    }
    out += "\n";
  }
  if (view.series.empty()) out += "(no data in the range)\n";
  if (negative) {
    out += "scale: ▔ = 0, █ = " + SignedQuantity(span, view.unit) + " above it, " +
           SignedQuantity(-span, view.unit) + " below it\n";
  } else {
    out += "scale: ▁ = 0, █ = " + SignedQuantity(top, view.unit) + "\n";
  }
  return out;
}

}  // namespace trailmap
