#include "query/render/flame.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "query/render/flame_script.h"

namespace trailmap {
namespace {

constexpr double kFontWidth = 0.59;  // average glyph width in Verdana, in font sizes
constexpr int kXPad = 10;

uint64_t NameHash(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h ^ (h >> 29);
}

std::string RgbText(int r, int g, int b) {
  char buf[32];
  snprintf(buf, sizeof buf, "rgb(%d,%d,%d)", r, g, b);
  return buf;
}

bool EndsWith(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }
bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// The hue family a java or js frame belongs to (flamegraph.pl's rules, reimplemented).
std::string_view LanguageFamily(FlamePalette palette, std::string_view name) {
  if (palette == FlamePalette::kJava) {
    if (EndsWith(name, "_[j]")) return "green";
    if (EndsWith(name, "_[i]")) return "aqua";
    static constexpr std::string_view kPackages[] = {"java/", "javax/", "jdk/", "net/",
                                                     "org/",  "com/",   "io/",  "sun/"};
    std::string_view bare = name;
    if (bare.starts_with('L')) bare.remove_prefix(1);
    for (std::string_view p : kPackages) {
      if (bare.starts_with(p)) return "green";
    }
    if (Contains(name, ":::")) return "green";
    if (Contains(name, "::")) return "yellow";
    if (EndsWith(name, "_[k]")) return "orange";
    return "red";
  }
  if (EndsWith(name, "_[j]")) return Contains(name, "/") ? "green" : "aqua";
  if (Contains(name, "::")) return "yellow";
  if (const size_t slash = name.find('/');
      slash != std::string_view::npos && Contains(name.substr(slash), ".js")) {
    return "green";
  }
  if (Contains(name, ":")) return "aqua";
  if (name == " ") return "green";
  if (Contains(name, "_[k]")) return "orange";
  return "red";
}

std::string FrameColor(FlamePalette palette, const FlameNode& node) {
  const uint64_t h = NameHash(node.name);
  const double v1 = static_cast<double>(h & 0xffff) / 65535.0;
  const double v2 = static_cast<double>((h >> 16) & 0xffff) / 65535.0;
  const double v3 = static_cast<double>((h >> 32) & 0xffff) / 65535.0;
  auto I = [](double v) { return static_cast<int>(v); };
  switch (palette) {
    case FlamePalette::kHot:
      return RgbText(205 + I(50 * v3), I(230 * v1), I(55 * v2));
    case FlamePalette::kMem:
      return RgbText(0, 190 + I(50 * v2), I(210 * v1));
    case FlamePalette::kIo:
      return RgbText(80 + I(60 * v1), 80 + I(60 * v1), 190 + I(55 * v2));
    case FlamePalette::kSelf: {
      const double s = node.total > 0 ? node.self / node.total : 0;
      return RgbText(250 - I(20 * s), 235 - I(195 * s) + I(10 * v1), 215 - I(195 * s));
    }
    case FlamePalette::kJava:
    case FlamePalette::kJs: {
      const std::string_view family = LanguageFamily(palette, node.name);
      if (family == "green") return RgbText(50 + I(60 * v1), 200 + I(55 * v1), 50 + I(60 * v1));
      if (family == "aqua") return RgbText(50 + I(60 * v1), 165 + I(55 * v1), 165 + I(55 * v1));
      if (family == "yellow") return RgbText(175 + I(55 * v1), 175 + I(55 * v1), 50 + I(20 * v1));
      if (family == "orange") return RgbText(190 + I(65 * v1), 90 + I(65 * v1), 0);
      return RgbText(200 + I(55 * v1), 80 + I(60 * v1), 80 + I(60 * v1));
    }
  }
  return RgbText(200, 200, 200);
}

// Differential trees: red where the frame grew, blue where it shrank, white when unchanged; the
// more it changed (relative to the largest change of any frame), the deeper the color.
// A change below 1e-9 of the larger count is the rounding of the baseline's scaling: none.
std::string DiffColor(const FlameNode& node, double max_delta) {
  const double delta = node.total - node.baseline;
  if (max_delta <= 0 || std::fabs(delta) <= 1e-9 * std::max(node.total, node.baseline)) {
    return RgbText(255, 255, 255);
  }
  const double strength = std::min(1.0, std::fabs(delta) / max_delta);
  const int pale = static_cast<int>(210 * (1 - strength));
  return delta > 0 ? RgbText(255, pale, pale) : RgbText(pale, pale, 255);
}

void AppendEscaped(std::string* out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '&': *out += "&amp;"; break;
      case '<': *out += "&lt;"; break;
      case '>': *out += "&gt;"; break;
      case '"': *out += "&quot;"; break;
      default: *out += c;
    }
  }
}

