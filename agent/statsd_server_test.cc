#include "agent/statsd_server.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <chrono>
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

  SendUdp(port, "db.query:1.5|ms|#op:read\ndb.query:-1|ms\ndb.query:2|c\n");
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

}  // namespace
}  // namespace trailmap
