// Counts that cannot break the store (core/counts.h): an item past kMaxItemCount is refused at
// the edge with a reason and counted, while every other metric, host and agent of the same run
// is stored exactly; a statsd sample rate standing for ~10^19 events is refused at the agent
// alone; and after a kill -9 and restart (RocksDB reopened) every metric answers with the exact
// acknowledged totals, writes go on, and RocksDB logged no failed merge or background error.
//
// Saturation itself (a stored total past kMaxTotalCount = 2^62) would take 2^22 items of 2^40
// here; it is proven through a real DB with flush, compaction and reopen in
// aggregator/store/histogram_merge_operator_test.cc and stack_merge_operator_test.cc.
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <map>
#include <thread>
#include <zmq.hpp>

#include "core/batch.h"
#include "core/counts.h"
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

// Count per host of `metric` over the last 10 minutes; empty if the query failed.
std::map<std::string, uint64_t> CountsByHost(const Aggregator& agg, const std::string& metric) {
  CommandResult r = Cli({"stats", "--metric", metric, "--by", "host", "--from", "-10m", "--format",
                         "json"},
                        agg.query());
  std::map<std::string, uint64_t> out;
  if (r.exit_code != 0) return out;
  for (const auto& [host, s] : ParseStats(r.out)) out[host] = s.count;
  return out;
}

std::string FoldedStacks(const Aggregator& agg, int64_t from, int64_t to) {
  CommandResult r = Cli({"flame", "--format", "folded", "--from", std::to_string(from), "--to",
                         std::to_string(to)},
                        agg.query());
  return r.exit_code == 0 ? r.out : "exit " + std::to_string(r.exit_code) + ": " + r.err;
}

// Everything RocksDB wrote to its info logs under `dir` (LOG and the rotated LOG.old.*).
std::string RocksLogs(const std::string& dir) {
  std::string all;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("LOG", 0) == 0) all += ReadFile(entry.path());
  }
  return all;
}

// A raw ingest client: one DEALER, one batch at a time.
class IngestClient {
 public:
  explicit IngestClient(const std::string& endpoint) : dealer_(context_, zmq::socket_type::dealer) {
    dealer_.set(zmq::sockopt::linger, 0);
    dealer_.set(zmq::sockopt::rcvtimeo, 10000);
    UseTestKeys(dealer_);
    dealer_.connect("tcp://" + endpoint);
  }
  Ack Send(const Batch& batch) {
    dealer_.send(zmq::buffer(EncodeBatch(batch)), zmq::send_flags::none);
    zmq::message_t reply;
    if (!dealer_.recv(reply)) return Ack{0, Ack::Status::kOutOfOrder, "no reply", 0};
    Result<Ack> ack = DecodeAck({static_cast<const char*>(reply.data()), reply.size()});
    return ack.ok() ? *ack : Ack{0, Ack::Status::kOutOfOrder, "undecodable ack", 0};
  }

 private:
  zmq::context_t context_;
  zmq::socket_t dealer_;
};

// A batch of `agent` for `host` at `second`: `histogram_count` events of 5 us in disk.latency (if
// not 0) and `stack_count` samples of main;foo in cpu.stacks (if not 0), with its definitions.
Batch Counts(const std::string& agent, uint64_t sequence, const std::string& host, int64_t second,
             uint64_t histogram_count, uint64_t stack_count) {
  Batch b;
  b.agent = agent;
  b.sequence = sequence;
  b.host = host;
  b.series = {{"disk.latency", MetricKind::kLatency, "ns", ""},
              {"cpu.stacks", MetricKind::kStacks, "samples", ""}};
  b.frames = {{1, "main"}, {2, "foo"}};
  b.stacks = {{1, {1, 2}}};
  SecondDelta s;
  s.time = second;
  if (histogram_count > 0) {
    Histogram h;
    h.Record(5000, histogram_count);
    s.histograms.push_back({0, h.Encode()});
  }
  if (stack_count > 0) s.stacks.push_back({1, 1, stack_count});
  b.seconds.push_back(std::move(s));
  return b;
}