// v with two decimals, as "%.2f" writes it for the values a layout has (0 to 1e12), but without
// snprintf's cost: the renderer writes five of these per frame.
void AppendFixed(std::string* out, double v) {
  if (!(v >= 0 && v < 1e12)) {
    char buf[48];
    const int n = snprintf(buf, sizeof buf, "%.2f", v);
    out->append(buf, static_cast<size_t>(n));
    return;
  }
  const auto hundredths = static_cast<uint64_t>(std::llround(v * 100));
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, hundredths / 100);
  *end++ = '.';
  *end++ = static_cast<char>('0' + hundredths / 10 % 10);
  *end++ = static_cast<char>('0' + hundredths % 10);
  out->append(buf, static_cast<size_t>(end - buf));
}

// 1234567 → "1,234,567"; 2.5 → "2.5" (flamegraph.pl writes counts with thousands commas).
std::string FormatCount(double v) {
  char buf[64];
  if (v == std::floor(v) && v < 1e18) {
    const std::string digits = std::to_string(static_cast<uint64_t>(v));
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
      out += digits[i];
    }
    return out;
  }
  snprintf(buf, sizeof buf, "%.3f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// A label that fits w pixels: the name, or its start and "..", or nothing.
std::string_view Label(std::string_view name, double w, int font_size, std::string* buf) {
  const auto chars = static_cast<size_t>(std::max(0.0, std::floor(w / (font_size * kFontWidth))));
  if (chars < 3) return {};
  if (name.size() <= chars) return name;
  size_t cut = chars - 2;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  buf->assign(name.substr(0, cut));
  *buf += "..";
  return *buf;
}

void AppendNumberString(std::string* out, double v) {
  char buf[48];
  const int n = snprintf(buf, sizeof buf, "%.17g", v);
  out->append(buf, static_cast<size_t>(n));
}

void AppendJsonString(std::string* out, std::string_view s) {
  *out += '"';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += c;
    } else if (u < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", u);
      *out += buf;
    } else {
      *out += c;
    }
  }
  *out += '"';
}

void AppendCountText(std::string* out, double v) {
  if (v == std::floor(v) && v < 1e18) {
    *out += std::to_string(static_cast<uint64_t>(v));
  } else {
    AppendNumberString(out, v);
  }
}

}  // namespace

const char* FlamePaletteName(FlamePalette palette) {
  switch (palette) {
    case FlamePalette::kHot: return "hot";
    case FlamePalette::kMem: return "mem";
    case FlamePalette::kIo: return "io";
    case FlamePalette::kJava: return "java";
    case FlamePalette::kJs: return "js";
    case FlamePalette::kSelf: return "self";
  }
  return "hot";
}

Result<FlamePalette> ParseFlamePalette(std::string_view text) {
  for (FlamePalette p : {FlamePalette::kHot, FlamePalette::kMem, FlamePalette::kIo,
                         FlamePalette::kJava, FlamePalette::kJs, FlamePalette::kSelf}) {
    if (text == FlamePaletteName(p)) return p;
  }
  return Status::InvalidArgument("unknown palette \"" + std::string(text) +
                                 "\" (hot, mem, io, java, js, self)");
}

