// Scalars and the catalog end to end: batches with per-second scalars, descriptions and an
// overflow series go into a real aggregator over ZeroMQ, and the real CLI shows them — the
// description in `metrics`, host-second counts and exact means in `stats`, one point per
// host-second in `line`, value predicates (text and JSON) in `heatmap`, and the overflow series
// explained by `fields` and noted under `stats`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>
#include <zmq.hpp>

#include "core/batch.h"
#include "core/histogram.h"
#include "tests/cluster.h"
#include "tests/stats_json.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Host h (0, 1, 2) reports cpu.usage{mode=user} = 10 * (h + 1) + 0.25 % for each of 10 seconds,
// and disk.latency: 100 events of 1 ms on op=read and 7 in the overflow series.
Batch HostBatch(int h, int64_t start) {
  Batch b;
  b.agent = "sim-" + std::to_string(h) + "/1";
  b.sequence = 1;
  b.host = "sim-" + std::to_string(h);
  b.series = {
      {"cpu.usage", MetricKind::kScalar, "%", "mode=user", "CPU time by mode, % of all CPUs"},
      {"disk.latency", MetricKind::kLatency, "ns", "op=read", ""},
      {"disk.latency", MetricKind::kLatency, "ns", "overflow=true", ""}};
  for (int s = 0; s < 10; ++s) {
    SecondDelta sd;
    sd.time = start + s;
    sd.scalars.push_back({0, 10.0 * (h + 1) + 0.25});
    if (s == 0) {
      Histogram read, overflow;
      read.Record(1'000'000, 100);
      overflow.Record(2'000'000, 7);
      sd.histograms.push_back({1, read.Encode()});
      sd.histograms.push_back({2, overflow.Encode()});
    }
    b.seconds.push_back(std::move(sd));
  }
  return b;
}

