#include "aggregator/server/self_metrics.h"

#include <gtest/gtest.h>

#include <set>

#include "aggregator/scan/store_query.h"
#include "aggregator/store/testing.h"
#include "core/prometheus_text.h"
#include "core/testing_promtool.h"

namespace trailmap::aggregator {
namespace {

using testing::TempDir;

constexpr int64_t kT = 1'700'000'000;

StoreOptions TestOptions() {
  StoreOptions o;
  o.sync = false;
  o.rollup_interval_ms = 0;
  return o;
}

std::unique_ptr<Store> MustOpen(const std::string& dir) {
  Result<std::unique_ptr<Store>> store = Store::Open(dir, TestOptions());
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

AggregatorCounters Counters(uint64_t applied, uint64_t bytes) {
  AggregatorCounters c;
  c.ingest = IngestCounters{};
  c.ingest->applied = applied;
  c.ingest->bytes = bytes;
  c.queries_answered = 0;
  c.query_errors = applied / 5;
  c.queries_over_budget = applied / 10;
  c.rocksdb = RocksDbStats{.pending_compaction_bytes = 4096, .memtable_bytes = 1 << 20};
  c.process = ProcessStats{.rss_bytes = 80 << 20, .open_fds = 30};
  return c;
}

AggregatorSelfMetricsOptions Options() {
  return AggregatorSelfMetricsOptions{.host = "agg-host", .shard = "agg-1"};
}

// Events of `metric` in [from, to) on this store.
uint64_t CountOf(const Store& store, const std::string& metric, int64_t from, int64_t to) {
  HistogramQuery q;
  q.metric = metric;
  q.from = from;
  q.to = to;
  q.step = static_cast<uint32_t>(to - from);
  Result<HistogramAnswer> a = QueryHistograms(store, q);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  uint64_t n = 0;
  for (const QueryCell& c : a->cells) n += c.histogram.count();
  return n;
}

TEST(AggregatorSelfMetrics, CountersAreStoredAsTheirGainPerSecond) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  AggregatorSelfMetrics self(AggregatorParts{.store = store.get()}, Options());
  EXPECT_EQ(self.agent_id(), "agg-host/aggregator");
  Result<ApplyOutcome> first = self.Publish(kT, Counters(10, 5000));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->status, Ack::Status::kApplied);
  ASSERT_TRUE(self.Publish(kT + 1, Counters(25, 9000)).ok());
  const std::string f = "shard=agg-1";
  EXPECT_EQ(store->ScalarAt("trailmap.aggregator.ingest.batches", "agg-host", f, kT), 10);
  EXPECT_EQ(store->ScalarAt("trailmap.aggregator.ingest.batches", "agg-host", f, kT + 1), 15);
  EXPECT_EQ(store->ScalarAt("trailmap.aggregator.ingest.bytes", "agg-host", f, kT + 1), 4000);
  EXPECT_EQ(store->ScalarAt("trailmap.aggregator.query.errors", "agg-host", f, kT + 1), 3);
  EXPECT_EQ(store->ScalarAt("trailmap.aggregator.query.over_budget", "agg-host", f, kT + 1), 1);
  EXPECT_EQ(store->ScalarAt("trailmap.aggregator.rocksdb.pending_compaction_bytes", "agg-host", f,
                            kT + 1),
            4096);
  EXPECT_EQ(store->ScalarAt("trailmap.aggregator.process.rss", "agg-host", f, kT), 80 << 20);
  EXPECT_EQ(store->ScalarAt("trailmap.aggregator.process.cpu", "agg-host", "mode=user," + f, kT),
            0);
  EXPECT_EQ(store->Watermark("agg-host/aggregator"), 2u);
  // Described in the catalog, with units.
  bool found = false;
  for (const MetricInfo& m : store->Metrics()) {
    if (m.name != "trailmap.aggregator.ingest.batches") continue;
    found = true;
    EXPECT_EQ(m.unit, "batches/s");
    EXPECT_EQ(m.description, "agent batches applied");
  }
  EXPECT_TRUE(found);
}

TEST(AggregatorSelfMetrics, QueryLatenciesAreOneEventPerQueryInTheSecondAnswered) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  int64_t now = kT;
  QueryLatencies latencies([&now] { return now; });
  AggregatorSelfMetrics self(AggregatorParts{.store = store.get(), .latencies = &latencies},
                             Options());
  for (int i = 0; i < 5; ++i) latencies.Record("histograms", std::chrono::microseconds(300 + i));
  latencies.Record("metrics", std::chrono::microseconds(50));
  now = kT + 1;
  latencies.Record("histograms", std::chrono::milliseconds(2));
  now = kT + 2;
  latencies.Record("stacks", std::chrono::milliseconds(9));  // not yet: its second is not over
  ASSERT_TRUE(self.Publish(kT + 1, Counters(0, 0)).ok());
  EXPECT_EQ(CountOf(*store, "trailmap.aggregator.query.latency", kT, kT + 1), 6u);
  EXPECT_EQ(CountOf(*store, "trailmap.aggregator.query.latency", kT + 1, kT + 2), 1u);
  EXPECT_EQ(CountOf(*store, "trailmap.aggregator.query.latency", kT, kT + 10), 7u);
  ASSERT_TRUE(self.Publish(kT + 2, Counters(0, 0)).ok());
  EXPECT_EQ(CountOf(*store, "trailmap.aggregator.query.latency", kT + 2, kT + 3), 1u);
  // By kind: the field kind, next to the shard.
  HistogramQuery q{.metric = "trailmap.aggregator.query.latency", .from = kT, .to = kT + 3,
                   .step = 3, .group_by = "kind"};
  Result<HistogramAnswer> a = QueryHistograms(*store, q);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->groups, (std::vector<std::string>{"histograms", "metrics", "stacks"}));
}

