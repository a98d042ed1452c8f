// Every view's document, byte for byte, as the CLI and trailmap-query get it: each test runs a
// view's Run*View (query/run/) against two fake aggregators holding the small fleet below and
// compares the bytes with a golden file in query/testing/testdata/golden/.
//
// A golden file is exact. When a change of a document is intended, rewrite them with
//   TRAILMAP_UPDATE_GOLDEN=1 build-test/bin/query_golden_test
// and check the new numbers by hand against the fleet before committing.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "query/run/columns.h"
#include "query/run/flame.h"
#include "query/run/heatmap.h"
#include "query/run/line.h"
#include "query/run/outliers.h"
#include "query/run/stats.h"
#include "query/run/subsecond.h"
#include "query/run/trails.h"
#include "query/testing/fake_aggregator.h"
#include "query/testing/fake_shard.h"
#include "query/testing/golden.h"

namespace trailmap {
namespace {

using testing::FakeEvent;
using testing::FakeShard;
using testing_golden::ExpectGolden;

constexpr int64_t kT0 = 1'795'363'200;  // 2026-11-22T16:00:00Z
constexpr uint64_t kMs = 1'000'000;     // ns

// A minute of disk.latency (ns) on four hosts in two shards, with a field `op`:
//   agg-1  web-1  read   +5s 2ms×10, +25s 3ms×20, +45s 2ms×10;  write +15s 8ms×5
//          web-2  read   +5s 2ms×12, +35s 4ms×8
//          web-2  overflow="true" (past the agent's series bound)  +55s 1ms×6
//   agg-2  db-1   read   +10s 1ms×30, +50s 1ms×30
//          db-2   write  +20s 40ms×4, +21s 45ms×1
// cpu.offsets (ns into each second) of the first four seconds, and cpu.stacks.
FakeShard Agg1() {
  FakeShard s;
  s.name = "agg-1";
  auto latency = [&](std::string host, std::map<std::string, std::string> fields, int64_t at,
                     uint64_t value, uint64_t count) {
    s.events.push_back(
        {"disk.latency", std::move(host), std::move(fields), kT0 + at, value, count});
  };
  latency("web-1", {{"op", "read"}}, 5, 2 * kMs, 10);
  latency("web-1", {{"op", "read"}}, 25, 3 * kMs, 20);
  latency("web-1", {{"op", "read"}}, 45, 2 * kMs, 10);
  latency("web-1", {{"op", "write"}}, 15, 8 * kMs, 5);
  latency("web-2", {{"op", "read"}}, 5, 2 * kMs, 12);
  latency("web-2", {{"op", "read"}}, 35, 4 * kMs, 8);
  latency("web-2", {{"overflow", "true"}}, 55, 1 * kMs, 6);
  // web-1 samples early in each second, web-2 in the middle.
  for (int64_t at = 0; at < 4; ++at) {
    s.events.push_back({"cpu.offsets", "web-1", {}, kT0 + at, 100 * kMs, 3});
    s.events.push_back(
        {"cpu.offsets", "web-2", {}, kT0 + at, 500 * kMs, static_cast<uint64_t>(1 + at)});
  }
  s.stacks = {{"web-1", "main;serve;read", 30},
              {"web-1", "main;serve;write", 10},
              {"web-2", "main;serve;read", 20},
              {"web-2", "main;idle", 5}};
  s.metrics = {{.name = "disk.latency", .unit = "ns", .description = "block I/O latency"},
               {.name = "cpu.offsets", .unit = "ns"}};
  return s;
}

FakeShard Agg2() {
  FakeShard s;
  s.name = "agg-2";
  auto latency = [&](std::string host, std::string op, int64_t at, uint64_t value, uint64_t count) {
    s.events.push_back(
        {"disk.latency", std::move(host), {{"op", std::move(op)}}, kT0 + at, value, count});
  };
  latency("db-1", "read", 10, 1 * kMs, 30);
  latency("db-1", "read", 50, 1 * kMs, 30);
  latency("db-2", "write", 20, 40 * kMs, 4);
  latency("db-2", "write", 21, 45 * kMs, 1);
  s.events.push_back({"cpu.offsets", "db-1", {}, kT0 + 2, 900 * kMs, 2});
  s.stacks = {{"db-1", "main;serve;read", 20}, {"db-2", "main;gc", 7}};
  s.metrics = {{.name = "disk.latency", .unit = "ns", .description = "block I/O latency"},
               {.name = "cpu.offsets", .unit = "ns"}};
  return s;
}

// The two shards on loopback, and a context as trailmap-query builds it.
class GoldenTest : public ::testing::Test {
 protected:
  GoldenTest()
      : agg1_(zmq_, [s = Agg1()](const Query& q) { return s.Respond(q); }),
        agg2_(zmq_, [s = Agg2()](const Query& q) { return s.Respond(q); }) {
    context_.zmq = &zmq_;
    context_.now = kT0 + 60;
    context_.home = "/nonexistent-home";
    context_.curve.plaintext = true;  // the fake aggregators are plaintext
  }

