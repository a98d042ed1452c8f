#include "query/render/flame.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "query/testing/folded.h"
#include "query/views/flame.h"

namespace trailmap {
namespace {

using testing::kSeedFolded;

struct SvgFrame {
  std::string name;
  double samples, percent, x, y, width;
};

std::vector<SvgFrame> ParseFrames(const std::string& svg) {
  static const std::regex kFrame(
      R"re(<g><title>(.*?) \(([0-9.,]+) samples, ([0-9.]+)%\)</title><rect x="([0-9.]+)" )re"
      R"re(y="([0-9.]+)" width="([0-9.]+)")re");
  std::vector<SvgFrame> frames;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), kFrame); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    frames.push_back({m[1], std::stod(m[2]), std::stod(m[3]), std::stod(m[4]), std::stod(m[5]),
                      std::stod(m[6])});
  }
  return frames;
}

TEST(RenderFlameSvg, SeedExampleWidthsAreTotalSamples) {
  const std::string svg = RenderFlameSvg(BuildFlameTree(kSeedFolded));
  const std::vector<SvgFrame> f = ParseFrames(svg);
  ASSERT_EQ(f.size(), 6u);  // depth first: all, main, foo1, bar, foo2, bar
  const double per_sample = (1200 - 20) / 9.0;
  const std::pair<const char*, double> want[] = {{"all", 9},   {"main", 9}, {"foo1", 4},
                                                 {"bar", 2.5}, {"foo2", 3}, {"bar", 2.5}};
  for (size_t i = 0; i < f.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(f[i].name, want[i].first);
    EXPECT_DOUBLE_EQ(f[i].samples, want[i].second);
    EXPECT_NEAR(f[i].width, want[i].second * per_sample, 0.006);
    EXPECT_NEAR(f[i].percent, 100 * want[i].second / 9, 0.006);
  }
  // Callees sit left-aligned on their caller; the gap under a frame is its self time.
  EXPECT_NEAR(f[2].x, f[1].x, 0.01);                                        // foo1 at main's start
  EXPECT_NEAR(f[4].x, f[2].x + f[2].width, 0.01);                           // foo2 right after foo1
  EXPECT_NEAR(f[3].x, f[2].x, 0.01);                                        // bar at foo1's start
  EXPECT_NEAR(f[1].width - f[2].width - f[4].width, 2 * per_sample, 0.02);  // main's self
  EXPECT_NEAR(f[2].width - f[3].width, 1.5 * per_sample, 0.02);             // foo1's self
  // Flame: deeper frames are higher up (smaller y), one level apart.
  EXPECT_NEAR(f[0].y - f[1].y, 16, 1e-9);
  EXPECT_NEAR(f[1].y - f[2].y, 16, 1e-9);
  EXPECT_NE(svg.find("<title>main (9 samples, 100.00%)</title>"), std::string::npos);
  EXPECT_NE(svg.find(">Flame Graph</text>"), std::string::npos);
  EXPECT_NE(svg.find("function zoom("), std::string::npos);
  EXPECT_NE(svg.find("id=\"search\""), std::string::npos);
}

TEST(RenderFlameSvg, InvertedMinWidthTitleAndEscaping) {
  FlameSvgOptions options;
  options.inverted = true;
  options.title = "CPU <web>";
  options.min_width = 200;  // pixels: only frames of 2 samples (1180/9*2 = 262 px) or more
  const std::string svg = RenderFlameSvg(BuildFlameTree(kSeedFolded), options);
  const std::vector<SvgFrame> f = ParseFrames(svg);
  ASSERT_EQ(f.size(), 6u);
  options.min_width = 400;  // foo2 (393 px) and the bars (328 px) go: all, main, foo1 stay
  const std::string pruned = RenderFlameSvg(BuildFlameTree(kSeedFolded), options);
  EXPECT_EQ(ParseFrames(pruned).size(), 3u);
  // The image is as tall as the levels drawn: 3 x 16 px + title 36 + details 34.
  EXPECT_NE(pruned.find("<svg version=\"1.1\" width=\"1200\" height=\"118\""), std::string::npos);
  EXPECT_NE(svg.find("<svg version=\"1.1\" width=\"1200\" height=\"134\""), std::string::npos);
  EXPECT_LT(f[0].y, f[1].y);  // icicle: root on top
  EXPECT_NE(svg.find(">CPU &lt;web&gt;</text>"), std::string::npos);
  EXPECT_NE(svg.find("INVERTED = true"), std::string::npos);
  const std::string odd = RenderFlameSvg(BuildFlameTree("a<&\"b;c 1\n"));
  EXPECT_NE(odd.find("<title>a&lt;&amp;&quot;b (1 samples, 100.00%)</title>"), std::string::npos);
}

