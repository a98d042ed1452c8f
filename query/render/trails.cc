#include "query/render/trails.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "core/parallel.h"
#include "core/timespec.h"
#include "core/units.h"
#include "query/draw/axis.h"
#include "query/draw/json_text.h"
#include "query/draw/palette.h"
#include "query/draw/raster.h"
#include "query/draw/svg_text.h"
#include "query/draw/view_text.h"
#include "query/render/micro_trail.h"

namespace trailmap {
namespace {

constexpr int kTop = 76;  // title lines
constexpr int kRight = 24;
constexpr int kBottom = 64;  // value axis and the note under it
constexpr int kLabelGap = 9;  // px between two labels' baselines, at least

struct Colors {
  Rgb background, line, fill, border, text, faint;
};

Colors ColorsFor(const TrailsStyle& style) {
  if (style.invert) {
    return {{0, 0, 0}, {242, 242, 242}, {210, 210, 210}, {0, 0, 0}, {221, 221, 221},
            {150, 150, 150}};
  }
  return {{255, 255, 255}, {26, 26, 26}, {127, 166, 216}, {0, 0, 0}, {34, 34, 34},
          {100, 100, 100}};
}

// Where everything goes; shared by SVG and PNG so both pictures agree.
struct Layout {
  size_t n = 0;
  int step = 0;        // px between baselines
  int height = 0;      // px of one trail
  int left = 0;        // x of the value range's start
  int plot_w = 0;
  int plot_h = 0;
  int width = 0, total_height = 0;
  size_t label_every = 1;  // 0 = no labels
  int label_size = 11;