TEST(ScalarSystem, ScalarsDescriptionsAndOverflowThroughTheCli) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs[0]->Start();
  const std::string q = QueryList(aggs);

  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo, 5000);
  UseTestKeys(dealer);
  dealer.connect("tcp://" + aggs[0]->ingest());
  const int64_t start = Now() - 60;
  for (int h = 0; h < 3; ++h) {
    dealer.send(zmq::buffer(EncodeBatch(HostBatch(h, start))), zmq::send_flags::none);
    zmq::message_t reply;
    ASSERT_TRUE(dealer.recv(reply)) << aggs[0]->Log();
    Result<Ack> ack = DecodeAck(reply.to_string_view());
    ASSERT_TRUE(ack.ok());
    ASSERT_EQ(ack->status, Ack::Status::kApplied) << ack->reason;
  }
  const std::vector<std::string> range = {"--from", std::to_string(start), "--to",
                                          std::to_string(start + 10)};
  auto with_range = [&range](std::vector<std::string> args) {
    args.insert(args.end(), range.begin(), range.end());
    return args;
  };

  // The catalog: the description, in the table and in JSON.
  CommandResult metrics = Cli({"metrics", "--format", "json"}, q);
  ASSERT_EQ(metrics.exit_code, 0) << metrics.err;
  nlohmann::json mj = nlohmann::json::parse(metrics.out);
  // Those the batches above wrote (the aggregator's own trailmap.aggregator.* aside).
  nlohmann::json written = nlohmann::json::array();
  for (const auto& m : mj["metrics"]) {
    if (!m["name"].get<std::string>().starts_with("trailmap.")) written.push_back(m);
  }
  mj["metrics"] = written;
  ASSERT_EQ(mj["metrics"].size(), 2u);
  EXPECT_EQ(mj["metrics"][0]["name"], "cpu.usage");
  EXPECT_EQ(mj["metrics"][0]["kind"], "scalar");
  EXPECT_EQ(mj["metrics"][0]["description"], "CPU time by mode, % of all CPUs");
  EXPECT_NE(Cli({"metrics"}, q).out.find("CPU time by mode, % of all CPUs"), std::string::npos);

  // stats: each host-second is one sample; means are exact to 0.01%.
  CommandResult stats =
      Cli(with_range({"stats", "--metric", "cpu.usage", "--by", "host", "--format", "json"}), q);
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const auto groups = ParseStats(stats.out);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups.at("sim-1").count, 10u);
  EXPECT_DOUBLE_EQ(groups.at("sim-1").mean, 2025);  // 20.25% in 0.01%
  EXPECT_EQ(groups.at("sim-2").max, 3025u);
  // The table reads percent (20.25% to three digits, the exact tie printed to even).
  EXPECT_NE(
      Cli(with_range({"stats", "--metric", "cpu.usage", "--by", "host"}), q).out.find("20.2%"),
      std::string::npos);

  // line: one value per host and second, in %.
  CommandResult line = Cli(with_range({"line", "--metric", "cpu.usage", "--by", "host", "--step",
                                       "1", "--format", "json"}),
                           q);
  ASSERT_EQ(line.exit_code, 0) << line.err;
  const nlohmann::json lj = nlohmann::json::parse(line.out);
  EXPECT_EQ(lj["unit"], "%");
  ASSERT_EQ(lj["series"].size(), 3u);
  EXPECT_EQ(lj["series"][0]["name"], "sim-2");
  EXPECT_DOUBLE_EQ(lj["series"][0]["values"][9].get<double>(), 30.25);
  CommandResult sum = Cli(with_range({"line", "--metric", "cpu.usage", "--stat", "sum", "--step",
                                      "10", "--format", "json"}),
                          q);
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(sum.out)["series"][0]["values"][0].get<double>(),
                   10 * (10.25 + 20.25 + 30.25));

  // A value predicate keeps host-seconds, in the text and the JSON form alike.
  for (const std::string where :
       {"value > 15%", R"({"field": "value", "op": ">", "value": "15%"})"}) {
    CommandResult hm = Cli(
        with_range({"heatmap", "--metric", "cpu.usage", "--where", where, "--format", "json"}), q);
    ASSERT_EQ(hm.exit_code, 0) << hm.err;
    EXPECT_EQ(nlohmann::json::parse(hm.out)["total"], 20) << where;
  }

  // Scalar views count host-seconds, and their axes read percent.
  CommandResult svg = Cli(with_range({"heatmap", "--metric", "cpu.usage", "--format", "svg"}), q);
  ASSERT_EQ(svg.exit_code, 0) << svg.err;
  EXPECT_NE(svg.out.find("30 host-seconds"), std::string::npos);
  EXPECT_NE(svg.out.find(">hosts</text>"), std::string::npos);
  EXPECT_NE(svg.out.find("40%</text>"), std::string::npos);
  CommandResult trails = Cli(with_range({"trails", "--metric", "cpu.usage", "--format", "svg"}), q);
  EXPECT_NE(trails.out.find("30 host-seconds"), std::string::npos);

  // The overflow series: counted by fields, and noted under stats.
  CommandResult fields =
      Cli(with_range({"fields", "--metric", "disk.latency", "--format", "json"}), q);
  ASSERT_EQ(fields.exit_code, 0) << fields.err;
  EXPECT_EQ(nlohmann::json::parse(fields.out)["overflow_events"], 21);
  EXPECT_NE(Cli(with_range({"fields", "--metric", "disk.latency"}), q)
                .out.find("note: 21 events over the cardinality bound"),
            std::string::npos);
  CommandResult noted = Cli(with_range({"stats", "--metric", "disk.latency"}), q);
  ASSERT_EQ(noted.exit_code, 0);
  EXPECT_NE(
      noted.err.find("note: 21 events over the cardinality bound went to the overflow series"),
      std::string::npos)
      << noted.err;
  CommandResult quiet =
      Cli(with_range({"stats", "--metric", "disk.latency", "--where", "op == \"read\""}), q);
  EXPECT_EQ(quiet.err.find("overflow"), std::string::npos) << quiet.err;
}

}  // namespace
}  // namespace trailmap::test
