#include "agent/self_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/prometheus_text.h"
#include "core/testing_promtool.h"

namespace trailmap {
namespace {

// "metric{fields}@second" -> value of every scalar in `done`.
std::map<std::string, double> Scalars(const CompletedSeconds& done) {
  std::map<std::string, double> out;
  for (const SecondDelta& s : done.seconds) {
    for (const ScalarValue& v : s.scalars) {
      const SeriesDef& d = done.series[v.series];
      out[d.metric + "{" + d.fields + "}@" + std::to_string(s.time)] = v.value;
    }
  }
  return out;
}

AgentCounters SomeCounters() {
  AgentCounters c;
  c.statsd = StatsdCounters{};
  c.statsd->packets = 10;
  c.statsd->lines_accepted = 200;
  c.statsd->lines_rejected = 3;
  c.statsd->rejected_by_reason[static_cast<size_t>(StatsdReject::kRate)] = 3;
  c.shipper = ShipperCounters{};
  c.shipper->sent = 4;
  c.shipper->acked = 3;
  c.process =
      ProcessStats{.rss_bytes = 50 << 20, .open_fds = 12, .user_cpu_ns = 9, .system_cpu_ns = 1};
  return c;
}

TEST(AgentSelfMetrics, CountersShipTheirGainPerSecondGaugesTheirValue) {
  Bucketizer bucketizer;
  AgentSelfMetrics self(&bucketizer, AgentParts{});
  AgentCounters c = SomeCounters();
  self.Record(100, c);
  c.statsd->lines_accepted = 260;
  c.statsd->packets = 13;
  c.shipper->acked = 4;
  c.process->rss_bytes = 51 << 20;
  self.Record(101, c);
  std::map<std::string, double> got = Scalars(bucketizer.TakeAll());
  EXPECT_EQ(got["trailmap.agent.statsd.lines{}@100"], 200);  // counted from the start
  EXPECT_EQ(got["trailmap.agent.statsd.lines{}@101"], 60);
  EXPECT_EQ(got["trailmap.agent.statsd.packets{}@101"], 3);
  EXPECT_EQ(got["trailmap.agent.statsd.rejected{reason=rate}@100"], 3);
  EXPECT_EQ(got["trailmap.agent.statsd.rejected{reason=rate}@101"], 0);
  EXPECT_EQ(got["trailmap.agent.statsd.rejected{reason=syntax}@100"], 0);
  EXPECT_EQ(got["trailmap.agent.batches.acked{}@100"], 3);
  EXPECT_EQ(got["trailmap.agent.batches.acked{}@101"], 1);
  EXPECT_EQ(got["trailmap.agent.process.rss{}@100"], 50 << 20);
  EXPECT_EQ(got["trailmap.agent.process.rss{}@101"], 51 << 20);
  EXPECT_EQ(got["trailmap.agent.process.fds{}@101"], 12);
  EXPECT_EQ(got["trailmap.agent.process.cpu{mode=user}@100"], 9);
  EXPECT_EQ(got["trailmap.agent.process.cpu{mode=user}@101"], 0);
  // Parts that do not run publish nothing.
  for (const auto& [key, value] : got) {
    EXPECT_EQ(key.find("trailmap.agent.proc."), std::string::npos) << key;
    EXPECT_EQ(key.find("trailmap.agent.events"), std::string::npos) << key;
  }
}

TEST(AgentSelfMetrics, EveryReadingIsAValidDescribedSeriesOfAnAcceptedBatch) {
  AgentCounters c = SomeCounters();
  c.bucketizer = BucketizerCounters{};
  c.proc = ProcCounters{};
  c.proc->last_pass_us = 1500;
  c.execs.emplace_back("queue.depth", ExecCounters{});
  c.perf = PerfSourceStats{};
  c.folded = FoldedSourceStats{};
  const SelfReadings readings = AgentReadings(c);
  std::set<std::string> names;
  std::map<std::string, std::string> description_of;
  for (const SelfReading& r : readings) {
    SCOPED_TRACE(r.series.metric + "{" + r.series.fields + "}");
    EXPECT_TRUE(r.series.metric.starts_with("trailmap.agent."));
    EXPECT_EQ(r.series.kind, MetricKind::kScalar);
    EXPECT_FALSE(r.series.unit.empty());
    EXPECT_FALSE(r.series.description.empty());
    // One description per metric, whatever its fields.
    auto [it, first] = description_of.emplace(r.series.metric, r.series.description);
    EXPECT_EQ(it->second, r.series.description);
    EXPECT_TRUE(names.insert(r.series.metric + "{" + r.series.fields + "}").second) << "twice";
  }
  EXPECT_TRUE(names.count("trailmap.agent.exec.rejected{exec=queue.depth,reason=bad_value}"));
  EXPECT_TRUE(names.count("trailmap.agent.proc.pass_time{}"));
  EXPECT_TRUE(names.count("trailmap.agent.folded.lines{}"));
  EXPECT_TRUE(names.count("trailmap.agent.perf.samples{}"));
  // What the aggregator would accept: the readings of one second as a batch decode cleanly.
  Bucketizer bucketizer;
  AgentSelfMetrics self(&bucketizer, AgentParts{});
  self.Record(1'700'000'000, c);
  CompletedSeconds done = bucketizer.TakeAll();
  ASSERT_EQ(done.seconds.size(), 1u);
  EXPECT_EQ(done.seconds[0].scalars.size(), readings.size());
  Batch batch = MakeBatch(std::move(done), "web-1", {});
  batch.agent = "web-1/0123456789abcdef";
  batch.sequence = 1;
  Result<Batch> decoded = DecodeBatch(EncodeBatch(batch));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->series.size(), readings.size());
}

TEST(AgentSelfMetrics, TickRecordsOncePerSecondIntoTheSecondJustEnded) {
  Bucketizer bucketizer;
  AgentSelfMetrics self(&bucketizer, AgentParts{.bucketizer = &bucketizer});
  EXPECT_TRUE(self.Tick(1000));
  EXPECT_FALSE(self.Tick(1000));  // a second tick within the second records nothing
  EXPECT_FALSE(self.Tick(999));   // nor does a clock that stepped back
  EXPECT_TRUE(self.Tick(1003));   // a stall: the gap goes into the second before now
  std::map<std::string, double> got = Scalars(bucketizer.TakeAll());
  EXPECT_TRUE(got.count("trailmap.agent.events{}@999"));
  EXPECT_TRUE(got.count("trailmap.agent.events{}@1002"));
  EXPECT_TRUE(got.count("trailmap.agent.process.rss{}@1002"));
  EXPECT_GT(got["trailmap.agent.process.rss{}@1002"], 0);
  // The first reading's scalars are counted by the bucketizer the second reads.
  EXPECT_EQ(got["trailmap.agent.scalars{}@999"], 0);
  EXPECT_GT(got["trailmap.agent.scalars{}@1002"], 0);
  EXPECT_EQ(got.count("trailmap.agent.events{}@1000"), 0u);
}

TEST(AgentSelfMetrics, AtExitTheStoppedStatsdServersCountersAreUsed) {
  Bucketizer bucketizer;
  AgentSelfMetrics self(&bucketizer, AgentParts{.bucketizer = &bucketizer});
  StatsdCounters stopped;
  stopped.lines_accepted = 77;
  self.RecordAtExit(2000, stopped);
  std::map<std::string, double> got = Scalars(bucketizer.TakeAll());
  EXPECT_EQ(got["trailmap.agent.statsd.lines{}@2000"], 77);
  self.RecordAtExit(2001, std::nullopt);  // no statsd server: nothing of it
  got = Scalars(bucketizer.TakeAll());
  EXPECT_EQ(got.count("trailmap.agent.statsd.lines{}@2001"), 0u);
  EXPECT_TRUE(got.count("trailmap.agent.events{}@2001"));
}

// Every part of the agent with counters, the way ReadAgentCounters fills them.
AgentCounters EveryPart() {
  AgentCounters c;
  c.statsd = StatsdCounters{};
  c.statsd->lines_accepted = 1000;
  c.statsd->rejected_by_reason[static_cast<size_t>(StatsdReject::kTag)] = 2;
  c.bucketizer = BucketizerCounters{};
  c.pending_seconds = 2;
  c.shipper = ShipperCounters{};
  c.spool = SpoolCounters{};
  c.proc = ProcCounters{};
  c.execs.emplace_back("app.queue", ExecCounters{});
  c.perf = PerfSourceStats{};
  c.folded = FoldedSourceStats{};
  c.process = ProcessStats{.rss_bytes = 50 << 20,
                           .open_fds = 12,
                           .user_cpu_ns = 9'000'000'000,
                           .system_cpu_ns = 1'000'000};
  return c;
}

// Every agent self-metric, as the agent's --metrics serves it (net/metrics_http.h), passes
// Prometheus' own linter.
TEST(AgentSelfMetrics, EveryMetricPassesPromtool) {
  const std::string text = FormatPrometheusText(AgentReadings(EveryPart()));
  EXPECT_NE(text.find("trailmap_agent_statsd_rejected_total{reason=\"tag\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("trailmap_agent_process_cpu_seconds_total{mode=\"user\"} 9\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(testing::PromtoolCheck(text), "") << text;
}

}  // namespace
}  // namespace trailmap