  double X(const TrailsView& view, double point) const {
    return left + (point + 0.5) * plot_w / static_cast<double>(view.points);
  }
  int Baseline(size_t trail) const {
    return kTop + height + static_cast<int>(trail) * step;
  }
};

Layout LayoutFor(const TrailsView& view, const TrailsStyle& style, double char_width) {
  Layout l;
  l.n = std::max<size_t>(view.trails.size(), 1);
  const double overlap = style.overlap < 0 ? (l.n > 1 ? 0.85 : 0) : std::clamp(style.overlap, 0.0, 0.95);
  if (l.n == 1) {
    l.height = 160;
    l.step = 0;
  } else {
    l.step = style.step > 0 ? style.step
                            : std::clamp(static_cast<int>(std::max(style.plot_height, 1) / l.n),
                                         kMinTrailStep, 24);
    l.height = std::max(2, static_cast<int>(std::lround(l.step / (1 - overlap))));
  }
  size_t longest = 0;
  for (const FrequencyTrail& t : view.trails) {
    longest = std::max(longest, std::max<size_t>(t.group.size(), 6));
  }
  l.label_every = l.n == 1 ? 1 : static_cast<size_t>(std::ceil(kLabelGap / std::max(1.0, l.step * 1.0)));
  l.label_size = std::clamp(l.step + 1, 9, 12);
  const int label_w = static_cast<int>(std::min<size_t>(longest, 24) * char_width);
  l.left = std::max(64, label_w + 14);
  l.plot_w = std::max(style.plot_width, 200);
  l.plot_h = l.height + static_cast<int>(l.n - 1) * l.step;
  l.width = std::max(l.left + l.plot_w + kRight, 640);
  l.total_height = kTop + l.plot_h + kBottom;
  return l;
}

// Rug ticks: short, and shorter than the gap between baselines, so the ticks of a dense but sparse
// stretch read as hatching rather than merging with the trail above into a solid bar.
double TickHeight(const Layout& l) {
  double tick = std::min(l.height * 0.2, 6.0);
  if (l.step > 0) tick = std::min(tick, l.step * 0.6);
  return std::max(tick, 1.5);
}

double Height(const TrailsStyle& style, double density) {
  return style.root ? std::sqrt(density) : density;
}

std::string GroupName(const TrailsView& view, const FrequencyTrail& t) {
  if (t.group.empty()) return view.group_by == "host" ? "(no host)" : "(none)";
  return t.group;
}

std::string TrailDescription(const TrailsView& view, const FrequencyTrail& t) {
  auto q = [&view](double v) { return FormatQuantity(v, view.unit); };
  char shape[96];
  std::snprintf(shape, sizeof shape, "cov %.2f · bimodality %.2f", t.stats.cov,
                t.stats.bimodality);
  std::string s = GroupName(view, t) + ": " + FormatCount(t.count) + " " + CountNoun(view.kind, t.count) + " · p50 " +
                  q(static_cast<double>(t.p50)) + " · p99 " + q(static_cast<double>(t.p99)) +
                  " · max " + q(static_cast<double>(t.max)) + " · " + shape;
  const double outside = (t.above + t.below) * static_cast<double>(t.count);
  if (outside >= 0.5) s += " · " + FormatCount(static_cast<uint64_t>(std::lround(outside))) + " outside the range";
  return s;
}

std::string NotDrawn(const TrailsView& view) {
  if (view.above_events < 0.5) return "";
  const uint64_t n = static_cast<uint64_t>(std::lround(view.above_events));
  char share[32];
  std::snprintf(share, sizeof share, "%.2g%%",
                view.total ? 100.0 * view.above_events / static_cast<double>(view.total) : 0);
  return FormatCount(n) + " " + CountNoun(view.kind, n) + " (" + share + ") outside " +
         FormatQuantity(static_cast<double>(view.lo), view.unit) + "–" +
         FormatQuantity(static_cast<double>(view.hi), view.unit) +
         " not drawn; --range widens it";
}

std::string Note(const TrailsView& view, const TrailsStyle& style) {
  char pct[32];
  std::snprintf(pct, sizeof pct, "%g%%", view.threshold * 100);
  return std::string("line: density >= ") + pct + " of the trail's peak; ticks: sparser events; " +
         (style.root ? "height sqrt(density)" : "height density") + ", each trail to its own peak";
}

// The points of a line run as (x, y) pairs into `pts`, dropping the middle of three points at the
// same height (flat stretches need no vertices).
void RunPoints(const TrailsView& view, const TrailsStyle& style, const Layout& l,
               const FrequencyTrail& t, uint32_t begin, uint32_t end, int baseline,
               std::vector<std::pair<double, double>>* pts) {
  pts->clear();
  const double h = l.height - 1;
  for (uint32_t p = begin; p < end; ++p) {
    const double y = std::round((baseline - Height(style, t.density[p]) * h) * 10) / 10;
    const double x = l.X(view, p);
    if (pts->size() >= 2 && pts->back().second == y && (*pts)[pts->size() - 2].second == y) {
      pts->back().first = x;
      continue;
    }
    pts->emplace_back(x, y);
  }
}

// "X,Y" of an SVG path, appended.
void AppendPoint(double x, double y, std::string* out) {
  AppendSvgNumber(x, out);
  out->push_back(',');
  AppendSvgNumber(y, out);
}

// Rounds a non-negative pixel coordinate to the nearest pixel (as std::lround does for those,
// without its call: it was 9% of drawing 1,000 trails).
int Pixel(double v) { return static_cast<int>(v + 0.5); }

}  // namespace

size_t TrailsThatFit(const TrailsStyle& style) {
  return static_cast<size_t>(std::max(1, style.plot_height / kMinTrailStep));
}

std::string TrailsTitle(const TrailsView& view) {
  return view.metric + " frequency trails" + (view.group_by.empty() ? "" : " by " + view.group_by);
}

std::string TrailsSubtitle(const TrailsView& view) {
  std::string s = FormatRfc3339(view.from) + " + " + FormatSpan(view.to - view.from) + " · ";
  s += std::to_string(view.trails.size());
  if (view.groups_total > view.trails.size()) s += " of " + std::to_string(view.groups_total);
  s += view.trails.size() == 1 ? " trail" : " trails";
  if (view.fitted && view.groups_total > view.trails.size()) {
    s += " (the first that fit; --limit " + std::to_string(view.groups_total) + " draws all)";
  }
  s += " sorted by " + TrailSortName(view.sort) + " · " +
       FormatQuantity(static_cast<double>(view.lo), view.unit) + "–" +
       FormatQuantity(static_cast<double>(view.hi), view.unit) + (view.range_auto ? " (auto)" : "") +
       " in " + std::to_string(view.points) + " points · " + FormatCount(view.total) + " " + CountNoun(view.kind, view.total);
  return s;
}

std::string RenderTrailsSvg(const TrailsView& view, const TrailsStyle& style) {
  const Layout l = LayoutFor(view, style, 6.5);
  const Colors c = ColorsFor(style);
  std::string out;
  out.reserve(8192 + view.trails.size() * 4096);
  out += SvgOpen(l.width, l.total_height, HexColor(c.background));
  out += "<text x=\"" + std::to_string(l.left) + "\" y=\"24\" font-size=\"16\" font-weight=\"bold\" fill=\"" +
         HexColor(c.text) + "\">" + XmlEscape(TrailsTitle(view)) + "</text>\n";
  out += "<text x=\"" + std::to_string(l.left) + "\" y=\"44\" fill=\"" + HexColor(c.faint) + "\">" +
         XmlEscape(TrailsSubtitle(view)) + "</text>\n";
  if (const std::string nd = NotDrawn(view); !nd.empty()) {
    out += "<text x=\"" + std::to_string(l.left) + "\" y=\"62\" fill=\"#c04000\">" + XmlEscape(nd) +
           "</text>\n";
  }

  const std::string line_color = HexColor(style.fill && style.border ? c.border : c.line);
  const std::string fill_color = style.fill ? HexColor(c.fill) : HexColor(c.background);
  const bool draw_fill = style.fill || style.border;  // --border alone hides what is behind
  const bool draw_line = !style.fill || style.border;
  const double tick = TickHeight(l);

  // One buffer each for the paths, reused by every trail, and the document itself: a 1,000-trail
  // waterfall allocates a handful of times instead of once a coordinate.
  std::string area, line, rug;
  std::vector<std::pair<double, double>> pts;
  for (size_t i = 0; i < view.trails.size(); ++i) {
    const FrequencyTrail& t = view.trails[i];
    const int base = l.Baseline(i);
    out += "<g><title>";
    out += XmlEscape(TrailDescription(view, t));
    out += "</title>\n";
    area.clear();
    line.clear();
    rug.clear();
    for (const auto& [begin, end] : t.split.lines) {
      RunPoints(view, style, l, t, begin, end, base, &pts);
      if (draw_fill) {
        area += 'M';
        AppendPoint(pts.front().first, base, &area);
        for (const auto& [x, y] : pts) {
          area += 'L';
          AppendPoint(x, y, &area);
        }
        area += 'L';
        AppendPoint(pts.back().first, base, &area);
        area += 'Z';
      }
      if (draw_line) {
        line += 'M';
        AppendPoint(pts.front().first, pts.front().second, &line);
        if (pts.size() == 1) line += "h0.5";
        for (size_t k = 1; k < pts.size(); ++k) {
          line += 'L';
          AppendPoint(pts[k].first, pts[k].second, &line);
        }
      }
    }
    for (uint32_t p : t.split.rug) {
      rug += 'M';
      AppendPoint(l.X(view, p), base, &rug);
      rug += "v-";
      AppendSvgNumber(tick, &rug);
    }
    if (!area.empty()) {
      out += "<path d=\"";
      out += area;
      out += "\" fill=\"" + fill_color + "\"/>\n";
    }
    if (!line.empty()) {
      out += "<path d=\"";
      out += line;
      out += "\" fill=\"none\" stroke=\"" + line_color +
             "\" stroke-width=\"1\" stroke-linejoin=\"round\"/>\n";
    }
    if (!rug.empty()) {
      out += "<path d=\"";
      out += rug;
      out += "\" stroke=\"" + HexColor(c.line) + "\" stroke-width=\"0.6\"/>\n";
    }
    if (l.label_every > 0 && i % l.label_every == 0) {
      out += "<text x=\"" + std::to_string(l.left - 8) + "\" y=\"" + std::to_string(base) +
             "\" text-anchor=\"end\" font-size=\"" + std::to_string(l.label_size) + "\" fill=\"" +
             HexColor(c.text) + "\">" + XmlEscape(GroupName(view, t)) + "</text>\n";
    }
    out += "</g>\n";
  }

  // Value axis.
  const int axis_y = kTop + l.plot_h + 6;
  const double span = static_cast<double>(view.hi - view.lo);
  out += "<g fill=\"" + HexColor(c.text) + "\" text-anchor=\"middle\">\n";
  out += "<line x1=\"" + std::to_string(l.left) + "\" x2=\"" + std::to_string(l.left + l.plot_w) +
         "\" y1=\"" + std::to_string(axis_y) + "\" y2=\"" + std::to_string(axis_y) + "\" stroke=\"" +
         HexColor(c.faint) + "\"/>\n";
  for (double v : ValueTicks(span, std::max(2, l.plot_w / 110), view.unit)) {
    const double x = l.left + v / span * l.plot_w;
    out += "<line x1=\"" + SvgNumber(x) + "\" x2=\"" + SvgNumber(x) + "\" y1=\"" + std::to_string(axis_y) +
           "\" y2=\"" + std::to_string(axis_y + 5) + "\" stroke=\"" + HexColor(c.faint) + "\"/>";
    out += "<text x=\"" + SvgNumber(x) + "\" y=\"" + std::to_string(axis_y + 18) + "\">" +
           XmlEscape(FormatQuantity(static_cast<double>(view.lo) + v, view.unit)) + "</text>\n";
  }
  out += "</g>\n";
  out += "<text x=\"" + std::to_string(l.left) + "\" y=\"" + std::to_string(axis_y + 38) +
         "\" font-size=\"11\" fill=\"" + HexColor(c.faint) + "\">" + XmlEscape(Note(view, style)) + "</text>\n";
  if (!view.missing_shards.empty()) {
    std::string m;
    for (const std::string& s : view.missing_shards) m += (m.empty() ? "" : "; ") + s;
    out += "<text x=\"" + std::to_string(l.left) + "\" y=\"" + std::to_string(axis_y + 54) +
           "\" fill=\"#b00000\">partial: shards missing: " + XmlEscape(m) + "</text>\n";
  }
  out += "</svg>\n";
  return out;
}

Result<std::string> RenderTrailsPng(const TrailsView& view, const TrailsStyle& style) {
  const Layout l = LayoutFor(view, style, 6.5);  // the same font as the SVG's
  const Colors c = ColorsFor(style);
  Canvas canvas(l.width, l.total_height, c.background);
  canvas.Text(l.left, 24, TrailsTitle(view), c.text, TextAlign::kLeft, kTitleFont);
  canvas.Text(l.left, 44, TrailsSubtitle(view), c.faint);
  if (const std::string nd = NotDrawn(view); !nd.empty()) canvas.Text(l.left, 62, nd, Rgb{192, 64, 0});

  const Rgb line_color = style.fill && style.border ? c.border : c.line;
  const Rgb fill_color = style.fill ? c.fill : c.background;
  const bool draw_fill = style.fill || style.border;
  const bool draw_line = !style.fill || style.border;
  const int tick = static_cast<int>(std::lround(TickHeight(l)));
  const double h = l.height - 1;
  std::vector<int> xs(view.points);  // each point's pixel column, the same for every trail
  for (uint32_t p = 0; p < view.points; ++p) xs[p] = Pixel(l.X(view, p));
  for (size_t i = 0; i < view.trails.size(); ++i) {
    const FrequencyTrail& t = view.trails[i];
    const int base = l.Baseline(i);
    auto px = [&xs](uint32_t p) { return xs[p]; };
    auto py = [&](uint32_t p) { return Pixel(base - Height(style, t.density[p]) * h); };
    for (const auto& [begin, end] : t.split.lines) {
      if (draw_fill) {
        // Columns under the line, interpolated between neighbouring points.
        for (uint32_t p = begin; p < end; ++p) {
          const int x0 = px(p), x1 = p + 1 < end ? px(p + 1) : x0 + 1;
          for (int x = x0; x < std::max(x1, x0 + 1); ++x) {
            const double f = x1 > x0 ? static_cast<double>(x - x0) / (x1 - x0) : 0;
            const double y = p + 1 < end ? py(p) + f * (py(p + 1) - py(p)) : py(p);
            const int top = static_cast<int>(std::lround(y));
            canvas.FillRect(x, top, 1, base - top + 1, fill_color);
          }
        }
      }
      if (draw_line) {
        if (end - begin == 1) canvas.Set(px(begin), py(begin), line_color);
        for (uint32_t p = begin; p + 1 < end; ++p) canvas.Line(px(p), py(p), px(p + 1), py(p + 1), line_color);
      }
    }
    for (uint32_t p : t.split.rug) canvas.Line(px(p), base, px(p), base - tick + 1, c.line);
    if (l.label_every > 0 && i % l.label_every == 0) {
      canvas.Text(l.left - 8, base, GroupName(view, t), c.text, TextAlign::kRight,
                  FontStyle{l.label_size});
    }
  }
  const int axis_y = kTop + l.plot_h + 6;
  const double span = static_cast<double>(view.hi - view.lo);
  canvas.Line(l.left, axis_y, l.left + l.plot_w, axis_y, c.faint);
  for (double v : ValueTicks(span, std::max(2, l.plot_w / 110), view.unit)) {
    const int x = static_cast<int>(std::lround(l.left + v / span * l.plot_w));
    canvas.Line(x, axis_y, x, axis_y + 5, c.faint);
    canvas.Text(x, axis_y + 18, FormatQuantity(static_cast<double>(view.lo) + v, view.unit), c.text,
                TextAlign::kCenter);
  }
  canvas.Text(l.left, axis_y + 38, Note(view, style), c.faint);
  if (!view.missing_shards.empty()) {
    std::string m;
    for (const std::string& s : view.missing_shards) m += (m.empty() ? "" : "; ") + s;
    canvas.Text(l.left, axis_y + 54, "partial: shards missing: " + m, Rgb{176, 0, 0});
  }
  return canvas.EncodePng();
}

namespace {

// The text of k / 10^4 for k in [0, 10^4] as nlohmann::json writes std::round(d * 1e4) / 1e4:
// "0.0", "0.123", "1.0". Six bytes at most, the seventh says how many.
using DensityText = std::array<char, 8>;

const std::array<DensityText, 10001>& DensityTexts() {
  static const auto* table = [] {
    auto* t = new std::array<DensityText, 10001>();
    for (int k = 0; k <= 10000; ++k) {
      DensityText& text = (*t)[static_cast<size_t>(k)];
      std::string s = k == 0       ? "0.0"
                      : k == 10000 ? "1.0"
                                   : "0." + std::to_string(10000 + k).substr(1);
      while (s.size() > 3 && s.back() == '0') s.pop_back();
      std::copy(s.begin(), s.end(), text.begin());
      text[7] = static_cast<char>(s.size());
    }
    return t;
  }();
  return *table;
}

// A density rounded to 4 decimals (DensityTexts), written at `w`: 8 bytes are written, at most
// 6 of them text. Returns the end of the text. Without building a JSON value for each of a
// waterfall's 2 million points, nor a division per digit (half of writing 1,000 trails).
char* WriteDensity(const std::array<DensityText, 10001>& texts, double density, char* w) {
  const double x = std::clamp(density, 0.0, 1.0) * 1e4;
  // std::lround on [0, 10^4]: x + 0.5 truncated, except below 0.5 (and NaN), where the sum
  // could round up to 1.
  const auto k = x >= 0.5 ? static_cast<size_t>(x + 0.5) : size_t{0};
  const DensityText& text = texts[k];
  std::memcpy(w, text.data(), text.size());
  return w + text[7];
}

void AppendUnsigned(uint64_t v, std::string* out) {
  char buf[24];
  out->append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

// An object's dump with its closing brace removed, so more keys can follow.
void AppendOpenObject(const nlohmann::ordered_json& j, std::string* out) {
  *out += j.dump(-1);
  out->pop_back();
}

}  // namespace

// The head and each trail's statistics are built as JSON values; the large arrays (lines, rug,
// density: 2,048 numbers a trail) are written straight into the trail's part of the output.
void WriteTrailsJson(const TrailsView& view, const std::function<void(std::string_view)>& emit) {
  nlohmann::ordered_json j;
  AddJsonHead({.view = "trails", .metric = view.metric, .unit = view.unit,
               .group_by = view.group_by, .from = view.from, .to = view.to},
              &j);
  j["range"] = {view.lo, view.hi};
  j["range_auto"] = view.range_auto;
  j["points"] = view.points;
  j["threshold"] = view.threshold;
  j["sort"] = TrailSortName(view.sort);
  j["groups_total"] = view.groups_total;
  j["total"] = view.total;
  std::string head;
  AppendOpenObject(j, &head);
  head += ",\"trails\":[";
  emit(head);
  // Each trail's text is made by one of a few threads (1,000 trails are 14 MB) and emitted in
  // order as soon as it and those before it are made.
  const std::array<DensityText, 10001>& texts = DensityTexts();
  const auto make = [&view, &texts](size_t i) {
    // A view assembled without shapes: this trail's is made here, and freed once written.
    std::optional<FrequencyTrail> shaped;
    if (!view.unshaped.empty()) shaped.emplace(ShapeTrail(view, i));
    const FrequencyTrail& t = shaped ? *shaped : view.trails[i];
    std::string out;
    out.reserve(t.density.size() * 7 + 1024);
    const nlohmann::ordered_json head = {{"group", t.group},
                                         {"count", t.count},
                                         {"p50", t.p50},
                                         {"p99", t.p99},
                                         {"max", t.max},
                                         {"mean", t.stats.mean},
                                         {"stddev", t.stats.stddev},
                                         {"cov", t.stats.cov},
                                         {"skewness", t.stats.skewness},
                                         {"kurtosis", t.stats.kurtosis},
                                         {"bimodality", t.stats.bimodality},
                                         {"bandwidth", t.bandwidth},
                                         {"below", t.below},
                                         {"above", t.above},
                                         {"sparkline", Sparkline(t, 32)}};
    if (i > 0) out += ',';
    AppendOpenObject(head, &out);
    out += ",\"lines\":[";
    for (size_t k = 0; k < t.split.lines.size(); ++k) {
      out += k ? ",[" : "[";
      AppendUnsigned(t.split.lines[k].first, &out);
      out += ',';
      AppendUnsigned(t.split.lines[k].second, &out);
      out += ']';
    }
    out += "],\"rug\":[";
    for (size_t k = 0; k < t.split.rug.size(); ++k) {
      if (k) out += ',';
      AppendUnsigned(t.split.rug[k], &out);
    }
    out += "],\"density\":[";
    // Written in place: 7 bytes a point at most ("0.1234,"), and WriteDensity's last 8-byte copy.
    const size_t at = out.size();
    out.resize(at + t.density.size() * 7 + 8);
    char* w = out.data() + at;
    for (size_t k = 0; k < t.density.size(); ++k) {
      if (k) *w++ = ',';
      w = WriteDensity(texts, t.density[k], w);
    }
    out.resize(static_cast<size_t>(w - out.data()));
    out += "]}";
    return out;
  };
  ParallelInOrder(view.trails.size(), 64, make,
                  [&emit](size_t, std::string&& text) { emit(text); });
  emit("],\"missing_shards\":" + nlohmann::ordered_json(view.missing_shards).dump(-1) + "}\n");
}

std::string RenderTrailsJson(const TrailsView& view) {
  std::string out;
  out.reserve(view.trails.size() * (view.points * 7 + 1024) + 4096);  // at most, nearly
  WriteTrailsJson(view, [&out](std::string_view part) { out += part; });
  return out;
}

}  // namespace trailmap
