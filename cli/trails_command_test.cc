#include "cli/trails_command.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "query/testing/fake_aggregator.h"

namespace trailmap {
namespace {

// The command as main() runs it, against a fake aggregator.
TEST(TrailsCommand, JsonFromAShardAndUsageErrors) {
  zmq::context_t zmq;
  std::ostringstream out, err;
  CliContext context;
  context.zmq = &zmq;
  context.now = 1'700'000'060;
  context.home = "/nonexistent-home";
  context.curve.plaintext = true;  // the fake aggregator is plaintext
  context.out = &out;
  context.err = &err;
  testing::FakeAggregator agg(zmq, testing::CannedAnswer("agg-1", "web-1", 5'000'000, 7));
  TrailsFlags flags;
  flags.query.metric = "disk.latency";
  flags.query.from = "-1m";
  flags.query.aggregators = agg.endpoint();
  flags.range = "0..20ms";
  flags.format = "json";
  ASSERT_EQ(RunTrails(flags, context), kExitOk) << err.str();
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["view"], "trails");
  EXPECT_EQ(j["range"][1], 20'000'000);
  ASSERT_EQ(j["trails"].size(), 1u);
  EXPECT_EQ(j["trails"][0]["group"], "web-1");
  EXPECT_EQ(j["trails"][0]["count"], 7);
  EXPECT_EQ(j["trails"][0]["density"][512], 1);  // 5 ms of 0..20 ms in 2048 points
  // One column over the whole range, grouped by host unless --by says otherwise.
  EXPECT_EQ(agg.last_query().histograms.group_by, "host");
  EXPECT_EQ(agg.last_query().histograms.step, 60u);

  flags.range = "20ms..1ms";
  EXPECT_EQ(RunTrails(flags, context), kExitUsage);
  EXPECT_NE(err.str().find("--range"), std::string::npos);
  flags.range = "";
  flags.threshold = "lots";
  EXPECT_EQ(RunTrails(flags, context), kExitUsage);
}

}  // namespace
}  // namespace trailmap