// What --metrics serves: every reading with the shard label, and the query latencies since the
// start as a classic histogram by kind; exact counts, and Prometheus' linter accepts it.
TEST(AggregatorSelfMetrics, PrometheusTextPassesPromtool) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  QueryLatencies latencies({}, /*by_second=*/false);
  for (int i = 0; i < 5; ++i) latencies.Record("histograms", std::chrono::microseconds(300 + i));
  latencies.Record("histograms", std::chrono::milliseconds(40));
  latencies.Record("metrics", std::chrono::microseconds(50));
  EXPECT_TRUE(latencies.TakeBefore(INT64_MAX).empty());  // totals only
  const std::string text = AggregatorPrometheusText(
      AggregatorParts{.store = store.get(), .latencies = &latencies}, "agg-1");
  for (const char* line : {
           "# TYPE trailmap_aggregator_query_latency_seconds histogram\n",
           "trailmap_aggregator_query_latency_seconds_bucket{kind=\"histograms\",shard=\"agg-1\","
           "le=\"0.000244140625\"} 0\n",
           "trailmap_aggregator_query_latency_seconds_bucket{kind=\"histograms\",shard=\"agg-1\","
           "le=\"0.00048828125\"} 5\n",
           "trailmap_aggregator_query_latency_seconds_bucket{kind=\"histograms\",shard=\"agg-1\","
           "le=\"0.03125\"} 5\n",
           "trailmap_aggregator_query_latency_seconds_bucket{kind=\"histograms\",shard=\"agg-1\","
           "le=\"0.0625\"} 6\n",
           "trailmap_aggregator_query_latency_seconds_count{kind=\"histograms\",shard=\"agg-1\"} "
           "6\n",
           "trailmap_aggregator_query_latency_seconds_sum{kind=\"histograms\",shard=\"agg-1\"} "
           "0.04151\n",
           "trailmap_aggregator_query_latency_seconds_count{kind=\"metrics\",shard=\"agg-1\"} 1\n",
           "# TYPE trailmap_aggregator_rocksdb_live_sst_bytes gauge\n",
           "# TYPE trailmap_aggregator_agents gauge\n",
           "trailmap_aggregator_merges_saturated_total{shard=\"agg-1\"} 0\n",
           "trailmap_aggregator_threads_failed_total{shard=\"agg-1\"} 0\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
  EXPECT_EQ(trailmap::testing::PromtoolCheck(text), "") << text;

  // Every part there is, as the real aggregator reads them.
  AggregatorCounters all = Counters(25, 9000);
  all.health = StoreHealth{};
  all.connections = ConnectionCounts{.ingest = 3, .query = 1, .refused_unlisted = 2};
  EXPECT_EQ(trailmap::testing::PromtoolCheck(FormatPrometheusText(
                AggregatorReadings(all, "shard=agg-1"))),
            "");
}

TEST(QueryLatencies, KindOfAnAnswer) {
  Answer a;
  a.id = 7;
  a.kind = Query::Kind::kStacks;
  EXPECT_STREQ(QueryLatencies::KindOf(a), "stacks");
  a.kind = Query::Kind::kMetrics;
  a.error = "corruption: ...";  // a query that decoded and failed keeps its kind
  EXPECT_STREQ(QueryLatencies::KindOf(a), "metrics");
  a.id = 0;  // what DecodeQuery's failure answers
  a.error = "bad query: query is not a Cap'n Proto message";
  EXPECT_STREQ(QueryLatencies::KindOf(a), "invalid");
  a.id = 9;  // a query that does not decode, answered with its id
  a.error = "bad query: metric name '' is empty";
  EXPECT_STREQ(QueryLatencies::KindOf(a), "invalid");
}

TEST(AggregatorSelfMetrics, ARestartContinuesTheSequenceFromTheWatermark) {
  TempDir dir;
  {
    std::unique_ptr<Store> store = MustOpen(dir.path());
    AggregatorSelfMetrics self(AggregatorParts{.store = store.get()}, Options());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(self.Publish(kT + i, Counters(i, 0)).ok());
  }
  std::unique_ptr<Store> store = MustOpen(dir.path());
  AggregatorSelfMetrics self(AggregatorParts{.store = store.get()}, Options());
  Result<ApplyOutcome> r = self.Publish(kT + 10, Counters(4, 0));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, Ack::Status::kApplied);
  EXPECT_EQ(r->watermark, 4u);
  // The new process counts from its own start: the first value is its whole count.
  EXPECT_EQ(store->ScalarAt("trailmap.aggregator.ingest.batches", "agg-host", "shard=agg-1", kT + 10),
            4);
  EXPECT_EQ(store->ScalarAt("trailmap.aggregator.ingest.batches", "agg-host", "shard=agg-1", kT + 2),
            1);
}