TEST(RenderFlameSvg, LabelsAreCutToFitAndEmptyInputSaysSo) {
  const std::string svg =
      RenderFlameSvg(BuildFlameTree("main 100\nmain;a_rather_long_function_name_indeed 1\n"));
  EXPECT_NE(svg.find(">main</text>"), std::string::npos);
  // 11.8 px wide frame fits one 7-px glyph: no label.
  EXPECT_NE(svg.find("\"></text></g>"), std::string::npos);
  FlameSvgOptions small;
  small.width = 120;
  const std::string narrow = RenderFlameSvg(BuildFlameTree("abcdefghijklmnop 1\n"), small);
  EXPECT_NE(narrow.find(">abcdefghijkl..</text>"), std::string::npos);  // 100 px: 14 chars
  EXPECT_NE(RenderFlameSvg(BuildFlameTree("")).find("No stack counts found"), std::string::npos);
}

TEST(RenderFlameSvg, Palettes) {
  const FlameTree tree = BuildFlameTree(
      "java;Interpreter;java/util/HashMap:::get_[j] 1\njava;JVM::run 1\njava;do_sys_[k] 1\n");
  auto fill_of = [&](FlamePalette p, const std::string& name) {
    FlameSvgOptions options;
    options.palette = p;
    const std::string svg = RenderFlameSvg(tree, options);
    const size_t at = svg.find("<title>" + name + " (");
    EXPECT_NE(at, std::string::npos) << name;
    const size_t fill = svg.find("fill=\"rgb(", at) + 10;
    std::istringstream in(svg.substr(fill, svg.find(')', fill) - fill));
    int r, g, b;
    char comma;
    in >> r >> comma >> g >> comma >> b;
    return std::vector<int>{r, g, b};
  };
  std::vector<int> c = fill_of(FlamePalette::kJava, "java/util/HashMap:::get_[j]");
  EXPECT_GT(c[1], c[0]);  // green
  c = fill_of(FlamePalette::kJava, "do_sys_[k]");
  EXPECT_EQ(c[2], 0);  // orange
  c = fill_of(FlamePalette::kJava, "JVM::run");
  EXPECT_EQ(c[0], c[1]);  // yellow
  c = fill_of(FlamePalette::kHot, "Interpreter");
  EXPECT_GE(c[0], 205);
  c = fill_of(FlamePalette::kMem, "Interpreter");
  EXPECT_EQ(c[0], 0);
  c = fill_of(FlamePalette::kIo, "Interpreter");
  EXPECT_GT(c[2], c[0]);
  // Self: a leaf (all self) is deeper red than a frame that only passes through.
  const std::vector<int> leaf = fill_of(FlamePalette::kSelf, "java/util/HashMap:::get_[j]");
  const std::vector<int> pass = fill_of(FlamePalette::kSelf, "Interpreter");
  EXPECT_LT(leaf[2], pass[2]);
  EXPECT_EQ(RenderFlameSvg(tree), RenderFlameSvg(tree));  // deterministic colors
  EXPECT_TRUE(ParseFlamePalette("js").ok());
  EXPECT_FALSE(ParseFlamePalette("pink").ok());
}

TEST(RenderFlameJson, SeedExampleAsD3Tree) {
  const nlohmann::json j = nlohmann::json::parse(RenderFlameJson(BuildFlameTree(kSeedFolded)));
  EXPECT_EQ(j["name"], "all");
  EXPECT_EQ(j["value"], 9);
  const nlohmann::json& main = j["children"][0];
  EXPECT_EQ(main["name"], "main");
  EXPECT_EQ(main["value"], 9);
  ASSERT_EQ(main["children"].size(), 2u);
  EXPECT_EQ(main["children"][0]["name"], "foo1");
  EXPECT_EQ(main["children"][0]["value"], 4);
  EXPECT_EQ(main["children"][1]["name"], "foo2");
  EXPECT_EQ(main["children"][1]["value"], 3);
  for (const auto& foo : main["children"]) {
    ASSERT_EQ(foo["children"].size(), 1u);
    EXPECT_EQ(foo["children"][0]["name"], "bar");
    EXPECT_DOUBLE_EQ(foo["children"][0]["value"].get<double>(), 2.5);
    EXPECT_TRUE(foo["children"][0]["children"].empty());
  }
}

