#include "core/query_wire.h"

#include <gtest/gtest.h>

#include <chrono>

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

// A replicated query's preferences travel with its cluster; the completeness query and
// its answer round-trip; preferences out of order or naming what the cluster lacks are refused.
// The id reads before anything is checked, so a refusal can carry it; garbage has none.
TEST(QueryWire, QueryIdOfReadsTheIdOfAQueryThatDoesNotDecode) {
  Query q;
  q.id = 77;
  q.histograms = {"\xff\r\n", 1000, 1600, 10, "host", {}};
  const std::string bytes = EncodeQuery(q);
  EXPECT_FALSE(DecodeQuery(bytes).ok());
  EXPECT_EQ(QueryIdOf(bytes), 77u);
  EXPECT_EQ(QueryIdOf(""), 0u);
  EXPECT_EQ(QueryIdOf("not a query"), 0u);
  EXPECT_EQ(QueryIdOf(std::string(64, '\xff')), 0u);
  Answer a;
  a.id = 77;
  a.error = "key web may only ingest, not query";
  a.key_refused = true;
  Result<Answer> back = DecodeAnswer(EncodeAnswer(a));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->key_refused);
  EXPECT_EQ(back->error, a.error);
}

TEST(QueryWire, CompletenessAndPreferencesRoundTrip) {
  Query c;
  c.id = 4;
  c.kind = Query::Kind::kCompleteness;
  c.completeness = {{"web-1", "db-2"}, 1700000000};
  Result<Query> back = DecodeQuery(EncodeQuery(c));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->kind, Query::Kind::kCompleteness);
  EXPECT_EQ(back->completeness, c.completeness);

  Answer a;
  a.id = 4;
  a.kind = Query::Kind::kCompleteness;
  a.completeness = {{"web-1", 1699999990}, {"db-2", -5}};
  Result<Answer> answer = DecodeAnswer(EncodeAnswer(a));
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->kind, Query::Kind::kCompleteness);
  EXPECT_EQ(answer->completeness, a.completeness);
  a.completeness[1].host = "";
  EXPECT_EQ(DecodeAnswer(EncodeAnswer(a)).status().message(),
            "answer completeness: a host without a name");

  Query q;
  q.id = 5;
  q.histograms = {"disk.latency", 1000, 1600, 10, "host", {}};
  ReplicaScope& scope = q.histograms.replicas.emplace();
  scope.cluster.replication = 2;
  scope.cluster.members = {{"agg-1", "a", "", ""}, {"agg-2", "b", "", ""}};
  scope.cluster.epochs = {ClusterEpoch{INT64_MIN, {0, 1}}};
  scope.selection.member = "agg-1";
  scope.selection.prefer = {{"db-2", 0, "agg-2"}, {"web-1", 0, "agg-1"}};
  back = DecodeQuery(EncodeQuery(q));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->histograms.replicas.has_value());
  EXPECT_EQ(back->histograms.replicas->selection.prefer, scope.selection.prefer);

  std::swap(scope.selection.prefer[0], scope.selection.prefer[1]);
  EXPECT_EQ(DecodeQuery(EncodeQuery(q)).status().message(),
            "replicas: preferences not sorted by (host, epoch)");
  scope.selection.prefer = {{"web-1", 1, "agg-1"}};
  EXPECT_EQ(DecodeQuery(EncodeQuery(q)).status().message(),
            "replicas: preference 0: no host, an epoch past the cluster's or an unknown member");
  scope.selection.prefer = {{"web-1", 0, "agg-9"}};
  EXPECT_FALSE(DecodeQuery(EncodeQuery(q)).ok());
}

