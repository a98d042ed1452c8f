// `trailmap columns` as main() runs it, against a fake aggregator.
#include "cli/columns_command.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/testing_cli.h"
#include "query/testing/fake_aggregator.h"

namespace trailmap {
namespace {

using Harness = testing::CliHarness;

TEST(ColumnsCommand, AsksForOneColumnPerHostOverTheRange) {
  Harness h;
  Answer answer = testing::CannedAnswer("agg-1", "web-2", 5'000'000, 7);
  QueryCell slow;
  slow.group = 1;
  slow.histogram.Record(50'000'000, 3);
  answer.histograms.groups.push_back("web-1");
  answer.histograms.cells.push_back(slow);
  testing::FakeAggregator agg(h.zmq, answer);
  ColumnsFlags flags;
  flags.query.metric = "disk.latency";
  flags.query.from = "-10m";
  flags.query.hosts = "web-1,web-2";
  flags.query.aggregators = agg.endpoint();
  flags.sort = "p99";
  flags.format = "json";
  EXPECT_EQ(RunColumns(flags, h.context), kExitOk) << h.err.str();
  const auto j = nlohmann::json::parse(h.out.str());
  EXPECT_EQ(j["view"], "columns");
  ASSERT_EQ(j["hosts"].size(), 2u);
  EXPECT_EQ(j["hosts"][0]["host"], "web-1");
  EXPECT_EQ(j["hosts"][1]["count"], 7);
  const HistogramQuery& q = agg.last_query().histograms;
  EXPECT_EQ(q.group_by, "host");
  EXPECT_EQ(q.from, 1'700'000'060 - 600);
  EXPECT_EQ(q.step, 600u);
  EXPECT_EQ(q.hosts, (std::vector<std::string>{"web-1", "web-2"}));
}

TEST(ColumnsCommand, UsageErrorsExitTwo) {
  Harness h;
  ColumnsFlags flags;
  flags.query.metric = "disk.latency";
  flags.query.aggregators = "127.0.0.1:1";
  flags.sort = "p42";
  EXPECT_EQ(RunColumns(flags, h.context), kExitUsage);
  EXPECT_NE(h.err.str().find("bimodality"), std::string::npos);
  flags.sort = "cov";
  flags.shading = "rows";
  EXPECT_EQ(RunColumns(flags, h.context), kExitUsage);
  flags.shading = "global";
  flags.query.by = "op";
  EXPECT_EQ(RunColumns(flags, h.context), kExitUsage);
}

}  // namespace
}  // namespace trailmap
