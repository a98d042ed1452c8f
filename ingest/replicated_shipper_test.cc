#include "ingest/replicated_shipper.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace trailmap {
namespace {

// Four members in three zones, R=2; agg-4 joins at second 2000 and agg-3 leaves. Nothing
// listens on their port: the shippers below only queue (in memory).
Cluster TestCluster() {
  Cluster c;
  c.replication = 2;
  const char* zones[] = {"a", "b", "c", "c"};
  for (int i = 0; i < 4; ++i) {
    c.members.push_back(
        {"agg-" + std::to_string(i + 1), zones[i], "tcp://127.0.0.1:1", "tcp://127.0.0.1:1"});
  }
  c.epochs = {{1000, {0, 1, 2}}, {2000, {0, 1, 3}}};
  return c;
}

// A host whose owners differ between the two epochs.
std::string HostThatMoves(const Cluster& c) {
  for (int i = 0; i < 1000; ++i) {
    const std::string host = "host-" + std::to_string(i);
    if (c.Owners(host, 1500) != c.Owners(host, 2500)) return host;
  }
  ADD_FAILURE() << "no host moves";
  return "";
}

Batch BatchOf(const std::string& host, std::vector<int64_t> seconds) {
  Batch b;
  b.host = host;
  b.series.push_back({"disk.latency", MetricKind::kLatency, "ns", "op=read"});
  b.stacks.push_back({7, {1, 2}});
  for (int64_t t : seconds) {
    SecondDelta s;
    s.time = t;
    s.scalars.push_back({0, static_cast<double>(t)});
    b.seconds.push_back(std::move(s));
  }
  return b;
}

std::vector<int64_t> TimesOf(const Batch& b) {
  std::vector<int64_t> out;
  for (const SecondDelta& s : b.seconds) out.push_back(s.time);
  return out;
}

TEST(RouteBatch, ABatchWithinOneEpochGoesWholeToThatEpochsOwners) {
  const Cluster c = TestCluster();
  std::vector<RoutedBatch> parts = RouteBatch(c, BatchOf("web-1", {1500, 1501, 1502}));
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].owners, c.Owners("web-1", 1500));
  EXPECT_EQ(parts[0].owners.size(), 2u);
  EXPECT_EQ(TimesOf(parts[0].batch), (std::vector<int64_t>{1500, 1501, 1502}));
}

TEST(RouteBatch, ABatchAcrossAnEpochBoundaryIsSplitAndEachPartStandsAlone) {
  const Cluster c = TestCluster();
  const std::string host = HostThatMoves(c);
  std::vector<RoutedBatch> parts = RouteBatch(c, BatchOf(host, {1998, 1999, 2000, 2001}));
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(TimesOf(parts[0].batch), (std::vector<int64_t>{1998, 1999}));
  EXPECT_EQ(parts[0].owners, c.Owners(host, 1999));
  EXPECT_EQ(TimesOf(parts[1].batch), (std::vector<int64_t>{2000, 2001}));
  EXPECT_EQ(parts[1].owners, c.Owners(host, 2000));
  EXPECT_NE(parts[0].owners, parts[1].owners);
  for (const RoutedBatch& p : parts) {
    EXPECT_EQ(p.batch.host, host);
    EXPECT_EQ(p.batch.series.size(), 1u);  // the envelope, series and definitions go with each
    EXPECT_EQ(p.batch.stacks.size(), 1u);
  }
}

TEST(RouteBatch, SecondsOutOfOrderGoToTheirOwnEpochsPart) {
  const Cluster c = TestCluster();
  const std::string host = HostThatMoves(c);
  std::vector<RoutedBatch> parts = RouteBatch(c, BatchOf(host, {2001, 1999, 2002, 10}));
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(TimesOf(parts[0].batch), (std::vector<int64_t>{2001, 2002}));
  // Second 10 is before the first epoch's `from`: the first epoch holds then too.
  EXPECT_EQ(TimesOf(parts[1].batch), (std::vector<int64_t>{1999, 10}));
}