TEST(RenderFlameFolded, RoundTripsSortedAndMerged) {
  EXPECT_EQ(RenderFlameFolded(BuildFlameTree(kSeedFolded)),
            "main 2\nmain;foo1 1.5\nmain;foo1;bar 2.5\nmain;foo2 0.5\nmain;foo2;bar 2.5\n");
  EXPECT_EQ(RenderFlameFolded(BuildFlameTree("b 1\na;x 2\nb 3\na-b 1\n")), "a-b 1\na;x 2\nb 4\n");
}

struct DiffFrame {
  std::string name;
  double samples, baseline, delta, width;
  std::string fill;
};

std::vector<DiffFrame> ParseDiffFrames(const std::string& svg) {
  static const std::regex kFrame(
      R"re(<g><title>(.*?) \(([0-9.,]+) samples, [0-9.]+%; baseline ([0-9.,]+), ([+-][0-9.,]+), )re"
      R"re([+-][0-9.]+%\)</title><rect x="[0-9.]+" y="[0-9.]+" width="([0-9.]+)" )re"
      R"re(height="[0-9]+" fill="([^"]+)")re");
  std::vector<DiffFrame> frames;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), kFrame); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    frames.push_back(
        {m[1], std::stod(m[2]), std::stod(m[3]), std::stod(m[4]), std::stod(m[5]), m[6]});
  }
  return frames;
}

TEST(DiffFlame, WidthsFromTheTargetColorsByTheChange) {
  // Same totals (8): a grew by 4, b shrank by 1, c by 3; the largest change is 4.
  const FoldedMap baseline = ParseFoldedMap("main;a 2\nmain;b 2\nmain;c 4\n");
  const FoldedMap target = ParseFoldedMap("main;a 6\nmain;b 1\nmain;c 1\n");
  const FlameTree tree = BuildDiffFlameTree(baseline, target);
  EXPECT_TRUE(tree.differential);
  EXPECT_DOUBLE_EQ(tree.baseline_scale, 1);
  const std::string svg = RenderFlameSvg(tree);
  const std::vector<DiffFrame> f = ParseDiffFrames(svg);
  ASSERT_EQ(f.size(), 5u) << svg;
  const double per_sample = (1200 - 20) / 8.0;
  struct Want {
    const char* name;
    double samples, baseline, delta;
    const char* fill;
  };
  const Want want[] = {
      {"all", 8, 8, 0, "rgb(255,255,255)"}, {"main", 8, 8, 0, "rgb(255,255,255)"},
      {"a", 6, 2, 4, "rgb(255,0,0)"},       // the largest growth: full red
      {"b", 1, 2, -1, "rgb(157,157,255)"},  // a quarter of it: 210 * 3/4 = 157
      {"c", 1, 4, -3, "rgb(52,52,255)"},    // three quarters: 210 * 1/4 = 52
  };
  for (size_t i = 0; i < f.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(f[i].name, want[i].name);
    EXPECT_DOUBLE_EQ(f[i].samples, want[i].samples);
    EXPECT_DOUBLE_EQ(f[i].baseline, want[i].baseline);
    EXPECT_DOUBLE_EQ(f[i].delta, want[i].delta);
    EXPECT_NEAR(f[i].width, want[i].samples * per_sample, 0.006);
    EXPECT_EQ(f[i].fill, want[i].fill);
  }
  EXPECT_NE(svg.find("<title>a (6 samples, 75.00%; baseline 2, +4, +50.00%)</title>"),
            std::string::npos);
  EXPECT_NE(svg.find(">Differential Flame Graph</text>"), std::string::npos);
}