// A query's deadline and budget travel with it; the aggregator keeps the smaller of
// each asked and allowed limit.
TEST(QueryWire, LimitsRoundTripAndTheSmallerWins) {
  Query q;
  q.kind = Query::Kind::kStacks;
  q.stacks.from = 1000;
  q.stacks.to = 1060;
  EXPECT_EQ(DecodeQuery(EncodeQuery(q))->limits, QueryLimits{});  // none asked
  q.limits = QueryLimits{2500, 1'000'000, 0, 40, 0};
  Result<Query> back = DecodeQuery(EncodeQuery(q));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->limits, q.limits);
  const QueryLimits cap{30'000, 50'000'000, 100'000, 4'000'000, 256u << 20};
  EXPECT_EQ(back->limits.Within(cap), (QueryLimits{2500, 1'000'000, 100'000, 40, 256u << 20}));
  EXPECT_EQ(QueryLimits{}.Within(cap), cap);
  EXPECT_EQ(cap.Within(QueryLimits{}), cap);

  Answer a;
  a.id = 4;
  a.error = "query over budget: ...";
  a.over_budget = true;
  Result<Answer> answer = DecodeAnswer(EncodeAnswer(a));
  ASSERT_TRUE(answer.ok());
  EXPECT_TRUE(answer->over_budget);
  a.over_budget = false;
  EXPECT_FALSE(DecodeAnswer(EncodeAnswer(a))->over_budget);
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

TEST(QueryWire, SummariesRoundTripAndMerge) {
  Query q;
  q.histograms = {"cpu.usage", 1000, 1600, 10, "host", {}};
  q.histograms.summaries = true;
  Result<Query> back = DecodeQuery(EncodeQuery(q));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->histograms.summaries);

  Answer a;
  a.histograms.kind = MetricKind::kScalar;
  a.histograms.unit = "%";
  a.histograms.groups = {"web-1", "web-2"};
  a.histograms.summaries = {{0, 0, 2, 25.5, 12.25, 13.25}, {3, 1, 1, 99.99, 99.99, 99.99}};
  Result<Answer> got = DecodeAnswer(EncodeAnswer(a));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->histograms.summaries.size(), 2u);
  EXPECT_EQ(got->histograms.summaries[1].group, 1u);
  EXPECT_DOUBLE_EQ(got->histograms.summaries[0].sum, 25.5);
  EXPECT_DOUBLE_EQ(got->histograms.summaries[1].max, 99.99);
  EXPECT_TRUE(got->histograms.cells.empty());

  CellSummary s = got->histograms.summaries[0];
  s.Add({0, 0, 3, 30, 9.5, 11});
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.sum, 55.5);
  EXPECT_DOUBLE_EQ(s.min, 9.5);
  EXPECT_DOUBLE_EQ(s.max, 13.25);

  a.histograms.summaries[1].group = 2;  // past the groups
  EXPECT_EQ(DecodeAnswer(EncodeAnswer(a)).status().code(), Status::Code::kCorruption);
  a.histograms.summaries[1] = {3, 1, 1, 5, 6, 4};  // min above max
  EXPECT_EQ(DecodeAnswer(EncodeAnswer(a)).status().code(), Status::Code::kCorruption);
}

TEST(QueryWire, StatusRoundTripsWithItsLimitedAgents) {
  Answer a;
  a.kind = Query::Kind::kStatus;
  a.status.refused_batches = 3;
  a.status.rate_limited = 900;
  a.status.busy = 7;
  a.status.ingest_connections = 50;
  a.status.query_connections = 2;
  a.status.max_connections = 50;
  a.status.refused_at_cap = 150;
  a.status.limited_agents = {{"flood/1@k", 880, "batches"}, {"web-2/9@w", 20, "bytes"}};
  Result<Answer> back = DecodeAnswer(EncodeAnswer(a));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->status, a.status);
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
  q.stacks.group_by = "pid";
  Result<Query> back = DecodeQuery(EncodeQuery(q));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->kind, Query::Kind::kStacks);
  EXPECT_EQ(back->stacks.hosts, q.stacks.hosts);
  EXPECT_EQ(back->stacks.where, q.stacks.where);
  EXPECT_EQ(back->stacks.group_by, "pid");
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

TEST(StackQueryWire, RegionRoundTripsAndIsChecked) {
  Query q;
  q.kind = Query::Kind::kStacks;
  q.stacks.from = 100;
  q.stacks.to = 160;
  q.stacks.region = RegionBand{"disk.latency", "value >= 50ms and value <= 2s", true, 40, 200};
  Result<Query> back = DecodeQuery(EncodeQuery(q));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_TRUE(back->stacks.region.has_value());
  EXPECT_EQ(*back->stacks.region, *q.stacks.region);
  q.stacks.region.reset();
  back = DecodeQuery(EncodeQuery(q));
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->stacks.region.has_value());
  // A band that compares no value, a baseline not holding the region, a --where or --by on the
  // stacks: each refused with what is wrong.
  const std::vector<std::pair<RegionBand, std::string>> bad = {
      {{"disk.latency", "host == \"a\"", false, 0, 0}, "must compare the value"},
      {{"disk.latency", "value > 1ms", true, 110, 200}, "baseline's range must hold"},
      {{"disk latency", "value > 1ms", false, 0, 0}, "disk latency"},
      {{"disk.latency", "value >", false, 0, 0}, "region --where"}};
  for (const auto& [region, why] : bad) {
    q.stacks.region = region;
    const Status s = DecodeQuery(EncodeQuery(q)).status();
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << why;
    EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
  }
  q.stacks.region = RegionBand{"disk.latency", "value > 1ms", false, 0, 0};
  q.stacks.group_by = "host";
  EXPECT_NE(DecodeQuery(EncodeQuery(q)).status().message().find("apply to its metric"),
            std::string::npos);

  Answer a;
  a.kind = Query::Kind::kStacks;
  a.stacks.stacks = {{"main;foo", 5}};
  a.stacks.baseline = FoldedStacks{{"main;bar", 2}, {"main;foo", 1}};
  a.stacks.region_hosts = {{"web-1", 5, 2}, {"web-2", 1, 1}};
  Result<Answer> answer = DecodeAnswer(EncodeAnswer(a));
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->stacks.stacks, a.stacks.stacks);
  EXPECT_EQ(answer->stacks.baseline, a.stacks.baseline);
  EXPECT_EQ(answer->stacks.region_hosts, a.stacks.region_hosts);
  a.stacks.baseline = FoldedStacks{};  // an empty baseline is still a baseline
  answer = DecodeAnswer(EncodeAnswer(a));
  ASSERT_TRUE(answer.ok());
  ASSERT_TRUE(answer->stacks.baseline.has_value());
  EXPECT_TRUE(answer->stacks.baseline->empty());
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
  q.stacks.where = "";
  q.stacks.group_by = "a;b";
  EXPECT_NE(DecodeQuery(EncodeQuery(q)).status().message().find("--by \"a;b\""),
            std::string::npos);
}

