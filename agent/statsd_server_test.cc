#include "agent/statsd_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "core/histogram.h"

namespace trailmap {
namespace {

namespace asio = boost::asio;
using asio::ip::udp;

// Options for 127.0.0.1 at `port` (0 = any free port).
StatsdServerOptions Local(uint16_t port) {
  StatsdServerOptions o;
  o.address = "127.0.0.1";
  o.port = port;
  return o;
}

void SendUdp(uint16_t port, const std::string& packet) {
  asio::io_context io;
  udp::socket socket(io, udp::endpoint(udp::v4(), 0));
  socket.send_to(asio::buffer(packet), udp::endpoint(asio::ip::make_address("127.0.0.1"), port));
}

// Waits up to 5 s for `packets` datagrams to have been handled.
StatsdCounters WaitForPackets(const StatsdServer& server, uint64_t packets) {
  for (int i = 0; i < 500 && server.counters().packets < packets; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return server.counters();
}

TEST(StatsdServer, FeedsTheBucketizerAtTheReceiveSecondAndCountsRejections) {
  Bucketizer bucketizer;
  StatsdServerOptions options = Local(0);
  options.clock = [] { return int64_t{1'700'000'000}; };
  Result<std::unique_ptr<StatsdServer>> server = StatsdServer::Start(options, &bucketizer);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->port();
  ASSERT_NE(port, 0);

  SendUdp(port, "db.query:1.5|ms|#op:read\ndb.query:-1|ms\ndb.query:2|q\n");
  SendUdp(port, "db.query:3|ms|@0.5|#op:read");
  const StatsdCounters c = WaitForPackets(**server, 2);
  EXPECT_EQ(c.packets, 2u);
  EXPECT_EQ(c.lines_accepted, 2u);
  EXPECT_EQ(c.lines_rejected, 2u);
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(StatsdReject::kValue)], 1u);
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(StatsdReject::kType)], 1u);

  CompletedSeconds done = bucketizer.TakeAll();
  ASSERT_EQ(done.seconds.size(), 1u);
  EXPECT_EQ(done.seconds[0].time, 1'700'000'000);
  ASSERT_EQ(done.series.size(), 1u);
  EXPECT_EQ(done.series[0], (SeriesDef{"db.query", MetricKind::kLatency, "ns", "op=read"}));
  Result<Histogram> h = Histogram::Decode(done.seconds[0].histograms[0].encoded);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->count(), 3u);  // 1 + 2 for the 0.5 sample rate
  EXPECT_EQ(h->min(), 1'500'000u);
  EXPECT_EQ(h->max(), 3'000'000u);
}

// New metric names are taken at the rate given per minute and up to the distinct-name bound;
// lines of further new names are refused (new_metric) and counted, known names always pass.
TEST(StatsdServer, BoundsNewMetricNamesPerMinuteAndInAll) {
  Bucketizer bucketizer;
  std::atomic<int64_t> now{1'700'000'000};
  StatsdServerOptions options = Local(0);
  options.clock = [&now] { return now.load(); };
  options.new_metrics_per_minute = 3;
  options.max_metrics = 5;
  Result<std::unique_ptr<StatsdServer>> server = StatsdServer::Start(options, &bucketizer);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->port();
  SendUdp(port, "a:1|ms\nb:1|ms\nc:1|c\nd:1|ms\na:2|ms\nd:1|g");
  StatsdCounters c = WaitForPackets(**server, 1);
  EXPECT_EQ(c.lines_accepted, 4u);  // a, b, c, a again
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(StatsdReject::kNewMetric)], 2u);
  now += 20;  // a third of a minute: one more name
  SendUdp(port, "e:1|ms\nf:1|ms\nb:5|ms");
  c = WaitForPackets(**server, 2);
  EXPECT_EQ(c.lines_accepted, 6u);  // e, b
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(StatsdReject::kNewMetric)], 3u);
  now += 600;  // the bucket is full again (3), but only one more distinct name fits in 5
  SendUdp(port, "g:1|ms\nh:1|ms");
  c = WaitForPackets(**server, 3);
  EXPECT_EQ(c.lines_accepted, 7u);
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(StatsdReject::kNewMetric)], 4u);
  EXPECT_EQ(c.lines_rejected, 4u);
  // What went to the bucketizer: the names taken, nothing of d, f or h.
  CompletedSeconds done = bucketizer.TakeAll();
  std::set<std::string> metrics;
  for (const SeriesDef& d : done.series) metrics.insert(d.metric);
  for (const char* refused : {"d", "f", "h"}) EXPECT_EQ(metrics.count(refused), 0u) << refused;
  for (const char* taken : {"a", "b", "e", "g"}) EXPECT_EQ(metrics.count(taken), 1u) << taken;
}

