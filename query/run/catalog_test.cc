// The overflow note as the second stage of a view's plan, against a fake aggregator whose
// catalog says the metric has an overflow series.
#include "query/run/catalog.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>

#include "query/run/heatmap.h"
#include "query/run/stats.h"
#include "query/testing/fake_aggregator.h"

namespace trailmap {
namespace {

struct Fleet {
  zmq::context_t zmq;
  QueryContext context;
  Fleet() {
    context.zmq = &zmq;
    context.now = 1'700'000'060;
    context.home = "/nonexistent-home";
    context.curve.plaintext = true;
  }
};

// One shard: 7 events of 1 ms for every histogram query, and a catalog naming m's overflow field.
std::function<Answer(const Query&)> WithOverflow() {
  return [](const Query& q) {
    if (q.kind != Query::Kind::kMetrics) return testing::CannedAnswer("agg-1", "", 1'000'000, 7);
    Answer a;
    a.shard = "agg-1";
    a.kind = Query::Kind::kMetrics;
    a.metrics.push_back({.name = "m", .unit = "ns", .fields = {"op", kOverflowField}});
    return a;
  };
}

TEST(OverflowNote, IsTheSecondStageAfterTheViewsFanOutWithTheWhereJoinedAsATree) {
  Fleet fleet;
  testing::FakeAggregator shard(fleet.zmq, WithOverflow());
  StatsRequest stats;
  stats.query.metric = "m";
  stats.query.aggregators = shard.endpoint();
  stats.query.where = "op == \"read\" or op == \"write\"";
  Result<ViewDocument> doc = RunStatsView(stats, fleet.context);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  ASSERT_EQ(doc->notes.size(), 1u);
  EXPECT_EQ(doc->notes[0], OverflowNote(7));
  // The view's own query, then the catalog, then the count: three fan-outs, one after another.
  EXPECT_EQ(shard.queries(), 3);
  EXPECT_EQ(shard.last_histogram_query().histograms.where,
            R"({"and":[{"or":[{"field":"op","op":"==","value":"read"},)"
            R"({"field":"op","op":"==","value":"write"}]},)"
            R"({"field":"overflow","op":"==","value":"true"}]})");

  HeatmapRequest heatmap;
  heatmap.query = stats.query;
  heatmap.query.where = "";
  heatmap.format = "json";
  doc = RunHeatmapView(heatmap, fleet.context);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  ASSERT_EQ(doc->notes.size(), 1u);
  EXPECT_EQ(doc->notes[0], OverflowNote(7));
  EXPECT_EQ(shard.last_histogram_query().histograms.where,
            R"({"field":"overflow","op":"==","value":"true"})");
}

TEST(OverflowNote, HasOnlyWhatIsLeftOfTheViewsTimeout) {
  Fleet fleet;
  testing::FakeAggregator shard(fleet.zmq, WithOverflow());
  ViewRequest request;
  request.metric = "m";
  request.aggregators = shard.endpoint();
  request.timeout = "2s";
  // The view's own fan-out took all of its time: no note, and no shard is asked for one.
  EXPECT_EQ(OverflowNoteFor(fleet.context, request, 1'700'000'000, 1'700'000'060,
                            std::chrono::steady_clock::now() - std::chrono::seconds(2)),
            std::nullopt);
  EXPECT_EQ(shard.queries(), 0);
  // With time left it is asked.
  EXPECT_EQ(OverflowNoteFor(fleet.context, request, 1'700'000'000, 1'700'000'060,
                            std::chrono::steady_clock::now()),
            OverflowNote(7));
  EXPECT_EQ(shard.queries(), 2);
  // The count carries the view's budgets.
  request.max_keys = 123;
  EXPECT_EQ(OverflowNoteFor(fleet.context, request, 1'700'000'000, 1'700'000'060,
                            std::chrono::steady_clock::now()),
            OverflowNote(7));
  EXPECT_EQ(shard.last_histogram_query().limits.max_keys, 123u);
  EXPECT_LE(shard.last_histogram_query().limits.deadline_ms, 1800u);
}

TEST(OverflowNote, IsNotAskedWhenAShardIsSilent) {
  Fleet fleet;
  testing::FakeAggregator shard(fleet.zmq, WithOverflow());
  testing::FakeAggregator silent(fleet.zmq, Answer{}, /*silent=*/true);
  StatsRequest stats;
  stats.query.metric = "m";
  stats.query.aggregators = shard.endpoint() + "," + silent.endpoint();
  stats.query.timeout = "200ms";
  fleet.context.empty_when_none_answer = true;
  Result<ViewDocument> doc = RunStatsView(stats, fleet.context);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_TRUE(doc->notes.empty());
  EXPECT_EQ(shard.queries(), 1);  // the view's own query alone
}

}  // namespace
}  // namespace trailmap
