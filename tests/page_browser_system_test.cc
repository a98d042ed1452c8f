// The web page in a real browser: Debian's headless chromium, driven by tests/browser/page_test.mjs
// (puppeteer-core), against trailmap-query over a real two-aggregator cluster on loopback.
//
// The fleet: 12 hosts with fast requests (1-5 ms) for 120 s; three planted slow hosts (web-03,
// web-07, web-11) also serve slow ones (150-250 ms) in seconds 40..80, and only there and then
// their CPU stacks burn `compress_planted_slowly`. The page must show what the CLI prints: a
// clicked cell's count and hosts are `trailmap heatmap --at`'s, a rectangle over the slow band
// names the burning function and exactly the slow hosts, the columns sorted by p99 start with the
// slow hosts, the outliers action finds them, the region's address restores the region, and a
// node with a shard that does not answer shows a banner naming it.
// Screenshots go to BUILD/page-screenshots/ to be looked at.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "core/sha256.h"
#include "tests/cluster.h"
#include "tests/http_client.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

const std::set<std::string> kSlowHosts = {"web-03", "web-07", "web-11"};
constexpr int kSeconds = 120, kSlowFrom = 40, kSlowTo = 80;

std::string HostName(int i) { return (i < 9 ? "web-0" : "web-") + std::to_string(i + 1); }

// `time latency` lines (microseconds): 20 fast requests a second, and for a slow host 20 slow ones
// a second in [kSlowFrom, kSlowTo).
std::string LatencyTrace(int64_t t0, bool slow) {
  std::string out = "time latency\n";
  for (int s = 0; s < kSeconds; ++s) {
    for (int i = 0; i < 20; ++i) {
      const int64_t at = (t0 + s) * 1'000'000 + i * 40'000;
      out += std::to_string(at) + " " + std::to_string(1000 + (i * 211 + s * 37) % 4000) + "\n";
      if (slow && s >= kSlowFrom && s < kSlowTo) {
        out += std::to_string(at + 1) + " " +
               std::to_string(150'000 + (i * 5003 + s * 7919) % 100'000) + "\n";
      }
    }
  }
  return out;
}