TEST(RouteBatch, ABatchWithoutSecondsGoesToTheOwnersAtItsSendingTime) {
  const Cluster c = TestCluster();
  const std::string host = HostThatMoves(c);
  Batch b = BatchOf(host, {});
  b.sent_at_ms = 2500'000;
  std::vector<RoutedBatch> parts = RouteBatch(c, std::move(b));
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].owners, c.Owners(host, 2500));
}

// Which members' shippers queued how many batches (in-memory spools, nothing listening).
std::map<std::string, uint64_t> Queued(const ReplicatedShipper& s) {
  std::map<std::string, uint64_t> out;
  for (const OwnerCounters& o : s.counters()) out[o.member] = o.spool.appended;
  return out;
}

ShipperFactory InMemory(std::vector<std::string>* made) {
  return [made](const ClusterMember& m) -> Result<std::unique_ptr<Shipper>> {
    made->push_back(m.name);
    ShipperOptions o;
    o.endpoint = m.ingest;
    o.agent_id = NewAgentId("test");
    return std::make_unique<Shipper>(std::move(o));
  };
}

TEST(ReplicatedShipper, EveryBatchGoesToEachOwnerAndNeverToANonOwner) {
  const Cluster c = TestCluster();
  std::vector<std::string> made;
  ReplicatedShipper shipper(c, InMemory(&made));
  std::map<std::string, uint64_t> expected;
  for (int i = 0; i < 20; ++i) {
    const std::string host = "host-" + std::to_string(i);
    ASSERT_TRUE(shipper.Send(BatchOf(host, {1500})));
    ASSERT_TRUE(shipper.Send(BatchOf(host, {1501, 1502})));
    for (size_t m : c.Owners(host, 1500)) expected[c.members[m].name] += 2;
  }
  EXPECT_EQ(Queued(shipper), expected);
  EXPECT_EQ(expected.count("agg-4"), 0u);  // not a member in that epoch: never created
  // Created lazily, once each.
  EXPECT_EQ(std::set<std::string>(made.begin(), made.end()).size(), made.size());
  EXPECT_EQ(made.size(), expected.size());
  EXPECT_EQ(shipper.TotalCounters().dropped, 0u);
  EXPECT_EQ(shipper.TotalSpoolCounters().appended, 80u);  // 20 hosts x 2 batches x R=2
}

TEST(ReplicatedShipper, ASplitBatchGoesToEachEpochsOwners) {
  const Cluster c = TestCluster();
  const std::string host = HostThatMoves(c);
  std::vector<std::string> made;
  ReplicatedShipper shipper(c, InMemory(&made));
  ASSERT_TRUE(shipper.Send(BatchOf(host, {1999, 2000})));
  std::map<std::string, uint64_t> expected;
  for (size_t m : c.Owners(host, 1999)) ++expected[c.members[m].name];
  for (size_t m : c.Owners(host, 2000)) ++expected[c.members[m].name];
  EXPECT_EQ(Queued(shipper), expected);
}

TEST(ReplicatedShipper, AnOwnerWhoseShipperCannotBeMadeFailsOnlyItsCopy) {
  const Cluster c = TestCluster();
  std::vector<std::string> made;
  const ShipperFactory in_memory = InMemory(&made);
  ReplicatedShipper shipper(
      c, [&in_memory](const ClusterMember& m) -> Result<std::unique_ptr<Shipper>> {
        if (m.name == "agg-1") return Status::IOError("spool agg-1: read-only file system");
        return in_memory(m);
      });
  std::string host;  // one owned by agg-1 and another
  for (int i = 0; host.empty(); ++i) {
    const std::vector<size_t> owners = c.Owners("h" + std::to_string(i), 1500);
    if (owners[0] == 0 || owners[1] == 0) host = "h" + std::to_string(i);
  }
  EXPECT_FALSE(shipper.Send(BatchOf(host, {1500})));
  EXPECT_EQ(shipper.TotalSpoolCounters().appended, 1u);  // the other owner has it
  EXPECT_EQ(shipper.members().size(), 1u);
}

}  // namespace
}  // namespace trailmap