// fuzz/corpus/query/answer_empty_metrics: 216 bytes whose metrics list holds 385,024 empty
// structs (they cost no bytes). DecodeAnswer built every one (58 MB, 14 s under ASan); now a
// metric without a name is refused at the first.
TEST(QueryWire, AnswerOfEmptyMetricsIsRefusedAtTheFirst) {
  const std::string bytes(
      "\x00\x00\x00\x00\x15\x00\x00\x00\x00\x00\x00\x00\x02\x00\x03\x00"
      "\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
      "\x09\x00\x00\x00\x0a\x00\x00\x00\x09\x00\x00\x00\x0a\x00\x00\x00"
      "\x09\x00\x00\x00\x00\x00\x2f\x00\x00\x00\x00\x00\x00\x00\x00\x00"
      "\x00\x00\x00\x00\x00\x99\x00\x00\x00\x04\x00\x00\x00\x01\x00\x04"
      "\x00\x00\x00\x00\x40\x00\x00\x00\x00\x0d\x00\x00\x00\x6a\x00\x00"
      "\x00\x11\x00\x00\x00\x1a\x00\x00\x00\x19\x00\x00\x00\x0e\x00\x00"
      "\x00\x0d\x00\x00\x00\x6a\x00\x00\x00\x64\x69\x73\x6b\x2e\x6c\x61"
      "\x74\x65\x6e\x63\x79\x00\x00\x00\x00\x6e\x73\x00\x00\x00\xff\xff"
      "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
      "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x00"
      "\x00\x00\x72\x65\x61\xff\xff\xff\xff\xff\xff\x64\x20\x6c\x61\x74"
      "\x65\x6e\x63\x79\x00\x00\x00\x00\x01\x00\x00\x00\x1a\x00\x00\x00"
      "\x6f\x70\x00\x00\x00\x00\x00\x00",
      216);
  const auto start = std::chrono::steady_clock::now();
  Result<Answer> a = DecodeAnswer(bytes);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(), "answer metric 0 has no name");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

// The same attack on a histograms answer: its one cell's list rewritten to 2^24 empty structs
// (the list's tag word: that many elements of 0 data words and 0 pointers, so no bytes each).
// Every such cell has no encoding; the first is refused before the list is walked.
TEST(QueryWire, AnswerOfEmptyCellsIsRefusedAtTheFirst) {
  Answer a;
  a.histograms.unit = "ns";
  a.histograms.groups = {"g"};
  QueryCell cell;
  cell.histogram.Record(5);
  a.histograms.cells.push_back(cell);
  std::string bytes = EncodeAnswer(a);
  // The cells' tag word: 1 element (count << 2, struct kind 0) of 1 data word and 1 pointer.
  const std::string tag("\x04\x00\x00\x00\x01\x00\x01\x00", 8);
  size_t at = std::string::npos;
  for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
    if (bytes.compare(i, 8, tag) == 0) {
      ASSERT_EQ(at, std::string::npos) << "two tag words alike";
      at = i;
    }
  }
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 8, std::string("\x00\x00\x00\x04\x00\x00\x00\x00", 8));  // 2^24, 0, 0
  const auto start = std::chrono::steady_clock::now();
  Result<Answer> back = DecodeAnswer(bytes);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().message(), "answer cell 0: histogram: empty input");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace trailmap