// perf script text: each second 10 samples in parse_request and 5 idle; a slow host in its slow
// seconds also 30 in compress_planted_slowly.
std::string PerfScript(bool slow) {
  std::string out;
  const auto sample = [&out](int s, int k, const char* leaf, const char* parent) {
    char head[96];
    snprintf(head, sizeof head, "app 100 [000] %d.%06d: 1 cpu-clock:\n", 1000 + s, k * 10'000);
    out += head;
    out += std::string("\t1 ") + leaf + " (/usr/bin/app)\n";
    if (parent[0]) out += std::string("\t2 ") + parent + " (/usr/bin/app)\n";
    out += "\t3 main (/usr/bin/app)\n\n";
  };
  for (int s = 0; s < kSeconds; ++s) {
    int k = 0;
    for (int i = 0; i < 10; ++i) sample(s, k++, "parse_request", "serve");
    for (int i = 0; i < 5; ++i) sample(s, k++, "idle", "");
    if (slow && s >= kSlowFrom && s < kSlowTo) {
      for (int i = 0; i < 30; ++i) sample(s, k++, "compress_planted_slowly", "serve");
    }
  }
  return out;
}

// The offsets (`time offset` in microseconds) of PerfScript's samples, 5 ms later so that none
// sits on a 20 ms row's edge: 15 a second at 5, 15, .. 145 ms, and in a slow host's slow seconds
// 30 more at 155 .. 445 ms.
std::string OffsetsTrace(int64_t t0, bool slow) {
  std::string out = "time latency\n";
  for (int s = 0; s < kSeconds; ++s) {
    const int samples = slow && s >= kSlowFrom && s < kSlowTo ? 45 : 15;
    for (int k = 0; k < samples; ++k) {
      const int64_t offset = k * 10'000 + 5'000;
      out += std::to_string((t0 + s) * 1'000'000 + offset) + " " + std::to_string(offset) + "\n";
    }
  }
  return out;
}

TEST(PageBrowserSystem, ThePageShowsWhatTheCliPrints) {
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/chromium"))
      << "the browser test needs Debian's chromium (scripts/install-deps installs it)";
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-2"));
  for (auto& a : aggs) a->Start();
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const int64_t t0 = (now - 3600) / 60 * 60;
  for (int h = 0; h < 12; ++h) {
    const std::string host = HostName(h);
    const bool slow = kSlowHosts.count(host) > 0;
    WriteFile(dir / (host + ".trace"), LatencyTrace(t0, slow));
    CommandResult r = RunProgram({Binary("trailmap"), "import", "--quiet", "--host", host,
                                  "--metric", "http.latency", "--time-unit", "us", "--value-unit",
                                  "us", "--ingest", IngestList(aggs), dir / (host + ".trace")});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    WriteFile(dir / (host + ".perf"), PerfScript(slow));
    r = RunProgram({Binary("trailmap"), "import", "--quiet", "--stacks", "--host", host, "--time",
                    std::to_string(t0), "--ingest", IngestList(aggs), dir / (host + ".perf")});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    // The same samples' offsets within their seconds, as an agent's perf source records them
    // (cpu.offsets, agent/perf_source.h): sample k of a second is k * 10 ms into it.
    WriteFile(dir / (host + ".offsets"), OffsetsTrace(t0, slow));
    r = RunProgram({Binary("trailmap"), "import", "--quiet", "--host", host, "--metric",
                    "cpu.offsets", "--time-unit", "us", "--value-unit", "us", "--ingest",
                    IngestList(aggs), dir / (host + ".offsets")});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  // The node needs a bearer token: the page takes it from #token= in its address.
  const std::string token = "page-test-token";
  WriteFile(dir / "tokens.txt", "# the browser test's\nbrowser " + Sha256Hex(token) + "\n");
  const int port = FreePort();
  Process server({Binary("trailmap-query"), "--listen", "127.0.0.1:" + std::to_string(port),
                  "--aggregators", QueryList(aggs), "--tokens", dir / "tokens.txt"},
                 dir.path(), "trailmap-query");
  ASSERT_TRUE(WaitFor([port] { return HttpGet(port, "/").status == 200; }, 10s)) << server.Stderr();

  // The heat map the page will draw (the same parameters): the cell to click is the fullest of
  // column 60 above 100 ms, the region rows 140..270 ms of seconds 45..75.
  const std::string from = std::to_string(t0), to = std::to_string(t0 + kSeconds);
  const std::vector<std::string> view = {"--metric", "http.latency", "--from", from, "--to", to};
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--format", "json"});
    CommandResult r = Cli(args, QueryList(aggs));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  std::vector<std::string> args = {"heatmap"};
  args.insert(args.end(), view.begin(), view.end());
  const nlohmann::json heatmap = cli(args);
  ASSERT_EQ(heatmap["columns"].get<int>(), kSeconds);
  const auto& bounds = heatmap["row_bounds"];
  int cell_row = -1;
  for (int r = 0; r < heatmap["rows"].get<int>(); ++r) {
    if (bounds[r][0].get<uint64_t>() < 100'000'000) continue;
    if (cell_row < 0 || heatmap["counts"][r][60] > heatmap["counts"][cell_row][60]) cell_row = r;
  }
  ASSERT_GE(cell_row, 0);
  ASSERT_GT(heatmap["counts"][cell_row][60].get<int>(), 0);
  int band_low = -1, band_high = -1;
  for (int r = 0; r < heatmap["rows"].get<int>(); ++r) {
    if (band_low < 0 && bounds[r][1].get<uint64_t>() > 140'000'000) band_low = r;
    if (bounds[r][0].get<uint64_t>() < 270'000'000) band_high = r;
  }

  // A second node that also lists an aggregator nobody runs: every document lacks that shard.
  const int lame_port = FreePort();
  const std::string dead = "127.0.0.1:" + std::to_string(FreePort());
  Process lame({Binary("trailmap-query"), "--listen", "127.0.0.1:" + std::to_string(lame_port),
                "--aggregators", QueryList(aggs) + "," + dead, "--timeout", "500ms"},
               dir.path(), "trailmap-query-lame");
  ASSERT_TRUE(WaitFor([lame_port] { return HttpGet(lame_port, "/").status == 200; }, 10s))
      << lame.Stderr();

  const std::string shots = std::string(TRAILMAP_BIN_DIR) + "/../page-screenshots";
  std::filesystem::create_directories(shots);
  const nlohmann::json request = {
      {"url", "http://127.0.0.1:" + std::to_string(port) + "/?metric=http.latency&from=" + from +
                  "&to=" + to + "#token=" + token},
      {"token", token},
      {"out", shots},
      {"cell", {cell_row, 60}},
      {"region", {band_low, 45, band_high, 75}},
      {"legend_host", "web-07"},
      {"live", true},
      {"subsecond", {45, 10, 45, 30}},
      {"subsecond_where", "host =~ \"web-0[37]\""},
      {"missing_url", "http://127.0.0.1:" + std::to_string(lame_port) +
                          "/?metric=http.latency&from=" + from + "&to=" + to}};
  const CommandResult run = RunProgram(
      {std::string(TRAILMAP_SOURCE_DIR) + "/tests/browser/run.sh", "page_test.mjs", request.dump()},
      180s);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json page = nlohmann::json::parse(run.out);
  ASSERT_FALSE(page.contains("failure")) << page["failure"] << "\n" << run.out;
  EXPECT_TRUE(page["errors"].empty()) << page["errors"];
  EXPECT_TRUE(page["console"].empty()) << page["console"];
  EXPECT_EQ(page["recolor_mismatches"], 0);
  // Without the token the API answers 401, and the page says so once its prompt is dismissed.
  // (one banner per view the page asked for: the heat map's and the columns')
  ASSERT_FALSE(page["no_token_banners"].empty()) << page["no_token_banners"];
  for (const auto& banner : page["no_token_banners"]) {
    EXPECT_NE(banner.get<std::string>().find(
                  ": this API needs a bearer token: send the header \"Authorization: Bearer "
                  "TOKEN\""),
              std::string::npos)
        << banner;
  }

  // The cell's panel: the numbers of `trailmap heatmap --at`, for the same time and value.
  const uint64_t low = bounds[cell_row][0], high = bounds[cell_row][1];
  args = {"heatmap", "--at", std::to_string(t0 + 60) + "," + std::to_string((low + high) / 2)};
  args.insert(args.end(), view.begin(), view.end());
  const nlohmann::json at = cli(args);
  EXPECT_EQ(page["cell"]["count"], at["count"]);
  EXPECT_EQ(page["cell"]["count"], heatmap["counts"][cell_row][60]);
  ASSERT_EQ(page["cell"]["hosts"].size(), at["hosts"].size());
  for (size_t i = 0; i < at["hosts"].size(); ++i) {
    EXPECT_EQ(page["cell"]["hosts"][i][0], at["hosts"][i]["host"]);
    EXPECT_EQ(page["cell"]["hosts"][i][1], at["hosts"][i]["count"]);
    EXPECT_TRUE(kSlowHosts.count(at["hosts"][i]["host"].get<std::string>()));
  }

  // The region: the burning function first, exactly the slow hosts, the CLI's selection.
  ASSERT_FALSE(page["region"]["top"].empty());
  EXPECT_EQ(page["region"]["top"][0].get<std::string>().rfind("compress_planted_slowly", 0), 0u)
      << page["region"]["top"];
  const nlohmann::json& selection = page["region"]["selection"];
  std::set<std::string> selected;
  for (const auto& h : selection["hosts"]) selected.insert(h["host"].get<std::string>());
  EXPECT_EQ(selected, kSlowHosts);
  args = {"flame", "--region", selection["region"].get<std::string>()};
  args.insert(args.end(), view.begin(), view.end());
  const nlohmann::json flame = cli(args);
  EXPECT_EQ(flame["region"], selection);
  // The page's search share of compress_planted_slowly is the CLI graph's: samples under
  // matching frames (a match inside a match counted once) over the root's.
  std::function<double(const nlohmann::json&)> matched = [&](const nlohmann::json& node) {
    if (node["name"].get<std::string>().find("compress_planted") != std::string::npos) {
      return node["value"].get<double>();
    }
    double sum = 0;
    if (node.contains("children")) {
      for (const nlohmann::json& child : node["children"]) sum += matched(child);
    }
    return sum;
  };
  const double share = matched(flame) / flame["value"].get<double>();
  EXPECT_GT(share, 0.5);  // the selected host-seconds burn it
  char said[64];
  std::snprintf(said, sizeof said, "matched: %.1f%% of samples", share * 100);
  EXPECT_EQ(page["search"], said) << share;
  EXPECT_EQ(page["restored_region"], selection["region"]);

  // The y zoom asked for the dragged rows' bounds and drew the CLI's heat map of that band.
  const nlohmann::json& zoom = page["zoom"];
  ASSERT_TRUE(zoom["ymin"].is_string()) << zoom.dump().substr(0, 300);
  EXPECT_EQ(zoom["ymin"], std::to_string(bounds[band_low][0].get<uint64_t>()));
  EXPECT_EQ(zoom["ymax"], std::to_string(bounds[band_high][1].get<uint64_t>()));
  args = {"heatmap", "--ymin", zoom["ymin"].get<std::string>() + "ns", "--ymax",
          zoom["ymax"].get<std::string>() + "ns"};
  args.insert(args.end(), view.begin(), view.end());
  const nlohmann::json zoomed = cli(args);
  EXPECT_EQ(zoom["row_bounds"], zoomed["row_bounds"]);
  EXPECT_EQ(zoom["counts"], zoomed["counts"]);
  EXPECT_LT(zoomed["row_bounds"][0][1].get<uint64_t>() - zoomed["row_bounds"][0][0].get<uint64_t>(),
            bounds[band_low][1].get<uint64_t>() - bounds[band_low][0].get<uint64_t>());  // finer
  EXPECT_TRUE(page["unzoomed_ymax"].is_null()) << page["unzoomed_ymax"];

  // The legend of a heat map by host: 'only' and 'hide' of web-07 draw the CLI's --isolate and
  // --exclude maps, and between them hold every event.
  uint64_t legend_events = 0;
  for (const char* mode : {"isolate", "exclude"}) {
    const nlohmann::json& shown = page["legend"][mode];
    EXPECT_NE(shown["url"].get<std::string>().find(std::string(mode) + "=1"), std::string::npos);
    args = {"heatmap", "--by", "host", "--select", "web-07", std::string("--") + mode};
    args.insert(args.end(), view.begin(), view.end());
    const nlohmann::json expected = cli(args);
    EXPECT_EQ(shown["counts"], expected["counts"]) << mode;
    EXPECT_EQ(shown["groups"], expected["groups"]) << mode;
    for (const auto& row : shown["counts"]) {
      for (const auto& n : row) legend_events += n.get<uint64_t>();
    }
  }
  uint64_t all_events = 0;
  for (const auto& row : heatmap["counts"]) {
    for (const auto& n : row) all_events += n.get<uint64_t>();
  }
  EXPECT_EQ(legend_events, all_events);

  // Live: one-second columns, and the window moved on by whole seconds while keeping its width.
  const nlohmann::json& live = page["live"];
  EXPECT_EQ(live["first"]["step"], 1);
  EXPECT_EQ(live["first"]["to"].get<int64_t>() - live["first"]["from"].get<int64_t>(), 60);
  EXPECT_GE(live["later"]["to"].get<int64_t>(), live["first"]["to"].get<int64_t>() + 2);
  EXPECT_EQ(live["later"]["to"].get<int64_t>() - live["later"]["from"].get<int64_t>(), 60);
  EXPECT_EQ(live["later"]["times"], live["first"]["columns"]);
  EXPECT_EQ(live["later"]["stream"], 1);  // EventSource.OPEN

  // Columns by p99: the slow hosts first. Outliers: exactly them.
  ASSERT_GE(page["columns"].size(), 12u);
  EXPECT_EQ((std::set<std::string>{page["columns"][0], page["columns"][1], page["columns"][2]}),
            kSlowHosts);
  std::set<std::string> outliers;
  for (const auto& h : page["outliers"]) outliers.insert(h.get<std::string>());
  EXPECT_EQ(outliers, kSlowHosts);
  EXPECT_EQ(page["focus"], page["columns"][0]);
  // The sub-second tab draws the CLI's map of cpu.offsets (12 hosts: 15 samples a second at 5,
  // 15, .. 145 ms, two a 20 ms row; 3 of them 30 more up to 445 ms in seconds 40..79), and a drag
  // within second 45 from row 10 (200 ms) to row 30 (up to 620 ms) gives the flame graph of that
  // whole second.
  const nlohmann::json& sub = page["subsecond"];
  const nlohmann::json map = cli({"subsecond", "--from", from, "--to", to});
  EXPECT_EQ(sub["counts"], map["counts"]);
  EXPECT_EQ(map["samples"], 12 * 15 * kSeconds + 3 * 30 * (kSlowTo - kSlowFrom));
  EXPECT_EQ(map["max_count"], 24);
  EXPECT_EQ(map["counts"][10][0], 24);  // second 10: every host twice in 0..20 ms
  EXPECT_EQ(map["counts"][10][7], 12);  // once in 140..160 ms
  EXPECT_EQ(map["counts"][10][8], 0);
  EXPECT_EQ(map["counts"][45][7], 15);  // second 45: the slow hosts' 150 ms too
  EXPECT_EQ(map["counts"][45][21], 6);
  EXPECT_EQ(map["counts"][45][22], 3);
  EXPECT_EQ(map["counts"][45][23], 0);
  EXPECT_EQ(sub["range"], "45.200..45.620");
  const nlohmann::json range =
      cli({"subsecond", "--from", from, "--to", to, "--range", "45.200..45.620"});
  EXPECT_EQ(range["value"], 12 * 15 + 3 * 30);  // every sample of second 45
  EXPECT_EQ(sub["flame_value"], range["value"]);
  EXPECT_EQ(range["range"]["from"], t0 + 45);
  EXPECT_EQ(range["range"]["to"], t0 + 46);
  EXPECT_NE(
      sub["caption"].get<std::string>().find("(1 s; stacks are counted per second): 270 samples"),
      std::string::npos)
      << sub["caption"];
  // Second 45's self samples: 120 parse_request, 90 compress_planted_slowly (the slow hosts).
  ASSERT_GE(sub["top"].size(), 2u) << sub["top"];
  EXPECT_EQ(sub["top"][0], "parse_request — 44.4%");
  EXPECT_EQ(sub["top"][1], "compress_planted_slowly — 33.3%");
  // With the heat map's where, the map of the two slow hosts it keeps, as the CLI draws it.
  const nlohmann::json& kept = page["subsecond_where"];
  const nlohmann::json kept_map =
      cli({"subsecond", "--from", from, "--to", to, "--where", "host =~ \"web-0[37]\""});
  EXPECT_EQ(kept["counts"], kept_map["counts"]);
  EXPECT_EQ(kept["samples"], 2 * 15 * kSeconds + 2 * 30 * (kSlowTo - kSlowFrom));
  EXPECT_NE(kept["caption"].get<std::string>().find(" · where host =~ \"web-0[37]\""),
            std::string::npos)
      << kept["caption"];
  // The missing shard is a banner that names it.
  ASSERT_FALSE(page["missing_banners"].empty());
  EXPECT_NE(page["missing_banners"][0].get<std::string>().find(dead), std::string::npos)
      << page["missing_banners"];
  std::cout << "first paint " << page["first_paint_ms"] << " ms; screenshots in " << shots << "\n";
}

}  // namespace
}  // namespace trailmap::test