TEST(AggregatorSelfMetrics, KeepsTheLabelsAnAgentGaveTheHost) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  Batch b = testing::MakeBatch("agg-host/1", 1, "agg-host", {testing::Latency("disk.latency")});
  b.labels = {{"role", "db"}};
  b.seconds.push_back(SecondDelta{kT, {HistogramDelta{0, testing::Encoded({100})}}, {}, {}});
  ASSERT_TRUE(store->ApplyBatch(b).ok());
  AggregatorSelfMetrics self(AggregatorParts{.store = store.get()}, Options());
  ASSERT_TRUE(self.Publish(kT, Counters(1, 0)).ok());
  EXPECT_EQ(store->HostLabels("agg-host"), "role=db");
  EXPECT_EQ(store->HostLabels("nobody"), std::nullopt);
}

TEST(AggregatorSelfMetrics, ReadingsAreDescribedValidSeriesOfAnAcceptedBatch) {
  const SelfReadings readings = AggregatorReadings(Counters(1, 1), "shard=agg-1");
  std::set<std::string> names;
  for (const SelfReading& r : readings) {
    SCOPED_TRACE(r.series.metric);
    EXPECT_TRUE(r.series.metric.starts_with("trailmap.aggregator."));
    EXPECT_FALSE(r.series.description.empty());
    EXPECT_FALSE(r.series.unit.empty());
    EXPECT_NE(r.series.fields.find("shard=agg-1"), std::string::npos);
    EXPECT_TRUE(CanonicalFields(*ParseFields(r.series.fields)).ok());
    names.insert(r.series.metric);
  }
  for (const char* m : {"trailmap.aggregator.ingest.batches", "trailmap.aggregator.ingest.failed",
                        "trailmap.aggregator.query.answered",
                        "trailmap.aggregator.rocksdb.pending_compaction_bytes",
                        "trailmap.aggregator.rocksdb.background_errors",
                        "trailmap.aggregator.rollups.pending",
                        "trailmap.aggregator.rollups.pending_blocks",
                        "trailmap.aggregator.aggregates.backfill_pending",
                        "trailmap.aggregator.process.fds"}) {
    EXPECT_TRUE(names.count(m)) << m;
  }
  // As a batch, the readings pass every check an agent's batch must.
  Batch b;
  b.agent = "agg-host/aggregator";
  b.sequence = 1;
  b.host = "agg-host";
  SecondDelta s{kT, {}, {}, {}};
  for (const SelfReading& r : readings) {
    s.scalars.push_back(ScalarValue{static_cast<uint32_t>(b.series.size()), r.value});
    b.series.push_back(r.series);
  }
  b.seconds.push_back(s);
  Result<Batch> decoded = DecodeBatch(EncodeBatch(b));
  EXPECT_TRUE(decoded.ok()) << decoded.status().ToString();
}

TEST(StoreRocksDbProperties, SeeMemtablesAndFiles) {
  TempDir dir;
  std::unique_ptr<Store> store = MustOpen(dir.path());
  AggregatorSelfMetrics self(AggregatorParts{.store = store.get()}, Options());
  ASSERT_TRUE(self.Publish(kT).ok());  // reads the real store and process
  const RocksDbStats before = store->RocksDbProperties();
  EXPECT_GT(before.memtable_bytes, 0u);
  EXPECT_EQ(before.background_errors, 0u);
  ASSERT_TRUE(store->Flush().ok());
  EXPECT_GT(store->RocksDbProperties().live_sst_bytes, 0u);
  EXPECT_GT(*store->ScalarAt("trailmap.aggregator.process.rss", "agg-host", "shard=agg-1", kT), 0);
}

}  // namespace
}  // namespace trailmap::aggregator
