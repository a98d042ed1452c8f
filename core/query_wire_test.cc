#include "core/query_wire.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

TEST(QueryWire, QueryRoundTripsAndIsChecked) {
  Query q;
  q.id = 9;
  q.histograms = {"disk.latency", 1000, 1600, 10, "host", {"web-1", "web-2"}};
  Result<Query> back = DecodeQuery(EncodeQuery(q));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->id, 9u);
  EXPECT_EQ(back->histograms.metric, "disk.latency");
  EXPECT_EQ(back->histograms.columns(), 60u);
  EXPECT_EQ(back->histograms.hosts.size(), 2u);

  q.histograms.where = R"(op == "read" and latency > 1ms)";
  back = DecodeQuery(EncodeQuery(q));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->histograms.where, q.histograms.where);
  q.histograms.where = "op = 1";
  EXPECT_NE(DecodeQuery(EncodeQuery(q)).status().message().find("--where: column 4"), std::string::npos);
  q.histograms.where = "";

  q.histograms.to = 1000;
  EXPECT_NE(DecodeQuery(EncodeQuery(q)).status().message().find("empty time range"), std::string::npos);
  q.histograms.to = 1000 + 10'000'000;
  q.histograms.step = 1;
  EXPECT_NE(DecodeQuery(EncodeQuery(q)).status().message().find("larger step"), std::string::npos);
  q.histograms.step = 0;
  EXPECT_FALSE(DecodeQuery(EncodeQuery(q)).ok());
  EXPECT_FALSE(DecodeQuery("nonsense").ok());
}

TEST(QueryWire, AnswerRoundTripsWithHistograms) {
  Answer a;
  a.id = 3;
  a.shard = "agg-1";
  a.histograms.unit = "ns";
  a.histograms.groups = {"read", "write"};
  QueryCell cell;
  cell.column = 4;
  cell.group = 1;
  cell.histogram.Record(12345, 7);
  a.histograms.cells.push_back(cell);
  Result<Answer> back = DecodeAnswer(EncodeAnswer(a));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->shard, "agg-1");
  ASSERT_EQ(back->histograms.cells.size(), 1u);
  EXPECT_EQ(back->histograms.cells[0].column, 4u);
  EXPECT_EQ(back->histograms.cells[0].histogram, cell.histogram);

  Answer m;
  m.kind = Query::Kind::kMetrics;
  m.metrics = {{"disk.latency", MetricKind::kLatency, "ns", {"disk", "op"}}};
  Result<Answer> mb = DecodeAnswer(EncodeAnswer(m));
  ASSERT_TRUE(mb.ok());
  EXPECT_EQ(mb->kind, Query::Kind::kMetrics);
  EXPECT_EQ(mb->metrics[0].name, "disk.latency");
  EXPECT_EQ(mb->metrics[0].fields, (std::vector<std::string>{"disk", "op"}));
}

}  // namespace
}  // namespace trailmap

namespace trailmap {
namespace {

TEST(StackQueryWire, QueryAndAnswerRoundTrip) {
  Query q;
  q.id = 42;
  q.kind = Query::Kind::kStacks;
  q.stacks.metric = "cpu.stacks";
  q.stacks.from = 100;
  q.stacks.to = 160;
  q.stacks.hosts = {"a", "b"};
  q.stacks.where = "execname == \"nginx\"";
  Result<Query> back = DecodeQuery(EncodeQuery(q));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->kind, Query::Kind::kStacks);
  EXPECT_EQ(back->stacks.hosts, q.stacks.hosts);
  EXPECT_EQ(back->stacks.where, q.stacks.where);
  EXPECT_EQ(back->stacks.to, 160);

  Answer a;
  a.id = 42;
  a.shard = "agg-1";
  a.kind = Query::Kind::kStacks;
  a.stacks.stacks = {{"main;foo", 5}, {"main;bar", 1}};
  Result<Answer> answer = DecodeAnswer(EncodeAnswer(a));
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->kind, Query::Kind::kStacks);
  EXPECT_EQ(answer->stacks.stacks, a.stacks.stacks);
}

TEST(StackQueryWire, RefusesValueComparisonsAndEmptyRanges) {
  Query q;
  q.kind = Query::Kind::kStacks;
  q.stacks.from = 100;
  q.stacks.to = 160;
  q.stacks.where = "latency > 10ms";
  EXPECT_NE(DecodeQuery(EncodeQuery(q)).status().message().find("stacks have no value"),
            std::string::npos);
  q.stacks.where = "host == \"a\"";
  q.stacks.to = 100;
  EXPECT_NE(DecodeQuery(EncodeQuery(q)).status().message().find("empty time range"),
            std::string::npos);
  q.stacks.to = 160;
  q.stacks.where = "host ==";
  EXPECT_NE(DecodeQuery(EncodeQuery(q)).status().message().find("--where: column"),
            std::string::npos);
}

}  // namespace
}  // namespace trailmap