TEST(DiffFlame, BaselineIsNormalizedToTheTargetsTotal) {
  // The baseline sampled half as long: scaled by 2, "a" did not change, "b" doubled its share.
  const FoldedMap baseline = ParseFoldedMap("main;a 3\nmain;b 1\n");
  const FoldedMap target = ParseFoldedMap("main;a 6\nmain;b 4\nmain;b 0.0\n");
  const FlameTree tree = BuildDiffFlameTree(baseline, target);
  EXPECT_DOUBLE_EQ(tree.baseline_scale, 10.0 / 4);
  EXPECT_DOUBLE_EQ(tree.baseline_total, 4);
  const std::vector<DiffFrame> f = ParseDiffFrames(RenderFlameSvg(tree));
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[2].name, "a");
  EXPECT_DOUBLE_EQ(f[2].baseline, 7.5);
  EXPECT_DOUBLE_EQ(f[2].delta, -1.5);
  EXPECT_EQ(f[2].fill, "rgb(0,0,255)");
  EXPECT_EQ(f[3].name, "b");
  EXPECT_DOUBLE_EQ(f[3].delta, 1.5);
  EXPECT_EQ(f[3].fill, "rgb(255,0,0)");
  // A scale that is not exact (10/3) leaves no rounding-error color on unchanged frames.
  const FlameTree thirds = BuildDiffFlameTree(ParseFoldedMap("main;a 3\nmain;b 3\nmain;c 3\n"),
                                              ParseFoldedMap("main;a 10\nmain;b 10\nmain;c 10\n"));
  for (const DiffFrame& d : ParseDiffFrames(RenderFlameSvg(thirds))) {
    EXPECT_EQ(d.fill, "rgb(255,255,255)") << d.name;
  }
  // Raw counts: everything grew.
  const FlameTree raw = BuildDiffFlameTree(baseline, target, /*normalize=*/false);
  const std::vector<DiffFrame> r = ParseDiffFrames(RenderFlameSvg(raw));
  ASSERT_EQ(r.size(), 4u);
  EXPECT_DOUBLE_EQ(r[2].delta, 3);
  EXPECT_DOUBLE_EQ(r[1].delta, 6);           // main: the largest change
  EXPECT_EQ(r[2].fill, "rgb(255,105,105)");  // half of it
  EXPECT_EQ(r[3].fill, "rgb(255,105,105)");  // +3 as well
}

TEST(DiffFlame, SeedTreeAgainstItselfIsWhiteWithSeedWidths) {
  const FoldedMap seed = ParseFoldedMap(kSeedFolded);
  const std::vector<DiffFrame> f = ParseDiffFrames(RenderFlameSvg(BuildDiffFlameTree(seed, seed)));
  ASSERT_EQ(f.size(), 6u);
  const double per_sample = (1200 - 20) / 9.0;
  const double want[] = {9, 9, 4, 2.5, 3, 2.5};
  for (size_t i = 0; i < f.size(); ++i) {
    EXPECT_NEAR(f[i].width, want[i] * per_sample, 0.006);
    EXPECT_EQ(f[i].fill, "rgb(255,255,255)");
    EXPECT_DOUBLE_EQ(f[i].delta, 0);
  }
}

TEST(DiffFlame, FoldedAndJsonCarryBothCounts) {
  const FoldedMap baseline = ParseFoldedMap("main;a 2\nmain;gone 2\n");
  const FoldedMap target = ParseFoldedMap("main;a 3\nmain;new 5\n");
  EXPECT_EQ(FormatDiffFolded(baseline, target), "main;a 4 3\nmain;gone 4 0\nmain;new 0 5\n");
  EXPECT_EQ(FormatDiffFolded(baseline, target, false), "main;a 2 3\nmain;gone 2 0\nmain;new 0 5\n");
  const FlameTree tree = BuildDiffFlameTree(baseline, target);
  const nlohmann::json j = nlohmann::json::parse(RenderFlameJson(tree));
  EXPECT_EQ(j["value"], 8);
  EXPECT_EQ(j["baseline"], 8);
  EXPECT_EQ(j["delta"], 0);
  const nlohmann::json& main = j["children"][0];
  ASSERT_EQ(main["children"].size(), 3u);  // a, gone (value 0), new
  EXPECT_EQ(main["children"][0]["name"], "a");
  EXPECT_EQ(main["children"][0]["delta"], -1);
  EXPECT_EQ(main["children"][1]["name"], "gone");
  EXPECT_EQ(main["children"][1]["value"], 0);
  EXPECT_EQ(main["children"][1]["delta"], -4);
  EXPECT_EQ(main["children"][2]["delta"], 5);
  // A frame only in the baseline has no width: not drawn.
  EXPECT_EQ(RenderFlameSvg(tree).find("<title>gone"), std::string::npos);
}

}  // namespace
}  // namespace trailmap
