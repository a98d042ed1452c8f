// The API against fake aggregators: the body is the document the CLI's run prints, and the
// status codes follow the CLI's exit codes.
#include "query/http/api.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/timespec.h"
#include "query/run/heatmap.h"
#include "query/run/stats.h"
#include "query/testing/fake_aggregator.h"

namespace trailmap {
namespace {

struct Harness {
  zmq::context_t zmq;
  QueryContext context;
  ApiOptions options;
  Harness() {
    context.zmq = &zmq;
    context.now = 1'700'000'060;
    context.home = "/nonexistent-home";
    context.curve.plaintext = true;  // the fake aggregators are plaintext
    options.defaults.timeout = "300ms";
  }
};

std::string Header(const HttpReply& reply, const std::string& name) {
  for (const auto& [n, v] : reply.headers) {
    if (n == name) return v;
  }
  return "";
}

TEST(Api, HeatmapBodyIsTheRunsDocumentByteForByte) {
  Harness h;
  testing::FakeAggregator a(h.zmq, testing::CannedAnswer("agg-1", "", 5'000'000, 7));
  h.options.defaults.aggregators = a.endpoint();
  const HttpReply reply =
      HandleApi("/api/heatmap?metric=disk.latency&from=-1m&rows=20&coloring=linear", h.context,
                h.options);
  ASSERT_EQ(reply.status, 200u) << reply.body;
  EXPECT_EQ(reply.content_type, "application/json");
  HeatmapRequest r;
  r.query = h.options.defaults;
  r.query.metric = "disk.latency";
  r.query.from = "-1m";
  r.rows = 20;
  r.coloring = "linear";
  r.format = "json";
  Result<ViewDocument> doc = RunHeatmapView(r, h.context);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(reply.body, doc->bytes);
  EXPECT_EQ(nlohmann::json::parse(reply.body)["total"], 7);
  EXPECT_EQ(nlohmann::json::parse(reply.body)["rows"], 20);

  const HttpReply svg =
      HandleApi("/api/heatmap?metric=disk.latency&from=-1m&format=svg", h.context, h.options);
  EXPECT_EQ(svg.status, 200u);
  EXPECT_EQ(svg.content_type, "image/svg+xml");
  EXPECT_NE(svg.body.find("<svg"), std::string::npos) << svg.body.substr(0, 100);
}

TEST(Api, UsageErrorsAre400WithTheCliMessage) {
  Harness h;
  h.options.defaults.aggregators = "127.0.0.1:1";
  const auto error = [&h](const std::string& target) {
    const HttpReply reply = HandleApi(target, h.context, h.options);
    EXPECT_EQ(reply.content_type, "application/json");
    return std::pair{reply.status, nlohmann::json::parse(reply.body)["error"].get<std::string>()};
  };
  EXPECT_EQ(error("/api/heatmap?metric=m&from=yesterday"),
            (std::pair<unsigned, std::string>{
                400, "--from: " + ParseTimeSpec("yesterday", 0).status().message()}));
  EXPECT_EQ(error("/api/heatmap?metric=m&rows=0").second, "--rows 0: give a number from 1 to 2000");
  EXPECT_EQ(error("/api/heatmap?metric=m&step=10s&cols=5").second,
            "give --cols or --step, not both");
  EXPECT_EQ(error("/api/heatmap?from=-1m").second, "--metric,-m is required");
  EXPECT_EQ(error("/api/heatmap?metric=m&colour=red").second,
            "unknown parameter colour for /api/heatmap");
  EXPECT_EQ(error("/api/heatmap?metric=m&aggregators=10.0.0.1").first, 400u);
  EXPECT_EQ(error("/api/stats?metric=m&sort=p42").first, 400u);
  EXPECT_EQ(error("/api/columns?metric=m&by=op").second,
            "--by: the columns are always one per host");
  EXPECT_EQ(error("/api/nothing").first, 404u);
  // The sub-second map (issue 13): the CLI's messages, before any shard is asked.
  EXPECT_EQ(error("/api/subsecond?rows=0").second, "--rows 0: give a number from 1 to 1000");
  EXPECT_EQ(error("/api/subsecond?where=host%3D%3D%22a%22%20and%20latency%3E10ms").second,
            "--where host==\"a\" and latency>10ms: the sub-second map's values are the samples' "
            "offsets in their seconds, so a test of the value (10ms) has no meaning here; keep the "
            "tests of host and labels, e.g. host =~ \"web.*\"");
  EXPECT_EQ(error("/api/subsecond?from=-1m&range=3..2").second,
            "--range: expected FROM..TO in seconds from the first column, FROM < TO, e.g. "
            "12.340..13.020");
  EXPECT_EQ(error("/api/subsecond?from=-1m&range=1..2&format=png").second,
            "--range draws svg, folded or json, not png");
  EXPECT_EQ(error("/api/subsecond?from=-1m&range=70..71").second,
            "--range 70..71 starts after the map's 60 seconds");
  EXPECT_EQ(error("/api/subsecond?from=-11h").second,
            "--from/--to span 39600 seconds; the sub-second map draws at most 36000 (one column "
            "per second): narrow the range");
  EXPECT_EQ(error("/api/subsecond?by=host").second,
            "--by: the sub-second map adds up the samples of every host it covers; choose them "
            "with --hosts or --where");
  EXPECT_EQ(error("/api/subsecond?colour=red").second,
            "unknown parameter colour for /api/subsecond");
}

TEST(Api, MissingShardsGive206AndNoShard502NamingThem) {
  Harness h;
  testing::FakeAggregator good(h.zmq, testing::CannedAnswer("agg-1", "web-1", 5'000'000, 7));
  testing::FakeAggregator silent(h.zmq, Answer{}, /*silent=*/true);
  h.options.defaults.aggregators = good.endpoint() + "," + silent.endpoint();
  const HttpReply partial =
      HandleApi("/api/stats?metric=disk.latency&by=host&from=-1m", h.context, h.options);
  EXPECT_EQ(partial.status, 206u);
  const auto j = nlohmann::json::parse(partial.body);
  EXPECT_EQ(j["rows"][0]["count"], 7);
  ASSERT_EQ(j["missing_shards"].size(), 1u);
  EXPECT_NE(j["missing_shards"][0].get<std::string>().find(silent.endpoint()), std::string::npos);
  EXPECT_NE(Header(partial, "X-Trailmap-Missing-Shards").find(silent.endpoint()),
            std::string::npos);

  h.options.defaults.aggregators = silent.endpoint();
  const HttpReply none = HandleApi("/api/heatmap?metric=disk.latency", h.context, h.options);
  EXPECT_EQ(none.status, 502u);
  const std::string message = nlohmann::json::parse(none.body)["error"];
  EXPECT_EQ(message.rfind("no aggregator answered:", 0), 0u) << message;
  EXPECT_NE(message.find(silent.endpoint()), std::string::npos) << message;
}

TEST(Api, ThePageIsServedFromTheBinary) {
  Harness h;
  const HttpReply index = HandleApi("/", h.context, h.options);
  ASSERT_EQ(index.status, 200u);
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_NE(index.body.find("<canvas id=\"heatmap\""), std::string::npos);
  const HttpReply script = HandleApi("/app.js", h.context, h.options);
  ASSERT_EQ(script.status, 200u);
  EXPECT_EQ(script.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(HandleApi("/nothing.js", h.context, h.options).status, 404u);
  EXPECT_EQ(HandleApi("/subsecond.js", h.context, h.options).status, 200u);
}

TEST(Api, RegionAndOutliersRefuseBadInputWithTheCliMessage) {
  Harness h;
  h.options.defaults.aggregators = "127.0.0.1:1";
  HttpReply reply =
      HandleApi("/api/flame?metric=http.latency&region=-2m..-1m", h.context, h.options);
  EXPECT_EQ(reply.status, 400u);
  EXPECT_NE(reply.body.find("--region -2m..-1m: no ','"), std::string::npos) << reply.body;
  reply = HandleApi("/api/flame?region=-2m..-1m,1ms..2ms", h.context, h.options);
  EXPECT_EQ(reply.status, 400u);
  EXPECT_NE(reply.body.find("--region selects events of a latency or size metric"),
            std::string::npos)
      << reply.body;
  reply = HandleApi("/api/flame?differential=1", h.context, h.options);
  EXPECT_EQ(reply.status, 400u);
  reply = HandleApi("/api/outliers?metric=m&stat=p42", h.context, h.options);
  EXPECT_EQ(reply.status, 400u);
  EXPECT_NE(reply.body.find("--stat p42: give p50"), std::string::npos) << reply.body;
}

}  // namespace
}  // namespace trailmap