// A tag with a reserved key arrives as tag_KEY and is counted.
TEST(StatsdServer, CountsTagsKeptUnderAnotherName) {
  Bucketizer bucketizer;
  StatsdServerOptions options = Local(0);
  options.clock = [] { return int64_t{1'700'000'000}; };
  Result<std::unique_ptr<StatsdServer>> server = StatsdServer::Start(options, &bucketizer);
  ASSERT_TRUE(server.ok());
  SendUdp((*server)->port(), "db.query:1|ms|#host:db-7\ndb.query:2|ms|#value:x,size:y\nq:1|ms");
  const StatsdCounters c = WaitForPackets(**server, 1);
  EXPECT_EQ(c.lines_accepted, 3u);
  EXPECT_EQ(c.tags_renamed, 3u);
  CompletedSeconds done = bucketizer.TakeAll();
  std::set<std::string> fields;
  for (const SeriesDef& d : done.series) fields.insert(d.fields);
  EXPECT_EQ(fields, (std::set<std::string>{"", "tag_host=db-7", "tag_size=y,tag_value=x"}));
}

TEST(StatsdServer, SaysWhyItCannotBind) {
  Bucketizer bucketizer;
  Result<std::unique_ptr<StatsdServer>> first = StatsdServer::Start(Local(0), &bucketizer);
  ASSERT_TRUE(first.ok());
  Result<std::unique_ptr<StatsdServer>> second =
      StatsdServer::Start(Local((*first)->port()), &bucketizer);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("cannot bind statsd UDP 127.0.0.1:"), std::string::npos)
      << second.status().message();
  StatsdServerOptions nowhere = Local(0);
  nowhere.address = "nowhere.invalid";
  Result<std::unique_ptr<StatsdServer>> bad = StatsdServer::Start(nowhere, &bucketizer);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("the name does not resolve"), std::string::npos)
      << bad.status().message();
}

TEST(StatsdServer, BindsAHostName) {
  Bucketizer bucketizer;
  StatsdServerOptions options = Local(0);
  options.address = "localhost";
  Result<std::unique_ptr<StatsdServer>> server = StatsdServer::Start(options, &bucketizer);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  SendUdp((*server)->port(), "db.query:1|ms");
  EXPECT_EQ(WaitForPackets(**server, 1).lines_accepted, 1u);
}

TEST(StatsdServer, EveryTypeWindowAndUnitRules) {
  Bucketizer bucketizer;
  StatsdServerOptions options = Local(0);
  options.clock = [] { return int64_t{1'700'000'000}; };
  options.units = {{"resp.bytes", StatsdUnit::kBytes}, {"queue.*", StatsdUnit::kNone}};
  Result<std::unique_ptr<StatsdServer>> server = StatsdServer::Start(options, &bucketizer);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  SendUdp((*server)->port(),
          "hits:1|c\nhits:2|c|@0.5\nq:7|g\nq:-2|g\nu:a:b:a|s\n"
          "resp.bytes:100:200|d\nqueue.len:3|h\nlat:2|h|T1699999990\n"
          "lat:1|h|T1699999000\nlat:1|h|T1700000061\nlat:1e30|h\n_e{1,1}:a|b\n_sc|x|0\n");
  const StatsdCounters c = WaitForPackets(**server, 1);
  EXPECT_EQ(c.lines_accepted, 8u);
  EXPECT_EQ(c.values, 11u);  // 1 + 1 + 1 + 1 + 3 + 2 + 1 + 1
  EXPECT_EQ(c.lines_unsupported, 2u);
  EXPECT_EQ(c.lines_rejected, 3u);
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(StatsdReject::kTimestamp)], 2u);
  EXPECT_EQ(c.rejected_by_reason[static_cast<size_t>(StatsdReject::kValue)], 1u);

  std::map<std::string, std::string> got;  // "second metric unit" -> scalar or histogram
  const CompletedSeconds done = bucketizer.TakeAll();
  for (const SecondDelta& d : done.seconds) {
    for (const ScalarValue& v : d.scalars) {
      const SeriesDef& s = done.series[v.series];
      got[std::to_string(d.time) + " " + s.metric + " " + s.unit] = std::to_string(v.value);
    }
    for (const HistogramDelta& h : d.histograms) {
      const SeriesDef& s = done.series[h.series];
      Result<Histogram> x = Histogram::Decode(h.encoded);
      ASSERT_TRUE(x.ok());
      got[std::to_string(d.time) + " " + s.metric + " " + MetricKindName(s.kind) + " " + s.unit] =
          std::to_string(x->count()) + " " + std::to_string(x->min()) + ".." +
          std::to_string(x->max());
    }
  }
  const std::map<std::string, std::string> want = {
      {"1700000000 hits /s", "5.000000"},
      {"1700000000 q 1", "5.000000"},
      {"1700000000 u distinct/s", "2.000000"},
      {"1700000000 resp.bytes size B", "2 100..200"},
      {"1700000000 queue.len size 1", "1 3..3"},
      {"1699999990 lat latency ns", "1 2000000..2000000"},
  };
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace trailmap
