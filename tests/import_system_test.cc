// (b) `trailmap import` of a generated trace2heatmap trace goes through the real ingest path, and
// `trailmap heatmap --format json` then gives the same cell counts as counting the trace
// directly under the same rows and step. The only events allowed to land in another row than
// the direct count puts them in are those whose histogram bucket straddles a row edge.
// An HdrHistogram interval log written by the Java HdrHistogram (ingest/testdata/hlog) imports
// with --hlog into a real aggregator with every count exact, each interval in its own second; a
// log or a trace with a bad line stores nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "core/histogram.h"
#include "tests/cluster.h"

namespace trailmap::test {
namespace {

constexpr int kRows = 25;
constexpr int kStep = 10;
constexpr int kSeconds = 120;
constexpr uint64_t kYmaxNs = 10'000'000;  // 10 ms
constexpr double kRowNs = static_cast<double>(kYmaxNs) / kRows;

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST(ImportSystem, HeatmapCellsEqualADirectCountOfTheTrace) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs[0]->Start();

  const int64_t t0 = (UnixNow() - 3600) / kStep * kStep;  // an hour ago: backfilling past data
  const int cols = kSeconds / kStep;

  // The trace: event time and latency, both in microseconds, with a header line.
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> fast(std::log(60.0), 0.4), disk(std::log(3000.0), 0.6);
  std::uniform_real_distribution<double> pick(0, 1);
  std::uniform_int_distribution<int64_t> when(0, int64_t{kSeconds} * 1'000'000 - 1);
  std::vector<std::vector<int64_t>> direct(kRows, std::vector<int64_t>(cols, 0));
  std::vector<std::vector<int64_t>> edge(kRows, std::vector<int64_t>(cols, 0));  // straddling events
  int64_t above = 0, above_edge = 0;
  const int events = 60'000;
  std::string trace = "time latency\n";
  for (int i = 0; i < events; ++i) {
    const int64_t t_us = t0 * 1'000'000 + when(rng);
    const double p = pick(rng);
    const uint64_t v_us = 1 + static_cast<uint64_t>(p < 0.6 ? fast(rng) : p < 0.995 ? disk(rng) : 20'000 + pick(rng) * 200'000);
    trace += std::to_string(t_us) + " " + std::to_string(v_us) + "\n";
    const uint64_t v_ns = v_us * 1000;
    const int col = static_cast<int>((t_us / 1'000'000 - t0) / kStep);
    const uint32_t b = BucketIndex(v_ns);
    const double lo = static_cast<double>(BucketLower(b)), hi = static_cast<double>(BucketUpper(b));
    const bool straddles = std::floor(lo / kRowNs) != std::floor(hi / kRowNs);
    if (v_ns >= kYmaxNs) {
      ++above;
      above_edge += straddles;
      edge[kRows - 1][col] += straddles;  // may be drawn in the top row
      continue;
    }
    const int row = static_cast<int>(static_cast<double>(v_ns) / kRowNs);
    ++direct[row][col];
    edge[row][col] += straddles;
    if (row == kRows - 1) above_edge += straddles;
  }
  WriteFile(dir / "trace.txt", trace);

  CommandResult imp = RunProgram({Binary("trailmap"), "import", "--host", "db-7", "--metric", "disk.latency", "--time-unit",
                           "us", "--value-unit", "us", "--ingest", aggs[0]->ingest(), dir / "trace.txt"});
  ASSERT_EQ(imp.exit_code, 0) << imp.out << imp.err << aggs[0]->Log();

  CommandResult r = Cli({"heatmap", "--metric", "disk.latency", "--from", std::to_string(t0), "--to",
                         std::to_string(t0 + kSeconds), "--step", std::to_string(kStep), "--rows",
                         std::to_string(kRows), "--ymax", "10ms", "--format", "json"},
                        aggs[0]->query());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("rows").get<int>(), kRows);
  ASSERT_EQ(j.at("columns").get<int>(), cols);
  EXPECT_EQ(j.at("total").get<int64_t>(), events);
  EXPECT_EQ(j.at("column_times")[1].get<int64_t>(), t0 + kStep);
  EXPECT_NEAR(j.at("row_bounds")[1][0].get<double>(), kRowNs, 1e-6);
  EXPECT_LE(std::abs(j.at("above").get<int64_t>() - above), above_edge);

  int64_t drawn = 0, direct_drawn = 0, straddling = 0, differing = 0;
  for (int row = 0; row < kRows; ++row) {
    for (int col = 0; col < cols; ++col) {
      const int64_t got = j.at("counts")[row][col].get<int64_t>();
      int64_t slack = edge[row][col];
      if (row > 0) slack += edge[row - 1][col];
      if (row + 1 < kRows) slack += edge[row + 1][col];
      EXPECT_LE(std::abs(got - direct[row][col]), slack) << "row " << row << " column " << col;
      drawn += got;
      direct_drawn += direct[row][col];
      straddling += edge[row][col];
      differing += std::abs(got - direct[row][col]);
    }
  }
  // Every event is somewhere: what is drawn differs from the direct count only by straddling
  // events that crossed the top edge, and cells differ by no more than twice the straddlers
  // (each one that moves leaves one cell and enters another).
  EXPECT_LE(std::abs(drawn - direct_drawn), above_edge);
  EXPECT_LE(differing, 2 * (straddling + above_edge));
  EXPECT_GT(direct_drawn, events * 9 / 10);
  RecordProperty("events_in_other_row", std::to_string(differing));
}

