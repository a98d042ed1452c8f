// (d) Bad input gets a clear error and loses nothing else: malformed statsd lines at the agent
// and malformed batches at the aggregator are rejected with a reason and counted (a bad item in a
// readable batch is refused alone, named in the ack), and every good line and batch sent between
// them is stored.
#include <gtest/gtest.h>

#include <signal.h>

#include <regex>
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

// The last number a log printed after `label`, e.g. "rejected=" -> 7; -1 if never printed.
long long LastCounter(const std::string& log, const std::string& label) {
  std::regex re(label + "(\\d+)");
  long long last = -1;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator();
       ++it) {
    last = std::stoll((*it)[1]);
  }
  return last;
}

uint64_t StoredCount(const std::string& query_list, const std::string& metric) {
  CommandResult r =
      Cli({"stats", "--metric", metric, "--from", "-10m", "--format", "json"}, query_list);
  if (r.exit_code != 0) return 0;
  uint64_t total = 0;
  for (const auto& [g, s] : ParseStats(r.out)) total += s.count;
  return total;
}

TEST(MalformedSystem, BadStatsdLinesAreRejectedAndCountedGoodOnesAllArrive) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs[0]->Start();
  Agent agent(dir, "web-1", IngestList(aggs));
  std::this_thread::sleep_for(500ms);

  const std::vector<std::string> bad = {
      "disk.latency:-3|ms",           // negative
      "disk.latency:abc|ms",          // not a number
      "disk.latency|ms",              // no value
      "disk.latency:1|x",             // unknown type
      "disk latency:1|ms",            // bad metric name
      "disk.latency:1|ms|@0",         // sample rate out of range
      "disk.latency:1|ms|#op:a,b c",  // bad tag
      "disk.latency:nan|ms",
      std::string("\xff\xfe\x00\x01", 4),
  };
  // DogStatsD events and service checks: recognised, counted as unsupported, not as errors.
  SendUdp(agent.statsd_port(), "_e{5,4}:title|text|#a:b\n_sc|db.up|0\n");
  SendUdp(agent.statsd_port(), "_e{1,1}:a|b");
  size_t good = 0;
  for (int round = 0; round < 20; ++round) {
    std::string packet;
    for (const auto& b : bad) {
      packet += "disk.latency:" + std::to_string(100 + round) + "|ms|#op:read\n";  // good
      packet += b + "\n";
      ++good;
    }
    SendUdp(agent.statsd_port(), packet);
    SendUdp(agent.statsd_port(), bad[round % bad.size()]);  // a packet with only a bad line
    std::this_thread::sleep_for(5ms);
  }
  const size_t rejected = 20 * bad.size() + 20;

  EXPECT_TRUE(WaitFor([&] { return StoredCount(aggs[0]->query(), "disk.latency") == good; }, 15s))
      << "stored " << StoredCount(aggs[0]->query(), "disk.latency") << " of " << good << "\n"
      << agent.process().Stderr();
  ASSERT_TRUE(agent.process().Running());
  // The agent counts every rejected line, says so in its counters line as it stops, and logged
  // why, naming the line.
  agent.process().Kill(SIGTERM);
  EXPECT_EQ(agent.process().Wait(), 0);
  const std::string log = agent.process().Stderr();
  EXPECT_EQ(LastCounter(log, "statsd packets=\\d+ accepted=\\d+ rejected="),
            static_cast<long long>(rejected))
      << log;
  EXPECT_EQ(LastCounter(log, "statsd packets=\\d+ accepted="), static_cast<long long>(good)) << log;
  EXPECT_EQ(LastCounter(log, " unsupported="), 3) << log;
  EXPECT_NE(log.find("line 2: value '-3' is negative"), std::string::npos) << log;
}

TEST(MalformedSystem, BadBatchesAreRejectedWithAReasonAndTheServerKeepsServing) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  aggs[0]->Start();

  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo, 5000);
  UseTestKeys(dealer);
  dealer.connect("tcp://" + aggs[0]->ingest());
  auto exchange = [&dealer](const std::string& bytes) -> Ack {
    dealer.send(zmq::buffer(bytes), zmq::send_flags::none);
    zmq::message_t reply;
    if (!dealer.recv(reply)) return Ack{0, Ack::Status::kOutOfOrder, "no reply", 0};
    Result<Ack> ack = DecodeAck({static_cast<const char*>(reply.data()), reply.size()});
    return ack.ok() ? *ack : Ack{0, Ack::Status::kOutOfOrder, "undecodable ack", 0};
  };

  Histogram h;
  h.Record(5000, 10);
  Batch good;
  good.agent = "test/1";
  good.host = "db-9";
  good.series = {{"disk.latency", MetricKind::kLatency, "ns", "op=read"}};
  good.seconds.push_back({Now() - 5, {{0, h.Encode()}}, {}});

  uint64_t sequence = 0;
  size_t expect_rejected = 0, expect_stored = 0;
  for (int round = 0; round < 5; ++round) {
    // Garbage that is not a Cap'n Proto message at all.
    Ack a = exchange("this is not a batch");
    EXPECT_EQ(a.status, Ack::Status::kRejected);
    EXPECT_NE(a.reason.find("not a Cap'n Proto message"), std::string::npos) << a.reason;
    ++expect_rejected;

    // A well-formed message whose histogram is corrupt: applied without it (nothing else was in
    // it), the ack naming where.
    Batch spoiled = good;
    spoiled.sequence = ++sequence;
    spoiled.seconds[0].histograms[0].encoded[1] = 9;
    a = exchange(EncodeBatch(spoiled));
    EXPECT_EQ(a.status, Ack::Status::kApplied);
    EXPECT_EQ(a.sequence, sequence);
    EXPECT_EQ(a.refused.total, 1u);
    EXPECT_TRUE(!a.refused.named.empty() &&
                a.refused.named[0].reason.find("histogram 0: histogram:") != std::string::npos)
        << (a.refused.named.empty() ? a.reason : a.refused.named[0].reason);

    // A good batch right after: applied.
    Batch ok = good;
    ok.sequence = ++sequence;
    a = exchange(EncodeBatch(ok));
    EXPECT_EQ(a.status, Ack::Status::kApplied) << a.reason;
    expect_stored += 10;

    // The same good batch again: recognised, not applied twice.
    a = exchange(EncodeBatch(ok));
    EXPECT_EQ(a.status, Ack::Status::kDuplicate);
  }
  EXPECT_EQ(StoredCount(aggs[0]->query(), "disk.latency"), expect_stored);
  ASSERT_TRUE(aggs[0]->process().Running());
  // Its totals, logged as it stops, count every rejection, application and duplicate.
  aggs[0]->process().Kill(SIGTERM);
  EXPECT_EQ(aggs[0]->process().Wait(), 0);
  const std::string log = aggs[0]->Log();
  EXPECT_EQ(LastCounter(log, "stopped: "), 10) << log;  // applied (5 of them without an item)
  EXPECT_EQ(LastCounter(log, "applied, "), 5) << log;   // duplicate
  EXPECT_EQ(LastCounter(log, "out of order, "), static_cast<long long>(expect_rejected)) << log;
}

}  // namespace
}  // namespace trailmap::test