TEST(OverflowSystem, OverfullItemsAreRefusedEverythingElseIsExactAcrossARestart) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-1"));
  Aggregator& agg = *aggs[0];
  agg.Start();
  Agent agent(dir, "web-1", IngestList(aggs));
  IngestClient client(agg.ingest());
  const int64_t t = Now() - 5;

  // (a) Two batches at the bound for the same keys: applied, merged exactly (2^41).
  ASSERT_EQ(client.Send(Counts("test/1", 1, "db-1", t, kMaxItemCount, kMaxItemCount)).status,
            Ack::Status::kApplied);
  ASSERT_EQ(client.Send(Counts("test/1", 2, "db-1", t, kMaxItemCount, kMaxItemCount)).status,
            Ack::Status::kApplied);
  // One histogram and one stack count past it: each refused, naming the count.
  // The batch applies without them (one bad item loses only itself); the ack names each.
  Ack a = client.Send(Counts("test/1", 3, "db-1", t, kMaxItemCount + 1, 0));
  ASSERT_EQ(a.refused.total, 1u);
  EXPECT_NE(a.refused.named[0].reason.find("histogram of 1099511627777 events"), std::string::npos)
      << a.refused.named[0].reason;
  a = client.Send(Counts("test/1", 4, "db-1", t, 0, kMaxItemCount + 1));
  ASSERT_EQ(a.refused.total, 1u);
  EXPECT_NE(a.refused.named[0].reason.find("count 1099511627777, at most 2^40"), std::string::npos)
      << a.refused.named[0].reason;
  // The same agent goes on, and so does another.
  EXPECT_EQ(client.Send(Counts("test/1", 5, "db-1", t, 7, 3)).status, Ack::Status::kApplied);
  EXPECT_EQ(client.Send(Counts("test/2", 1, "db-2", t, 10, 0)).status, Ack::Status::kApplied);
  const uint64_t db1 = 2 * kMaxItemCount + 7, stacks = 2 * kMaxItemCount + 3;

  // (b) A statsd line standing for ~10^19 events, among 1,000 good timings of another metric
  // and 5 good ones of its own, all within a fraction of a second.
  std::this_thread::sleep_for(500ms);  // the agent binds its statsd port
  std::string packet = "x:1|ms|@0.0000000000000000001\n";
  for (int i = 0; i < 5; ++i) packet += "x:3|ms\n";
  SendUdp(agent.statsd_port(), packet);
  for (int p = 0; p < 50; ++p) {
    packet.clear();
    for (int i = 0; i < 20; ++i) packet += "ok.latency:" + std::to_string(1 + (p * 20 + i) % 90) + "|ms\n";
    SendUdp(agent.statsd_port(), packet);
    std::this_thread::sleep_for(1ms);
  }

  const auto all_exact = [&] {
    return CountsByHost(agg, "disk.latency") ==
               std::map<std::string, uint64_t>{{"db-1", db1}, {"db-2", 10}} &&
           CountsByHost(agg, "ok.latency") == std::map<std::string, uint64_t>{{"web-1", 1000}} &&
           CountsByHost(agg, "x") == std::map<std::string, uint64_t>{{"web-1", 5}} &&
           FoldedStacks(agg, t, t + 1) == "main;foo " + std::to_string(stacks) + "\n";
  };
  ASSERT_TRUE(WaitFor(all_exact, 20s))
      << "disk.latency db-1 " << CountsByHost(agg, "disk.latency")["db-1"] << ", ok.latency "
      << CountsByHost(agg, "ok.latency")["web-1"] << ", x " << CountsByHost(agg, "x")["web-1"]
      << ", stacks " << FoldedStacks(agg, t, t + 1) << "\n"
      << agg.Log() << agent.process().Stderr();

  // The agent refused the line alone, counted it as a bad rate, and named it in its log.
  agent.process().Kill(SIGTERM);
  ASSERT_EQ(agent.process().Wait(), 0);
  const std::string agent_log = agent.process().Stderr();
  EXPECT_NE(agent_log.find("accepted=1005 rejected=1 rejected_rate=1"), std::string::npos)
      << agent_log;
  EXPECT_NE(agent_log.find("sample rate '@0.0000000000000000001' stands for more than 2^40"),
            std::string::npos)
      << agent_log;

  // (c) kill -9 and restart on the same data dir: the same exact totals, and writes go on.
  agg.KillHard();
  agg.Start();
  ASSERT_TRUE(WaitFor([&] { return CountsByHost(agg, "disk.latency")["db-2"] == 10; }, 20s))
      << agg.Log();
  EXPECT_EQ(CountsByHost(agg, "disk.latency")["db-1"], db1);
  EXPECT_EQ(FoldedStacks(agg, t, t + 1), "main;foo " + std::to_string(stacks) + "\n");
  EXPECT_EQ(CountsByHost(agg, "ok.latency")["web-1"], 1000u);
  EXPECT_EQ(CountsByHost(agg, "x")["web-1"], 5u);
  IngestClient again(agg.ingest());
  const Ack after = again.Send(Counts("test/1", 6, "db-1", t, 1, 1));
  EXPECT_EQ(after.status, Ack::Status::kApplied) << after.reason;
  EXPECT_TRUE(WaitFor(
      [&] {
        return CountsByHost(agg, "disk.latency")["db-1"] == db1 + 1 &&
               FoldedStacks(agg, t, t + 1) == "main;foo " + std::to_string(stacks + 1) + "\n";
      },
      20s))
      << CountsByHost(agg, "disk.latency")["db-1"] << " " << FoldedStacks(agg, t, t + 1);
  EXPECT_EQ(CountsByHost(agg, "disk.latency")["db-2"], 10u);

  agg.process().Kill(SIGTERM);
  EXPECT_EQ(agg.process().Wait(), 0);
  const std::string log = agg.Log();
  EXPECT_NE(log.find("0 merges saturated"), std::string::npos) << log;
  const std::string rocks = RocksLogs(agg.data_dir());
  EXPECT_FALSE(rocks.empty());
  for (const char* failure : {"merge failed", "Set regular background error",
                              "background flush error", "background compaction error"}) {
    EXPECT_EQ(rocks.find(failure), std::string::npos) << failure;
  }
}

}  // namespace
}  // namespace trailmap::test