// The whole file is checked before anything is sent: a bad third line leaves the aggregator
// without the two good lines before it, and the same two lines alone import and are found by the
// same query.
TEST(ImportSystem, ABadLineStopsTheImportNamingTheLineAndStoresNothing) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs[0]->Start();
  const int64_t t0 = UnixNow() - 3600;
  const std::string good =
      std::to_string(t0) + " 12\n" + std::to_string(t0 + 1) + " 15\n";  // seconds, us
  WriteFile(dir / "bad.txt", good + std::to_string(t0 + 2) + " twelve\n");
  WriteFile(dir / "good.txt", good);
  auto import = [&](const std::string& file) {
    return RunProgram({Binary("trailmap"), "import", "--host", "db-7", "--metric", "disk.latency",
                       "--time-unit", "s", "--ingest", aggs[0]->ingest(), dir / file});
  };
  auto stored = [&] {
    CommandResult r = Cli(
        {"heatmap", "--metric", "disk.latency", "--hosts", "db-7", "--from", std::to_string(t0 - 5),
         "--to", std::to_string(t0 + 5), "--step", "1", "--format", "json"},
        aggs[0]->query());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out).at("total").get<int64_t>();
  };

  CommandResult refused = import("bad.txt");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("trailmap import: line 3: latency 'twelve' is not a number"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(stored(), 0);

  CommandResult imported = import("good.txt");
  ASSERT_EQ(imported.exit_code, 0) << imported.err << aggs[0]->Log();
  EXPECT_EQ(stored(), 2);
}

// The counts per interval the Java program recorded (NAME.expected's "interval" lines).
std::vector<int64_t> ExpectedIntervalCounts(const std::string& name) {
  std::istringstream in(
      ReadFile(std::string(TRAILMAP_SOURCE_DIR) + "/ingest/testdata/hlog/" + name + ".expected"));
  std::vector<int64_t> counts;
  std::string text;
  while (std::getline(in, text)) {
    std::istringstream fields(text);
    std::string word, line, start, length, tag;
    int64_t count = 0;
    if (fields >> word >> line >> start >> length >> tag >> count && word == "interval") {
      counts.push_back(count);
    }
  }
  return counts;
}

TEST(ImportSystem, HlogIntervalsLandExactlyInTheirSeconds) {
  TempDir dir;
  Aggregator agg(dir, "agg-1");
  agg.Start();
  const int64_t t0 = UnixNow() - 3600;
  const std::string log = std::string(TRAILMAP_SOURCE_DIR) + "/ingest/testdata/hlog/basic.hlog";
  const std::vector<int64_t> want = ExpectedIntervalCounts("basic");
  ASSERT_EQ(want.size(), 5u);

  // A bad line (the last interval's base64 spoiled): refused naming it, nothing stored.
  std::string bad = ReadFile(log);
  bad[bad.size() - 10] = '!';
  WriteFile(dir / "bad.hlog", bad);
  CommandResult refused = RunProgram({Binary("trailmap"), "import", "--hlog", "--host", "lg-1",
                                      "--metric", "wrk.latency", "--start", std::to_string(t0),
                                      "--ingest", agg.ingest(), dir / "bad.hlog"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("line 9: histogram: bad base64 character '!'"), std::string::npos)
      << refused.err;

  CommandResult imp = RunProgram({Binary("trailmap"), "import", "--hlog", "--host", "lg-1",
                                  "--metric", "wrk.latency", "--value-unit", "us", "--start",
                                  std::to_string(t0), "--ingest", agg.ingest(), log});
  ASSERT_EQ(imp.exit_code, 0) << imp.out << imp.err << agg.Log();
  EXPECT_NE(imp.err.find("5 intervals (1,600 events) over 5 seconds"), std::string::npos)
      << imp.err;

  // Step 1: a column per interval, each with exactly the interval's count; nothing before t0,
  // so the refused import stored nothing.
  CommandResult r = Cli(
      {"heatmap", "--metric", "wrk.latency", "--hosts", "lg-1", "--from", std::to_string(t0 - 5),
       "--to", std::to_string(t0 + 5), "--step", "1", "--ymax", "2000s", "--format", "json"},
      agg.query());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  int64_t total = 0;
  for (int64_t c : want) total += c;
  EXPECT_EQ(j.at("total").get<int64_t>(), total);
  const int rows = j.at("rows").get<int>();
  for (int col = 0; col < 10; ++col) {
    int64_t in_column = 0;
    for (int row = 0; row < rows; ++row) in_column += j.at("counts")[row][col].get<int64_t>();
    EXPECT_EQ(in_column, col < 5 ? 0 : want[static_cast<size_t>(col - 5)]) << "column " << col;
  }
}

}  // namespace
}  // namespace trailmap::test
