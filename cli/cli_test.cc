// The commands run as main() runs them, against fake aggregators: exit codes and what they print.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_common.h"
#include "cli/testing_cli.h"
#include "query/testing/fake_aggregator.h"
#include "cli/heatmap_command.h"
#include "query/draw/raster.h"
#include "cli/stats_command.h"

namespace trailmap {
namespace {

using Harness = testing::CliHarness;

TEST(Cli, StatsWithOneShardSilentExitsThreeAndNamesIt) {
  Harness h;
  testing::FakeAggregator good(h.zmq, testing::CannedAnswer("agg-1", "web-1", 5'000'000, 7));
  testing::FakeAggregator silent(h.zmq, Answer{}, /*silent=*/true);
  StatsFlags flags;
  flags.query.metric = "disk.latency";
  flags.query.by = "host";
  flags.query.from = "-1m";
  flags.query.timeout = "300ms";
  flags.query.aggregators = good.endpoint() + "," + silent.endpoint();
  flags.format = "json";
  EXPECT_EQ(RunStats(flags, h.context), kExitPartial);
  const auto j = nlohmann::json::parse(h.out.str());
  ASSERT_EQ(j["rows"].size(), 1u);  // the output is still produced from the other shard
  EXPECT_EQ(j["rows"][0]["group"], "web-1");
  EXPECT_EQ(j["rows"][0]["count"], 7);
  ASSERT_EQ(j["missing_shards"].size(), 1u);
  EXPECT_NE(h.err.str().find(silent.endpoint()), std::string::npos) << h.err.str();
  EXPECT_NE(h.err.str().find("did not answer"), std::string::npos) << h.err.str();
  EXPECT_EQ(good.last_histogram_query().histograms.from, 1'700'000'000);
  EXPECT_EQ(good.last_histogram_query().histograms.to, 1'700'000'060);
}

TEST(Cli, HeatmapFromAllShardsExitsZero) {
  Harness h;
  testing::FakeAggregator a(h.zmq, testing::CannedAnswer("agg-1", "", 5'000'000, 7));
  testing::FakeAggregator b(h.zmq, testing::CannedAnswer("agg-2", "", 5'000'000, 5));
  HeatmapFlags flags;
  flags.query.metric = "disk.latency";
  flags.query.from = "-1m";
  flags.query.aggregators = a.endpoint() + "," + b.endpoint();
  flags.format = "json";
  EXPECT_EQ(RunHeatmap(flags, h.context), kExitOk) << h.err.str();
  const auto j = nlohmann::json::parse(h.out.str());
  EXPECT_EQ(j["total"], 12);
  EXPECT_EQ(j["columns"], 60);
  EXPECT_EQ(j["ymax"], 10'000'000);
  EXPECT_TRUE(h.err.str().empty()) << h.err.str();
}

TEST(Cli, NoShardAnsweringExitsThree) {
  Harness h;
  testing::FakeAggregator silent(h.zmq, Answer{}, /*silent=*/true);
  HeatmapFlags flags;
  flags.query.metric = "disk.latency";
  flags.query.timeout = "200ms";
  flags.query.aggregators = silent.endpoint();
  flags.format = "json";
  EXPECT_EQ(RunHeatmap(flags, h.context), kExitPartial);
  // The document a partial answer prints, with no data and the silent shard missing.
  const auto j = nlohmann::json::parse(h.out.str());
  EXPECT_EQ(j["view"], "heatmap");
  EXPECT_EQ(j["total"], 0);
  ASSERT_EQ(j["missing_shards"].size(), 1u);
  EXPECT_EQ(j["missing_shards"][0], silent.endpoint() + ": no answer within 200 ms");
  EXPECT_EQ(h.err.str(), "trailmap: partial result, 1 shard did not answer:\n  " +
                             silent.endpoint() + ": no answer within 200 ms\n");
}

TEST(Cli, UsageErrorsExitTwoAndSayWhatToFix) {
  Harness h;
  HeatmapFlags flags;
  flags.query.metric = "disk.latency";
  flags.query.aggregators = "127.0.0.1:1";
  flags.query.from = "yesterday";
  EXPECT_EQ(RunHeatmap(flags, h.context), kExitUsage);
  EXPECT_NE(h.err.str().find("RFC 3339"), std::string::npos);

  flags.query.from = "-5m";
  flags.ymax = "20 parsecs";
  EXPECT_EQ(RunHeatmap(flags, h.context), kExitUsage);
  flags.ymax = "";
  flags.clip = "lots";
  EXPECT_EQ(RunHeatmap(flags, h.context), kExitUsage);
  flags.clip = "";
  flags.step = "1.5s";
  EXPECT_EQ(RunHeatmap(flags, h.context), kExitUsage);
  flags.step = "";
  flags.query.timeout = "soon";
  EXPECT_EQ(RunHeatmap(flags, h.context), kExitUsage);

  StatsFlags stats;
  stats.query.metric = "disk.latency";
  stats.sort = "p42";
  EXPECT_EQ(RunStats(stats, h.context), kExitUsage);
  EXPECT_NE(h.err.str().find("p99"), std::string::npos);
}

// The CLI goes through the same runners as trailmap-query: a name that does not validate, a
// timeout over the cap or a picture over the pixel budget exits 2 at once, naming the flag, and
// no shard is asked (the one here never answers).
TEST(Cli, HostileNamesTimeoutsAndSizesExitTwoBeforeAnyShardIsAsked) {
  Harness h;
  testing::FakeAggregator silent(h.zmq, Answer{}, /*silent=*/true);
  const auto usage = [&](HeatmapFlags flags) {
    Harness run;
    flags.query.aggregators = silent.endpoint();
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(RunHeatmap(flags, run.context), kExitUsage) << run.err.str();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << run.err.str();
    return run.err.str();
  };
  HeatmapFlags flags;
  flags.query.timeout = "3s";  // were anything asked, the test would wait this long
  flags.query.metric = "\xff";
  EXPECT_EQ(usage(flags),
            "trailmap heatmap: --metric \"\\xff\": a metric name is 1 to 128 bytes of A-Z a-z "
            "0-9 _ . -\n");
  flags.query.metric = std::string("a\r\nb");
  EXPECT_NE(usage(flags).find("--metric \"a\\x0d\\x0ab\""), std::string::npos);
  flags.query.metric = "m";
  flags.query.by = std::string("op\0", 3);
  EXPECT_NE(usage(flags).find("--by \"op\\x00\""), std::string::npos);
  flags.query.by = "";
  flags.query.timeout = "2m";
  EXPECT_EQ(usage(flags),
            "trailmap heatmap: --timeout 2m: at most 60s (a query waits at most that long for "
            "its shards)\n");
  flags.query.timeout = "3s";
  flags.format = "png";
  flags.width = 20000;
  flags.height = 10000;
  EXPECT_EQ(usage(flags),
            "trailmap heatmap: --width 20000 × --height 10000 is 200,000,000 pixels, at most "
            "16,777,216 (16 Mi): ask for a smaller picture\n");
}

// Options that are not UTF-8 are refused as trailmap-query refuses such parameters; paths are
// not checked (a file name may be any bytes).
TEST(Cli, OptionsThatAreNotUtf8AreUsageErrors) {
  CLI::App app{"t"};
  HeatmapFlags flags;
  CLI::App* command = AddHeatmapCommand(&app, &flags);
  const auto check = [&](std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());  // CLI11 takes them last first
    app.clear();
    app.parse(args);
    return CheckOptionsAreUtf8(*command);
  };
  EXPECT_TRUE(check({"heatmap", "--metric", "m", "--where", "host == \"\xc3\xa9\""}).ok());
  EXPECT_EQ(check({"heatmap", "--metric", "m", "--select", "a,\xff", "--by", "host"}).message(),
            "--select \"a,\\xff\": not valid UTF-8");
  EXPECT_EQ(check({"heatmap", "--metric", "m", "--overlay", "p9\xed\xa0\x80"}).message(),
            "--overlay \"p9\\xed\\xa0\\x80\": not valid UTF-8");
  // An option with a fixed set of values is refused by CLI11 itself, naming it (exit 2).
  EXPECT_THROW(check({"heatmap", "--metric", "m", "--palette", "\xff"}), CLI::ValidationError);
  EXPECT_EQ(check({"heatmap", "--metric", "m", "--where", "\xff"}).message(),
            "--where \"\\xff\": not valid UTF-8");
  EXPECT_EQ(check({"heatmap", "-m", "m", "--by", "\xc0\xaf"}).message(),
            "--by \"\\xc0\\xaf\": not valid UTF-8");
  EXPECT_TRUE(check({"heatmap", "--metric", "m", "-o", "/tmp/\xff.png"}).ok());
}

TEST(Cli, HeatmapPngAndCellDetails) {
  Harness h;
  testing::FakeAggregator a(h.zmq, testing::CannedAnswer("agg-1", "web-1", 5'000'000, 7));
  HeatmapFlags flags;
  flags.query.metric = "disk.latency";
  flags.query.from = "-1m";
  flags.query.by = "host";
  flags.query.aggregators = a.endpoint();
  flags.format = "png";
  flags.per_column = true;
  flags.overlay = "p50,p99";
  ASSERT_EQ(RunHeatmap(flags, h.context), kExitOk) << h.err.str();
  Result<Canvas> png = DecodePng(h.out.str());
  ASSERT_TRUE(png.ok()) << png.status().message();
  // A minute in 60 columns of 16 px and 50 rows of 9 px (960 × 450): the side panel and the
  // value labels (84 + 84) left, 28 right, 76 of titles above and 116 of axis and legend below.
  EXPECT_EQ(png->width(), 84 + 84 + 60 * 16 + 28);
  EXPECT_EQ(png->height(), 76 + 50 * 9 + 116);

  h.out.str("");
  flags.format = "json";
  flags.at = "1700000000,5ms";
  ASSERT_EQ(RunHeatmap(flags, h.context), kExitOk) << h.err.str();
  const auto j = nlohmann::json::parse(h.out.str());
  EXPECT_EQ(j["view"], "heatmap_cell");
  // The 5 ms bucket straddles a row boundary, so the cell holds part of the 7 events.
  EXPECT_GE(j["count"], 1);
  ASSERT_EQ(j["hosts"].size(), 1u);
  EXPECT_EQ(j["hosts"][0]["host"], "web-1");
  EXPECT_EQ(j["hosts"][0]["count"], j["count"]);

  flags.at = "1700000000,5ms,";  // no value after the last comma
  EXPECT_EQ(RunHeatmap(flags, h.context), kExitUsage);
  flags.at = "";
  flags.overlay = "p0";
  EXPECT_EQ(RunHeatmap(flags, h.context), kExitUsage);
}

}  // namespace
}  // namespace trailmap