std::string RenderFlameSvg(const FlameTree& tree, const FlameSvgOptions& options) {
  const int width = std::max(options.width, 2 * kXPad + 10);
  const int fh = options.frame_height;
  const int fs = options.font_size;
  const int ypad1 = fs * 3 + (options.subtitle.empty() ? 0 : fs * 2);
  const int ypad2 = fs * 2 + 10;
  const double total = tree.total();
  const double per_sample = total > 0 ? (width - 2 * kXPad) / total : 0;
  // The height fits the frames drawn: a tower too narrow to draw does not make the image tall.
  // (A frame is drawn when it is wide enough, since its ancestors are at least as wide.)
  uint32_t drawn_depth = 0;
  for (const FlameNode& n : tree.nodes) {
    if (n.total * per_sample >= options.min_width) drawn_depth = std::max(drawn_depth, n.depth);
  }
  const int levels = static_cast<int>(drawn_depth) + 1;
  const int height = levels * fh + ypad1 + ypad2;
  const std::string title =
      !options.title.empty()  ? options.title
      : options.inverted      ? "Icicle Graph"
      : tree.differential     ? "Differential Flame Graph"
                              : "Flame Graph";
  double max_delta = 0;
  if (tree.differential) {
    for (const FlameNode& n : tree.nodes) max_delta = std::max(max_delta, std::fabs(n.total - n.baseline));
  }

  std::string out;
  out.reserve(4096 + tree.nodes.size() * 160);
  char buf[512];
  snprintf(buf, sizeof buf,
           "<?xml version=\"1.0\" standalone=\"no\"?>\n"
           "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
           "xmlns=\"http://www.w3.org/2000/svg\" onload=\"init(evt)\">\n",
           width, height, width, height);
  out += buf;
  out +=
      "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
      "</linearGradient></defs>\n<style type=\"text/css\">\n";
  snprintf(buf, sizeof buf,
           "text { font-family: Verdana, sans-serif; font-size: %dpx; fill: rgb(0,0,0); }\n"
           "#title { text-anchor: middle; font-size: %dpx; }\n"
           "#subtitle { text-anchor: middle; fill: rgb(160,160,160); }\n"
           "#search, #matched { text-anchor: end; }\n"
           "#search, #unzoom { cursor: pointer; }\n"
           "#search.on { fill: rgb(230,0,230); }\n"
           ".hide { display: none; }\n"
           ".parent { opacity: 0.5; }\n"
           "#frames > g:hover > rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n",
           fs, fs + 5);
  out += buf;
  out += "</style>\n<script type=\"text/ecmascript\"><![CDATA[";
  snprintf(buf, sizeof buf,
           "\nvar FONT_SIZE = %d, FONT_WIDTH = %.2f, XPAD = %d, IMAGE_WIDTH = %d, INVERTED = %s;",
           fs, kFontWidth, kXPad, width, options.inverted ? "true" : "false");
  out += buf;
  // The script behind zoom, search and details (flame_script.js): frames are the <g> children of
  // #frames in depth-first order (the root first); each keeps its first layout to come back to.
  out += '\n';
  out += FlameScript();
  out += "]]></script>\n";
  snprintf(buf, sizeof buf,
           "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#background)\"/>\n", width,
           height);
  out += buf;
  snprintf(buf, sizeof buf, "<text id=\"title\" x=\"%d\" y=\"%d\">", width / 2, fs * 2);
  out += buf;
  AppendEscaped(&out, title);
  out += "</text>\n";
  if (!options.subtitle.empty()) {
    snprintf(buf, sizeof buf, "<text id=\"subtitle\" x=\"%d\" y=\"%d\">", width / 2, fs * 4);
    out += buf;
    AppendEscaped(&out, options.subtitle);
    out += "</text>\n";
  }
  snprintf(buf, sizeof buf,
           "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n"
           "<text id=\"search\" x=\"%d\" y=\"%d\">Search</text>\n"
           "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
           "<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n",
           kXPad, fs * 2, width - kXPad, fs * 2, kXPad, height - ypad2 / 2, width - kXPad,
           height - ypad2 / 2);
  out += buf;
  if (total <= 0) {
    snprintf(buf, sizeof buf,
             "<text x=\"%d\" y=\"%d\" style=\"text-anchor: middle\">No stack counts found</text>\n",
             width / 2, ypad1 + fh);
    out += buf;
  }
  out += "<g id=\"frames\">\n";

  if (total > 0) {
    // Depth first, root first; each entry is a node and where its frame starts, in samples.
    std::vector<std::pair<uint32_t, double>> todo{{0, 0.0}};
    std::string label_buf;
    const std::string count_suffix = " " + options.count_name + ", ";
    while (!todo.empty()) {
      const auto [id, start] = todo.back();
      todo.pop_back();
      const FlameNode& node = tree.nodes[id];
      const double x = kXPad + start * per_sample;
      const double w = node.total * per_sample;
      if (w < options.min_width) continue;  // and so is everything above it
      const double y = options.inverted ? ypad1 + node.depth * fh
                                        : height - ypad2 - (node.depth + 1.0) * fh;
      out += "<g><title>";
      AppendEscaped(&out, node.name);
      out += " (";
      out += FormatCount(node.total);
      out += count_suffix;
      AppendFixed(&out, 100.0 * node.total / total);
      out += '%';
      if (tree.differential) {
        // "; baseline 6, +3 (+33.33%)" would nest parentheses, which the script's name
        // extraction does not allow: "; baseline 6, +3, +33.33%".
        const double delta = node.total - node.baseline;
        out += "; baseline ";
        out += FormatCount(std::round(node.baseline * 1000) / 1000);
        out += delta >= 0 ? ", +" : ", -";
        out += FormatCount(std::round(std::fabs(delta) * 1000) / 1000);
        out += delta >= 0 ? ", +" : ", -";
        AppendFixed(&out, 100.0 * std::fabs(delta) / total);
        out += '%';
      }
      out += ")</title><rect x=\"";
      AppendFixed(&out, x);
      out += "\" y=\"";
      AppendFixed(&out, y);
      out += "\" width=\"";
      AppendFixed(&out, w);
      snprintf(buf, sizeof buf, "\" height=\"%d\" fill=\"%s\" rx=\"2\" ry=\"2\"/><text x=\"",
               fh - 1,
               (tree.differential ? DiffColor(node, max_delta) : FrameColor(options.palette, node))
                   .c_str());
      out += buf;
      AppendFixed(&out, x + 3);
      out += "\" y=\"";
      AppendFixed(&out, y + fh / 2.0 + fs / 2.0 - 1.5);
      out += "\">";
      AppendEscaped(&out, Label(node.name, w, fs, &label_buf));
      out += "</text></g>\n";
      // Children left to right from the parent's start; pushed in reverse to pop in order.
      double child_start = start + node.total - node.self;
      for (size_t i = node.children.size(); i-- > 0;) {
        const uint32_t c = node.children[i];
        child_start -= tree.nodes[c].total;
        todo.emplace_back(c, child_start);
      }
    }
  }
  out += "</g>\n</svg>\n";
  return out;
}