  // The fleet's minute of `metric`, grouped by `by`.
  ViewRequest Fleet(std::string metric, std::string by = "") const {
    ViewRequest r;
    r.metric = std::move(metric);
    r.by = std::move(by);
    r.from = "2026-11-22T16:00:00Z";
    r.to = "2026-11-22T16:01:00Z";
    r.aggregators = agg1_.endpoint() + "," + agg2_.endpoint();
    return r;
  }

  // The document's bytes, after checking it is whole (no shard missing).
  static std::string Bytes(const Result<ViewDocument>& doc) {
    if (!doc.ok()) {
      ADD_FAILURE() << doc.status().ToString();
      return "";
    }
    EXPECT_EQ(doc->missing, std::vector<std::string>{});
    return doc->bytes;
  }

  zmq::context_t zmq_;
  testing::FakeAggregator agg1_;
  testing::FakeAggregator agg2_;
  QueryContext context_;
};

// web-2's overflow series.
const std::string kOverflowNote =
    "note: 6 events over the cardinality bound went to the overflow series (overflow=\"true\"): "
    "an agent saw more distinct field sets a second than its max_series allows; they are counted "
    "there, not lost, but cannot be told apart by field";

// By op, `read` chosen (its own hue, write and the overflow series' "" as other), with
// percentile lines: 6 columns of 10 s, 10 rows up to the automatic ymax.
TEST_F(GoldenTest, HeatmapJson) {
  Result<ViewDocument> doc = RunHeatmapView({.query = Fleet("disk.latency", "op"),
                                             .rows = 10,
                                             .cols = 6,
                                             .overlay = "p50,p99",
                                             .select = "read",
                                             .format = "json"},
                                            context_);
  ExpectGolden("golden/heatmap.json", Bytes(doc));
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->notes, std::vector<std::string>{kOverflowNote});
}

// The terminal's map by host: 12 columns of 5 s, 8 rows, a hue per host.
TEST_F(GoldenTest, HeatmapAnsi) {
  Result<ViewDocument> doc =
      RunHeatmapView({.query = Fleet("disk.latency", "host"), .rows = 8, .cols = 12}, context_);
  ExpectGolden("golden/heatmap.ansi", Bytes(doc));
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->format, "ansi");
}

// --at 16:00:25,3ms of the map by op: web-1's 20 reads of 3 ms in the column 16:00:20-30.
TEST_F(GoldenTest, HeatmapCellDetailsJson) {
  ExpectGolden("golden/heatmap_cell.json",
               Bytes(RunHeatmapView({.query = Fleet("disk.latency", "op"),
                                     .rows = 10,
                                     .cols = 6,
                                     .at = "2026-11-22T16:00:25Z,3ms",
                                     .format = "json"},
                                    context_)));
}

TEST_F(GoldenTest, ColumnsJson) {
  ExpectGolden(
      "golden/columns.json",
      Bytes(RunColumnsView(
          {.query = Fleet("disk.latency"), .rows = 8, .sort = "p99", .format = "json"}, context_)));
}

TEST_F(GoldenTest, TrailsJson) {
  ExpectGolden("golden/trails.json",
               Bytes(RunTrailsView(
                   {.query = Fleet("disk.latency"), .sort = "p99", .points = 16, .format = "json"},
                   context_)));
}

// Each host's maximum per 10 s.
TEST_F(GoldenTest, LineJson) {
  ExpectGolden(
      "golden/line.json",
      Bytes(RunLineView(
          {.query = Fleet("disk.latency", "host"), .stat = "max", .step = 10, .format = "json"},
          context_)));
}

TEST_F(GoldenTest, StatsJson) {
  Result<ViewDocument> doc = RunStatsView(
      {.query = Fleet("disk.latency", "host"), .format = "json", .sort = "p99"}, context_);
  ExpectGolden("golden/stats.json", Bytes(doc));
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->notes, std::vector<std::string>{kOverflowNote});
}

// db-2 (p99 45 ms) against a fleet median between web-2's 4 ms and web-1's 8 ms.
TEST_F(GoldenTest, OutliersJson) {
  ExpectGolden(
      "golden/outliers.json",
      Bytes(RunOutliersView({.query = Fleet("disk.latency"), .format = "json"}, context_)));
}

// The fleet's stacks: both shards' main;serve;read (30 + 20 + 20) merged.
TEST_F(GoldenTest, FlameJson) {
  std::istringstream no_input;
  ExpectGolden("golden/flame.json",
               Bytes(RunFlameView({.fleet = {.view = Fleet("cpu.stacks")}, .format = "json"},
                                  context_, no_input)));
}

// Four seconds of offsets: web-1 at 100 ms, web-2 at 500 ms, db-1 at 900 ms in second 2.
TEST_F(GoldenTest, SubsecondJson) {
  ViewRequest seconds = Fleet("cpu.offsets");
  seconds.to = "2026-11-22T16:00:04Z";
  ExpectGolden(
      "golden/subsecond.json",
      Bytes(RunSubsecondFleetView({.query = seconds, .rows = 10, .format = "json"}, context_)));
}

}  // namespace
}  // namespace trailmap
