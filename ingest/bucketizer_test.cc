#include "ingest/bucketizer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <string>
#include <thread>

namespace trailmap {
namespace {

SeriesDef Latency(std::string metric, std::string fields = "") {
  return {std::move(metric), MetricKind::kLatency, "ns", std::move(fields)};
}

// "time metric{fields}=count ..." for every histogram, to compare as a string.
std::string Show(const CompletedSeconds& done) {
  std::string out;
  for (const SecondDelta& s : done.seconds) {
    out += std::to_string(s.time) + ":";
    for (const HistogramDelta& h : s.histograms) {
      const SeriesDef& def = done.series.at(h.series);
      Result<Histogram> hist = Histogram::Decode(h.encoded);
      out += " " + def.metric + "{" + def.fields +
             "}=" + (hist.ok() ? std::to_string(hist->count()) : hist.status().ToString());
    }
    out += "\n";
  }
  return out;
}

TEST(Bucketizer, GroupsBySecondAndSeries) {
  Bucketizer b;
  b.Add(100, Latency("disk.latency", "op=read"), 1000);
  b.Add(100, Latency("disk.latency", "op=read"), 2000, 4);
  b.Add(100, Latency("disk.latency", "op=write"), 3000);
  b.Add(101, Latency("disk.latency", "op=read"), 1000);
  b.Add(99, Latency("http.latency"), 5);
  b.Add(102, Latency("http.latency"), 5);

  CompletedSeconds done = b.TakeSecondsBefore(102);
  EXPECT_EQ(Show(done),
            "99: http.latency{}=1\n"
            "100: disk.latency{op=read}=5 disk.latency{op=write}=1\n"
            "101: disk.latency{op=read}=1\n");
  // One series table for the whole take: op=read appears once.
  EXPECT_EQ(done.series.size(), 3u);
  EXPECT_EQ(b.pending_seconds(), 1u);
  EXPECT_TRUE(b.TakeSecondsBefore(102).empty());
  EXPECT_EQ(Show(b.TakeAll()), "102: http.latency{}=1\n");
  EXPECT_EQ(b.counters().events, 9u);
}

TEST(Bucketizer, TakesAtMostMaxSecondsAtATime) {
  Bucketizer b;
  for (int64_t t = 10; t < 15; ++t) b.Add(t, Latency("a"), 1);
  EXPECT_EQ(Show(b.TakeSecondsBefore(100, 2)), "10: a{}=1\n11: a{}=1\n");
  EXPECT_EQ(Show(b.TakeSecondsBefore(100, 2)), "12: a{}=1\n13: a{}=1\n");
  EXPECT_EQ(Show(b.TakeSecondsBefore(100, 2)), "14: a{}=1\n");
}

TEST(Bucketizer, OverflowSeriesTakesWhatIsBeyondTheBoundAndCountsIt) {
  Bucketizer b(BucketizerOptions{.max_series_per_metric = 2});
  b.Add(5, Latency("m", "k=1"), 1);
  b.Add(5, Latency("m", "k=2"), 1);
  b.Add(5, Latency("m", "k=3"), 1, 3);
  b.Add(5, Latency("m", "k=4"), 1);
  b.Add(5, Latency("m", "k=1"), 1);      // already has a series
  b.Add(5, Latency("other", "k=9"), 1);  // the bound is per metric
  b.Add(6, Latency("m", "k=3"), 1);      // and per second
  EXPECT_EQ(Show(b.TakeAll()),
            "5: m{k=1}=2 m{k=2}=1 m{overflow=true}=4 other{k=9}=1\n"
            "6: m{k=3}=1\n");
  EXPECT_EQ(b.counters().overflow_events, 4u);
  EXPECT_EQ(b.counters().events, 9u);
}

TEST(Bucketizer, LateEventsGoOutWithTheNextTake) {
  Bucketizer b;
  b.Add(10, Latency("a"), 1);
  EXPECT_EQ(Show(b.TakeSecondsBefore(11)), "10: a{}=1\n");
  b.Add(10, Latency("a"), 1, 2);
  b.Add(11, Latency("a"), 1);
  EXPECT_EQ(b.counters().late_events, 2u);
  EXPECT_EQ(Show(b.TakeSecondsBefore(12)), "10: a{}=2\n11: a{}=1\n");
}

TEST(Bucketizer, MakeBatchCarriesHostLabelsAndEncodes) {
  Bucketizer b;
  b.Add(1'700'000'000, Latency("a", "op=r"), 1500);
  Batch batch = MakeBatch(b.TakeAll(), "web-1", {{"role", "web"}});
  batch.agent = "web-1/0123456789abcdef";
  batch.sequence = 1;
  Result<Batch> back = DecodeBatch(EncodeBatch(batch));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->host, "web-1");
  EXPECT_EQ(back->labels, (FieldSet{{"role", "web"}}));
  ASSERT_EQ(back->series.size(), 1u);
  EXPECT_EQ(back->series[0].fields, "op=r");
}

TEST(Bucketizer, RefusesWhatWouldTakeASecondOfASeriesPastTheItemBound) {
  Bucketizer b;
  const SeriesDef x = Latency("x"), y = Latency("y");
  b.Add(100, x, 5, kMaxItemCount - 1);
  b.Add(100, y, 7, 3);
  b.Add(100, x, 5, 2);              // would make 2^40 + 1: refused whole
  b.Add(100, x, 6, 1);              // 2^40 exactly: taken (the fast path)
  b.Add(100, x, 6, 1);              // refused
  b.Add(100, y, 7, UINT64_MAX);     // refused (a count no statsd line can carry any more)
  b.Add(101, x, 5, kMaxItemCount);  // another second: taken
  const BucketizerCounters c = b.counters();
  EXPECT_EQ(c.refused_events, kMaxTotalCount);  // 2 + 1 + (2^64 - 1): saturated, not wrapped
  EXPECT_EQ(c.events, 2 * kMaxItemCount + 3);
  Batch batch = MakeBatch(b.TakeAll(), "web-1", {});
  batch.agent = "web-1/x";
  batch.sequence = 1;
  Result<Batch> back = DecodeBatch(EncodeBatch(batch));  // every item within the bound
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  CompletedSeconds shown;
  shown.series = back->series;
  shown.seconds = back->seconds;
  EXPECT_EQ(Show(shown), "100: x{}=1099511627776 y{}=3\n101: x{}=1099511627776\n");
}

TEST(Bucketizer, AddAndTakeFromTwoThreads) {
  Bucketizer b;
  std::thread adder([&b] {  // joined below, before b goes away
    for (int i = 0; i < 100'000; ++i) b.Add(i / 1000, Latency("a", i % 2 ? "k=1" : "k=2"), i);
  });
  uint64_t total = 0;
  auto count = [&total](const CompletedSeconds& done) {
    for (const SecondDelta& s : done.seconds) {
      for (const HistogramDelta& h : s.histograms) total += Histogram::Decode(h.encoded)->count();
    }
  };
  for (int i = 0; i < 200; ++i) count(b.TakeSecondsBefore(i / 2));
  adder.join();
  while (true) {
    CompletedSeconds rest = b.TakeAll();
    if (rest.empty()) break;
    count(rest);
  }
  EXPECT_EQ(total, 100'000u);
}

SeriesDef Scalar(std::string metric, std::string fields = "") {
  return {std::move(metric), MetricKind::kScalar, "%", std::move(fields)};
}

// "time metric{fields}=value ..." for every scalar.
std::string ShowScalars(const CompletedSeconds& done) {
  std::string out;
  for (const SecondDelta& s : done.seconds) {
    out += std::to_string(s.time) + ":";
    for (const ScalarValue& v : s.scalars) {
      const SeriesDef& def = done.series.at(v.series);
      char value[32];
      std::snprintf(value, sizeof value, "%g", v.value);
      out += " " + def.metric + "{" + def.fields + "}=" + value;
    }
    out += "\n";
  }
  return out;
}

TEST(BucketizerScalars, LastWriteWinsAndScalarOnlySecondsShip) {
  Bucketizer b;
  b.SetScalar(100, Scalar("cpu.usage", "mode=user"), 10);
  b.SetScalar(100, Scalar("cpu.usage", "mode=user"), 12.5);  // replaces 10
  b.SetScalar(100, Scalar("cpu.usage", "mode=idle"), 80);
  b.SetScalar(101, Scalar("cpu.usage", "mode=user"), 0);  // zero is a value, shipped
  b.Add(101, Latency("disk.latency"), 1000);
  CompletedSeconds done = b.TakeSecondsBefore(102);
  EXPECT_EQ(ShowScalars(done),
            "100: cpu.usage{mode=user}=12.5 cpu.usage{mode=idle}=80\n"
            "101: cpu.usage{mode=user}=0\n");
  EXPECT_EQ(Show(done), "100:\n101: disk.latency{}=1\n");
  // One series table: mode=user is listed once for both seconds, with its kind and unit.
  ASSERT_EQ(done.series.size(), 3u);
  EXPECT_EQ(done.series[0].kind, MetricKind::kScalar);
  EXPECT_EQ(done.series[0].unit, "%");
  EXPECT_EQ(b.counters().scalars, 4u);
  EXPECT_EQ(b.counters().events, 1u);  // scalars are not events
}

TEST(BucketizerScalars, OverflowSumsAndCounts) {
  Bucketizer b(BucketizerOptions{2});
  b.SetScalar(5, Scalar("mem.rss", "execname=a"), 100);
  b.SetScalar(5, Scalar("mem.rss", "execname=b"), 200);
  b.SetScalar(5, Scalar("mem.rss", "execname=c"), 300);  // beyond the bound of 2
  b.SetScalar(5, Scalar("mem.rss", "execname=d"), 400);
  b.SetScalar(5, Scalar("mem.rss", "execname=a"), 150);  // an existing series still replaces
  b.SetScalar(5, Scalar("cpu.usage", "mode=user"), 1);   // another metric has its own bound
  EXPECT_EQ(ShowScalars(b.TakeAll()),
            "5: mem.rss{execname=a}=150 mem.rss{execname=b}=200 mem.rss{overflow=true}=700 "
            "cpu.usage{mode=user}=1\n");
  EXPECT_EQ(b.counters().overflow_scalars, 2u);
  EXPECT_EQ(b.counters().overflow_events, 0u);
}

TEST(BucketizerScalars, NonFiniteValuesAreDroppedAndCounted) {
  Bucketizer b;
  b.SetScalar(5, Scalar("x"), std::numeric_limits<double>::quiet_NaN());
  b.SetScalar(5, Scalar("x"), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(b.TakeAll().empty());
  EXPECT_EQ(b.counters().bad_scalars, 2u);
  EXPECT_EQ(b.counters().scalars, 0u);
}

TEST(BucketizerScalars, MixWithTheAddFastPath) {
  // SetScalar between two Adds of one series must not confuse Add's remembered cell.
  Bucketizer b;
  b.Add(7, Latency("a"), 1);
  b.SetScalar(8, Scalar("s", "k=1"), 3);
  b.SetScalar(8, Scalar("s", "k=2"), 4);
  b.Add(7, Latency("a"), 2);
  b.Add(8, Latency("a"), 2);
  CompletedSeconds done = b.TakeAll();
  EXPECT_EQ(Show(done), "7: a{}=2\n8: a{}=1\n");
  EXPECT_EQ(ShowScalars(done), "7:\n8: s{k=1}=3 s{k=2}=4\n");
}

TEST(BucketizerScalars, MakeBatchCarriesScalarsThroughTheWire) {
  Bucketizer b;
  b.SetScalar(1700000000, Scalar("cpu.usage", "mode=user"), 42.25);
  Batch batch = MakeBatch(b.TakeAll(), "web-1", {});
  batch.agent = "web-1/1";
  batch.sequence = 1;
  Result<Batch> back = DecodeBatch(EncodeBatch(batch));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->seconds.size(), 1u);
  ASSERT_EQ(back->seconds[0].scalars.size(), 1u);
  EXPECT_EQ(back->seconds[0].scalars[0].value, 42.25);
  EXPECT_EQ(back->series[back->seconds[0].scalars[0].series].metric, "cpu.usage");
}

}  // namespace
}  // namespace trailmap

namespace trailmap {
namespace {

StackSample Sample(int64_t second, std::string fields, std::vector<std::string> frames,
                   uint64_t count = 1) {
  StackSample s;
  s.second = second;
  s.fields = std::move(fields);
  s.frames = std::move(frames);
  s.count = count;
  return s;
}

TEST(BucketizerStacks, CountsPerSecondSeriesAndStackWithDefinitions) {
  Bucketizer b;
  b.AddStack(Sample(100, "execname=nginx", {"main", "foo"}, 3));
  b.AddStack(Sample(100, "execname=nginx", {"main", "foo"}, 2));
  b.AddStack(Sample(100, "execname=redis", {"main", "foo"}));
  b.AddStack(Sample(101, "execname=nginx", {"main", "bar"}, 4));
  b.Add(101, SeriesDef{"disk.latency", MetricKind::kLatency, "ns", ""}, 500);
  CompletedSeconds done = b.TakeAll();
  ASSERT_EQ(done.seconds.size(), 2u);
  ASSERT_EQ(done.stacks.size(), 2u);
  EXPECT_EQ(done.frames.size(), 3u);
  // Second 100: nginx main;foo 5, redis main;foo 1, both the same stack id.
  const auto& s100 = done.seconds[0].stacks;
  ASSERT_EQ(s100.size(), 2u);
  uint64_t total = 0;
  for (const StackCount& c : s100) {
    EXPECT_EQ(done.series[c.series].kind, MetricKind::kStacks);
    EXPECT_EQ(done.series[c.series].metric, "cpu.stacks");
    EXPECT_EQ(done.series[c.series].unit, "samples");
    EXPECT_EQ(c.stack, s100[0].stack);
    EXPECT_EQ(c.count, done.series[c.series].fields == "execname=nginx" ? 5u : 1u);
    total += c.count;
  }
  EXPECT_EQ(total, 6u);
  ASSERT_EQ(done.seconds[1].stacks.size(), 1u);
  EXPECT_EQ(done.seconds[1].stacks[0].count, 4u);
  EXPECT_NE(done.seconds[1].stacks[0].stack, s100[0].stack);
  EXPECT_EQ(done.seconds[1].histograms.size(), 1u);
  EXPECT_EQ(b.counters().stack_samples, 10u);
  EXPECT_EQ(b.counters().events, 11u);

  // The batch made from it decodes: every id it uses is defined in it.
  Batch batch = MakeBatch(std::move(done), "web-1", {});
  batch.agent = "web-1/x";
  batch.sequence = 1;
  Result<Batch> back = DecodeBatch(EncodeBatch(batch));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->stacks.size(), 2u);
}

TEST(BucketizerStacks, RefusesWhatWouldTakeAStackCountPastTheItemBound) {
  Bucketizer b;
  b.AddStack(Sample(100, "execname=nginx", {"main", "foo"}, kMaxItemCount));
  b.AddStack(Sample(100, "execname=nginx", {"main", "foo"}, 1));           // refused
  b.AddStack(Sample(100, "execname=nginx", {"main", "bar"}, 7));           // another stack: taken
  b.AddStack(Sample(100, "execname=redis", {"main"}, kMaxItemCount + 1));  // refused
  EXPECT_EQ(b.counters().refused_events, kMaxItemCount + 2);
  EXPECT_EQ(b.counters().stack_samples, kMaxItemCount + 7);
  CompletedSeconds done = b.TakeAll();
  ASSERT_EQ(done.seconds.size(), 1u);
  ASSERT_EQ(done.seconds[0].stacks.size(), 2u);  // no empty count for the refused redis stack
  uint64_t total = 0;
  for (const StackCount& c : done.seconds[0].stacks) total += c.count;
  EXPECT_EQ(total, kMaxItemCount + 7);
}

TEST(BucketizerStacks, SeriesBoundAppliesToStacksToo) {
  BucketizerOptions options;
  options.max_series_per_metric = 1;
  Bucketizer b(options);
  b.AddStack(Sample(5, "pid=1", {"a"}));
  b.AddStack(Sample(5, "pid=2", {"a"}, 2));
  b.AddStack(Sample(5, "pid=3", {"b"}, 3));
  CompletedSeconds done = b.TakeAll();
  ASSERT_EQ(done.seconds.size(), 1u);
  EXPECT_EQ(done.series.size(), 2u);  // pid=1 and overflow=true
  uint64_t overflow = 0;
  for (const StackCount& c : done.seconds[0].stacks) {
    if (done.series[c.series].fields == "overflow=true") overflow += c.count;
  }
  EXPECT_EQ(overflow, 5u);
  EXPECT_EQ(b.counters().overflow_events, 5u);
}

TEST(BucketizerStacks, TruncationsAreCountedAndDictionaryIsPruned) {
  BucketizerOptions options;
  options.stacks.max_depth = 3;
  options.stacks.max_frame_bytes = 4;
  options.max_dictionary_stacks = 1;
  Bucketizer b(options);
  b.AddStack(Sample(1, "", {"main", "a", "b", "c"}));
  b.AddStack(Sample(2, "", {"main", "longname"}));
  CompletedSeconds first = b.TakeSecondsBefore(2);
  ASSERT_EQ(first.stacks.size(), 1u);
  EXPECT_EQ(first.stacks[0].frames.size(), 3u);
  EXPECT_EQ(b.counters().truncated_stacks, 1u);
  EXPECT_EQ(b.counters().truncated_frames, 1u);
  // Second 2 is still pending: its stack must still be defined when it is taken.
  CompletedSeconds second = b.TakeAll();
  ASSERT_EQ(second.stacks.size(), 1u);
  ASSERT_EQ(second.frames.size(), 2u);
  EXPECT_NE(second.stacks[0].id, first.stacks[0].id);
}

}  // namespace
}  // namespace trailmap
