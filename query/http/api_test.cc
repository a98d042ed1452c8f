// The API against fake aggregators: the body is the document the CLI's run prints, and the
// status codes follow the CLI's exit codes.
#include "query/http/api.h"

#include <gtest/gtest.h>

#include <chrono>
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

// The error message of a reply that must be a 400.
std::string Refusal(const Harness& h, const std::string& target) {
  const HttpReply reply = HandleApi(target, h.context, h.options);
  EXPECT_EQ(reply.status, 400u) << target << ": " << reply.body;
  return nlohmann::json::parse(reply.body, nullptr, false).value("error", std::string());
}

TEST(Api, HeatmapBodyIsTheRunsDocumentByteForByte) {
  Harness h;
  testing::FakeAggregator a(h.zmq, testing::CannedAnswer("agg-1", "", 5'000'000, 7));
  h.options.defaults.aggregators = a.endpoint();
  const HttpReply reply = HandleApi(
      "/api/heatmap?metric=disk.latency&from=-1m&rows=20&coloring=linear", h.context, h.options);
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
  EXPECT_EQ(error("/api/heatmap?metric=m&rows=0").second,
            "--rows 0: give a whole number from 1 to 2000");
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
  // The sub-second map: the CLI's messages, before any shard is asked.
  EXPECT_EQ(error("/api/subsecond?rows=0").second, "--rows 0: give a whole number from 1 to 1000");
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

// A name that does not validate is refused before any shard is asked: against a shard that never
// answers, the 400 comes at once, not after the timeout.
TEST(Api, NamesThatDoNotValidateAre400BeforeAnyShardIsAsked) {
  Harness h;
  testing::FakeAggregator silent(h.zmq, Answer{}, /*silent=*/true);
  h.options.defaults.aggregators = silent.endpoint();
  h.options.defaults.timeout = "5s";
  const auto refused = [&h](const std::string& target) {
    const auto start = std::chrono::steady_clock::now();
    const std::string message = Refusal(h, target);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << target;
    return message;
  };
  const std::string names = "a metric name is 1 to 128 bytes of A-Z a-z 0-9 _ . -";
  EXPECT_EQ(refused("/api/heatmap?metric=%ff"), "--metric \"\\xff\": not valid UTF-8");
  EXPECT_EQ(refused("/api/heatmap?metric=a%00b"), "--metric \"a\\x00b\": " + names);
  EXPECT_EQ(refused("/api/stats?metric=a%0d%0ab"), "--metric \"a\\x0d\\x0ab\": " + names);
  EXPECT_EQ(refused("/api/trails?metric=" + std::string(10'000, 'a')),
            "--metric \"" + std::string(64, 'a') + "...\": " + names + " (this one is 10000)");
  EXPECT_EQ(refused("/api/columns?metric=a%20b"), "--metric \"a b\": " + names);
  EXPECT_EQ(refused("/api/line?metric=a/b"), "--metric \"a/b\": " + names);
  EXPECT_EQ(refused("/api/fields?metric=a*"), "--metric \"a*\": " + names);
  EXPECT_EQ(refused("/api/outliers?metric=a%0a"), "--metric \"a\\x0a\": " + names);
  EXPECT_EQ(refused("/api/flame?metric=a%09"), "--metric \"a\\x09\": " + names);
  EXPECT_EQ(refused("/api/subsecond?metric=%c3%a9"), "--metric \"\\xc3\\xa9\": " + names);
  EXPECT_EQ(refused("/api/heatmap/live?metric=a%00"), "--metric \"a\\x00\": " + names);
  EXPECT_EQ(refused("/api/heatmap?metric=m&by=op%00"),
            "--by \"op\\x00\": give host or a field key: 1 to 128 bytes of A-Z a-z 0-9 _ . -");
  EXPECT_EQ(refused("/api/stats?metric=m&by=a%3Db"),
            "--by \"a=b\": give host or a field key: 1 to 128 bytes of A-Z a-z 0-9 _ . -");
  EXPECT_EQ(refused("/api/stats?metric=m&hosts=web-1,a%0d%0ab"),
            "--hosts \"a\\x0d\\x0ab\": a host name is 1 to 256 bytes of UTF-8 text without "
            "control characters");
  // The timeout is capped, so no request holds a worker for longer.
  EXPECT_EQ(refused("/api/heatmap?metric=m&timeout=1h"),
            "--timeout 1h: at most 60s (a query waits at most that long for its shards)");
  EXPECT_EQ(refused("/api/metrics?timeout=61s"),
            "--timeout 61s: at most 60s (a query waits at most that long for its shards)");
}

// Invalid UTF-8 in any parameter is a 400 naming it, never a 500 from the JSON writer.
TEST(Api, ParametersThatAreNotUtf8Are400NamingThem) {
  Harness h;
  h.options.defaults.aggregators = "127.0.0.1:1";
  const auto error = [&h](const std::string& target) { return Refusal(h, target); };
  EXPECT_EQ(error("/api/heatmap?metric=m&by=%ff"), "--by \"\\xff\": not valid UTF-8");
  EXPECT_EQ(error("/api/heatmap?metric=m&palette=%ff"), "--palette \"\\xff\": not valid UTF-8");
  EXPECT_EQ(error("/api/heatmap?metric=m&%ff=1"),
            "the parameter name \"\\xff\" is not valid UTF-8");
  EXPECT_EQ(error("/api/heatmap?metric=m&where=%ff"), "--where \"\\xff\": not valid UTF-8");
  EXPECT_EQ(error("/api/flame?title=%c0%af"), "--title \"\\xc0\\xaf\": not valid UTF-8");
  EXPECT_EQ(error("/api/columns?metric=m&sort=p9%e2%82"),
            "--sort \"p9\\xe2\\x82\": not valid UTF-8");
  // Valid UTF-8 in a message is kept as it is.
  EXPECT_EQ(error("/api/heatmap?metric=m&palette=%c3%a9t%c3%a9"),
            "--palette \xc3\xa9t\xc3\xa9: give heat or false");
}

// A picture is at most kMaxImagePixels: the budget is named, and nothing is asked of a shard.
TEST(Api, PicturesOverThePixelBudgetAre400) {
  Harness h;
  h.options.defaults.aggregators = "127.0.0.1:1";
  const auto error = [&h](const std::string& target) { return Refusal(h, target); };
  EXPECT_EQ(error("/api/heatmap?metric=m&format=png&width=20000&height=10000"),
            "--width 20000 × --height 10000 is 200,000,000 pixels, at most 16,777,216 (16 Mi): "
            "ask for a smaller picture");
  EXPECT_EQ(error("/api/heatmap?metric=m&format=svg&width=4097&height=4096"),
            "--width 4097 × --height 4096 is 16,781,312 pixels, at most 16,777,216 (16 Mi): ask "
            "for a smaller picture");
  EXPECT_EQ(error("/api/trails?metric=m&format=png&height=100000"),
            "--height 100000 × the trails' width 1024 is 102,400,000 pixels, at most 16,777,216 "
            "(16 Mi): ask for a smaller picture");
  // Within the budget, the request goes on to the shards (none here: 502).
  EXPECT_EQ(HandleApi("/api/heatmap?metric=m&format=png&width=4096&height=4096&timeout=100ms",
                      h.context, h.options)
                .status,
            502u);
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
