// A rejected batch and a refused item in the middle of a window of unacknowledged batches, against
// a real trailmap-aggregator (schemas/ingest.capnp, "Items" and "Rejection"):
//   1. a raw DEALER sends 20 batches without waiting: batch 7 has two bad items, batch 12 has a
//      readable envelope but cannot be read whole;
//   2. the agent's Shipper sends the same 20, and the aggregator's failpoint ingest.unreadable
//      takes the first transmission of its batch 5 as unreadable (acked with sequence 0): the
//      Shipper must neither lose nor duplicate it;
// then the stored totals must be exactly what was sent minus the refused items and the rejected
// batches the acks named, and stay so after the aggregator is killed and reopens RocksDB.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>

#include <cmath>
#include <zmq.hpp>

#include "core/batch.h"
#include "core/histogram.h"
#include "ingest/shipper.h"
#include "tests/cluster.h"
#include "tests/stats_json.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kWindow = 20;
constexpr uint64_t kBadItems = 7;     // applied without its two bad items
constexpr uint64_t kUnreadable = 12;  // rejected whole

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Batch `sequence` for `host`: `sequence` events of 1 ms at second `base` + sequence; batch 7
// with a histogram that does not decode and a NaN scalar besides, batch 12 with 17 labels (at
// most 16: a fault of the whole batch).
Batch Make(const std::string& host, uint64_t sequence, int64_t base) {
  Batch b;
  b.agent = host + "/1";
  b.sequence = sequence;
  b.host = host;
  b.series = {{"rw.latency", MetricKind::kLatency, "ns", ""}};
  Histogram h;
  h.Record(1'000'000, sequence);
  b.seconds.push_back({base + static_cast<int64_t>(sequence), {{0, h.Encode()}}, {}});
  if (sequence == kBadItems) {
    b.series.push_back({"rw.latency", MetricKind::kLatency, "ns", "op=bad"});
    b.series.push_back({"rw.gauge", MetricKind::kScalar, "1", ""});
    b.seconds[0].histograms.push_back({1, "\x01\x01junk"});
    b.seconds[0].scalars.push_back({2, std::nan("")});
  }
  if (sequence == kUnreadable) {  // at most 16 labels
    for (int i = 0; i < 17; ++i) b.labels.push_back({"k" + std::to_string(i), "v"});
  }
  return b;
}

// Events of rw.latency stored for `host`, from `trailmap stats`; -1 when the CLI fails (as
// while the aggregator starts).
int64_t Stored(const std::string& query, const std::string& host) {
  CommandResult r = Cli(
      {"stats", "--metric", "rw.latency", "--from", "-10m", "--hosts", host, "--format", "json"},
      query);
  if (r.exit_code != 0) return -1;
  int64_t total = 0;
  for (const auto& [group, stats] : ParseStats(r.out)) total += static_cast<int64_t>(stats.count);
  return total;
}

// A window from a raw DEALER: sends all, then reads every ack.
std::vector<Ack> RawWindow(const std::string& ingest, const std::string& host, int64_t base) {
  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo, 20'000);
  UseTestKeys(dealer);
  dealer.connect("tcp://" + ingest);
  for (uint64_t s = 1; s <= kWindow; ++s)
    dealer.send(zmq::buffer(EncodeBatch(Make(host, s, base))));
  std::vector<Ack> acks;
  for (uint64_t s = 1; s <= kWindow; ++s) {
    zmq::message_t reply;
    if (!dealer.recv(reply)) break;
    Result<Ack> ack = DecodeAck(reply.to_string_view());
    acks.push_back(ack.ok() ? *ack : Ack{0, Ack::Status::kOutOfOrder, "undecodable ack"});
  }
  return acks;
}

TEST(RejectWindowSystem, OneBadItemAndOneRejectedBatchLoseOnlyThemselvesAcrossARestart) {
  TempDir dir;
  Aggregator agg(dir, "agg-1");
  // Message 25 is the Shipper's first transmission of its batch 5 (the raw window is 1..20).
  ASSERT_EQ(setenv("TRAILMAP_FAILPOINTS", "ingest.unreadable=error@25", 1), 0);
  agg.Start();
  unsetenv("TRAILMAP_FAILPOINTS");
  const int64_t base = Now() - 120;
  // What every batch holds, less batch 12 (rejected); batch 7's good histogram applies.
  const int64_t expected = kWindow * (kWindow + 1) / 2 - kUnreadable;

  // 1. The raw window.
  std::vector<Ack> acks = RawWindow(agg.ingest(), "raw-1", base);
  ASSERT_EQ(acks.size(), kWindow) << agg.Log();
  uint64_t refused_named = 0;
  for (uint64_t s = 1; s <= kWindow; ++s) {
    const Ack& ack = acks[s - 1];
    EXPECT_EQ(ack.sequence, s);
    EXPECT_EQ(ack.status, s == kUnreadable ? Ack::Status::kRejected : Ack::Status::kApplied)
        << s << ": " << ack.reason;
    refused_named += ack.refused.total;
  }
  EXPECT_EQ(refused_named, 2u);
  EXPECT_EQ(acks[kBadItems - 1].refused.total, 2u);
  EXPECT_NE(acks[kUnreadable - 1].reason.find("17 labels, at most 16"), std::string::npos)
      << acks[kUnreadable - 1].reason;

  // 2. The Shipper, whose batch 5 is first taken as unreadable.
  {
    ShipperOptions options;
    options.endpoint = "tcp://" + agg.ingest();
    options.agent_id = "ship-1/1";
    options.curve = TestCurveClient();
    options.ack_timeout = 10s;  // a timeout resend would move the failpoint's hit
    Shipper shipper(options);
    for (uint64_t s = 1; s <= kWindow; ++s) ASSERT_TRUE(shipper.Send(Make("ship-1", s, base)));
    ASSERT_TRUE(shipper.Flush(60s).ok()) << agg.Log();
    const ShipperCounters c = shipper.counters();
    EXPECT_EQ(c.unreadable, 1u);
    EXPECT_EQ(c.rejected, 1u);
    EXPECT_EQ(c.items_refused, 2u);
    EXPECT_EQ(c.acked, kWindow - 1);
    EXPECT_EQ(c.duplicates, 0u);
    EXPECT_GE(c.out_of_order, 1u);  // 6.. came past the gap 5 left
  }
  EXPECT_EQ(Stored(agg.query(), "raw-1"), expected);
  EXPECT_EQ(Stored(agg.query(), "ship-1"), expected);

  // 3. Killed and restarted on the same data directory: the same totals, and the raw window
  // again changes nothing.
  agg.KillHard();
  agg.Start();
  EXPECT_TRUE(WaitFor([&] { return Stored(agg.query(), "raw-1") == expected; }, 20s))
      << Stored(agg.query(), "raw-1") << "\n"
      << agg.Log();
  EXPECT_EQ(Stored(agg.query(), "ship-1"), expected);
  acks = RawWindow(agg.ingest(), "raw-1", base);
  ASSERT_EQ(acks.size(), kWindow) << agg.Log();
  for (uint64_t s = 1; s <= kWindow; ++s) {
    EXPECT_EQ(acks[s - 1].status,
              s == kUnreadable ? Ack::Status::kRejected : Ack::Status::kDuplicate)
        << s;
  }
  EXPECT_EQ(acks[kBadItems - 1].refused.total, 2u);
  EXPECT_EQ(Stored(agg.query(), "raw-1"), expected);
  ASSERT_TRUE(agg.process().Running());
}

}  // namespace
}  // namespace trailmap::test