std::string RenderFlameJson(const FlameTree& tree) {
  std::string out;
  // Iterative, so a deep stack cannot overflow ours: (node, next child index).
  std::vector<std::pair<uint32_t, size_t>> path{{0, 0}};
  auto open = [&](uint32_t id) {
    const FlameNode& n = tree.nodes[id];
    out += "{\"name\":";
    AppendJsonString(&out, n.name);
    out += ",\"value\":";
    AppendCountText(&out, n.total);
    if (tree.differential) {  // d3-flame-graph's differential mode colors by "delta"
      out += ",\"baseline\":";
      AppendCountText(&out, n.baseline);
      out += ",\"delta\":";
      const double delta = n.total - n.baseline;
      if (delta < 0) out += '-';
      AppendCountText(&out, std::fabs(delta));
    }
    out += ",\"children\":[";
  };
  open(0);
  while (!path.empty()) {
    auto& [id, next] = path.back();
    const FlameNode& n = tree.nodes[id];
    if (next < n.children.size()) {
      if (next > 0) out += ',';
      const uint32_t c = n.children[next++];
      open(c);
      path.emplace_back(c, 0);
    } else {
      out += "]}";
      path.pop_back();
    }
  }
  out += '\n';
  return out;
}

std::string RenderFlameFolded(const FlameTree& tree) {
  std::vector<std::pair<std::string, double>> lines;
  std::vector<std::pair<uint32_t, std::string>> todo;
  for (uint32_t c : tree.root().children) todo.emplace_back(c, tree.nodes[c].name);
  while (!todo.empty()) {
    auto [id, stack] = std::move(todo.back());
    todo.pop_back();
    const FlameNode& n = tree.nodes[id];
    for (uint32_t c : n.children) todo.emplace_back(c, stack + ";" + tree.nodes[c].name);
    if (n.self > 0) lines.emplace_back(std::move(stack), n.self);
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& [stack, count] : lines) {
    out += stack;
    out += ' ';
    AppendCountText(&out, count);
    out += '\n';
  }
  return out;
}

}  // namespace trailmap
