#include "aggregator/store/aggregates.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <map>
#include <random>

#include "aggregator/scan/store_query.h"
#include "aggregator/store/store.h"
#include "aggregator/store/testing.h"

namespace trailmap::aggregator {
namespace {

using testing::AnswerDifference;
using testing::Encoded;
using testing::Latency;
using testing::MakeBatch;
using testing::TempDir;

constexpr int64_t kT = 1'700'000'400;  // on whole 10 minutes, as epochs begin

// Three members in three zones, R = 2; a fourth joins at kT + 1800.
Cluster FourMembers() {
  Cluster c;
  c.replication = 2;
  for (const char* z : {"a", "b", "c"}) c.members.push_back({std::string("agg-") + z, z, "", ""});
  c.members.push_back({"agg-d", "a", "", ""});
  c.epochs.push_back({INT64_MIN, {0, 1, 2}});
  c.epochs.push_back({kT + 1800, {0, 1, 2, 3}});
  return c;
}

StoreOptions Options(std::vector<std::string> fields, std::optional<Cluster> cluster) {
  StoreOptions o;
  o.sync = false;
  o.rollup_interval_ms = 0;
  o.aggregates.fields = std::move(fields);
  o.aggregates.cluster = std::move(cluster);
  return o;
}

// 30 hosts with role web, db or none, each with op=read, op=write and no-op series, over an hour
// of random seconds; a few batches a host.
void Load(Store* store, uint32_t seed, const std::string& incarnation = "/1") {
  std::mt19937 rng(seed);
  const char* roles[] = {"role=web", "role=db", ""};
  for (int h = 0; h < 30; ++h) {
    const std::string host = "h" + std::to_string(h);
    for (uint64_t seq = 1; seq <= 3; ++seq) {
      Batch b = MakeBatch(host + incarnation, seq, host,
                          {Latency("disk.latency", "op=read"), Latency("disk.latency", "op=write"),
                           Latency("disk.latency", "")});
      if (*roles[h % 3] != '\0') b.labels = {{"role", roles[h % 3] + 5}};
      for (int s = 0; s < 20; ++s) {
        SecondDelta second{kT + static_cast<int64_t>(rng() % 3600), {}, {}};
        for (uint32_t series = 0; series < 3; ++series) {
          if (rng() % 2) continue;
          Histogram hist;
          hist.Record(1000 + rng() % 5'000'000, 1 + rng() % 9);
          second.histograms.push_back({series, hist.Encode()});
        }
        b.seconds.push_back(std::move(second));
      }
      Result<ApplyOutcome> applied = store->ApplyBatch(b);
      ASSERT_TRUE(applied.ok()) << applied.status().ToString();
      ASSERT_EQ(applied->status, Ack::Status::kApplied);
    }
  }
}

// A store made without aggregates (--no-aggregates), holding Load(5), rolled up or not.
void LoadWithoutAggregates(const std::string& path, bool roll_up) {
  StoreOptions none = Options({}, std::nullopt);
  none.aggregates.enabled = false;
  Result<std::unique_ptr<Store>> store = Store::Open(path, none);
  ASSERT_TRUE(store.ok());
  Load(store->get(), 5);
  if (roll_up) {
    ASSERT_TRUE((*store)->RollUp(true).ok());
  }
}

// The answer without the groups that hold no cell: a member may list the one group of an
// ungrouped query with nothing in it, or not, as it holds hosts at all; the merge is the same.
HistogramAnswer NonEmpty(HistogramAnswer a) {
  std::vector<std::string> groups;
  std::vector<int> index(a.groups.size(), -1);
  for (const QueryCell& c : a.cells) {
    if (index[c.group] < 0) {
      index[c.group] = 0;
    }
  }
  for (size_t g = 0; g < a.groups.size(); ++g) {
    if (index[g] < 0) continue;
    index[g] = static_cast<int>(groups.size());
    groups.push_back(a.groups[g]);
  }
  for (QueryCell& c : a.cells) c.group = static_cast<uint32_t>(index[c.group]);
  a.groups = std::move(groups);
  return a;
}

// Random ranges and steps, by nothing, role and op, with and without a replica selection: the
// aggregate's answer equals the hosts' answer cell for cell, and the members' answers of one
// round add up to the whole.
void ExpectAggregatesAnswerAsTheHosts(const Store& store, uint32_t seed, int queries = 40) {
  std::mt19937 rng(seed);
  const Cluster cluster = FourMembers();
  uint64_t compared = 0;
  for (int i = 0; i < queries; ++i) {
    const uint32_t steps[] = {1, 10, 60, 90, 600, 3600};
    HistogramQuery q{"disk.latency", kT + static_cast<int64_t>(rng() % 1800) - 60, 0,
                     steps[rng() % std::size(steps)], "", {}};
    q.to = q.from + 60 + static_cast<int64_t>(rng() % 3600);
    const char* groups[] = {"", "role", "op"};
    q.group_by = groups[i % 3];
    SCOPED_TRACE("from " + std::to_string(q.from - kT) + " to " + std::to_string(q.to - kT) +
                 " step " + std::to_string(q.step) + " by '" + q.group_by + "'");
    const uint64_t before = store.AggregateQueries();
    Result<HistogramAnswer> aggregate = QueryHistograms(store, q);
    Result<HistogramAnswer> hosts = QueryHistograms(store, q, QueryPlan::kHosts);
    ASSERT_TRUE(aggregate.ok() && hosts.ok());
    EXPECT_EQ(store.AggregateQueries(), before + 1);  // the aggregate answered
    EXPECT_EQ(AnswerDifference(*aggregate, *hosts), "");
    for (const QueryCell& c : hosts->cells) compared += c.histogram.count();

    // A replicated query's rounds, one member failing round 0 in half of them: each member's
    // answer from the aggregate equals its answer from the hosts, and together the rounds
    // count every host-second once.
    std::string failing;
    if (i % 2) failing = cluster.members[rng() % 4].name;
    std::map<std::pair<uint32_t, std::string>, uint64_t> sum, whole;
    for (const QueryCell& c : hosts->cells) whole[{c.column, hosts->groups[c.group]}] += c.histogram.count();
    std::vector<ReplicaSelection> asked;
    for (const ClusterMember& m : cluster.members) {
      if (m.name != failing) asked.push_back({m.name, 0, {}, {}});
      if (!failing.empty() && m.name != failing) asked.push_back({m.name, 1, {failing}, {0}});
    }
    for (const ReplicaSelection& s : asked) {
      HistogramQuery r = q;
      r.replicas = ReplicaScope{cluster, s};
      Result<HistogramAnswer> a = QueryHistograms(store, r);
      Result<HistogramAnswer> h = QueryHistograms(store, r, QueryPlan::kHosts);
      ASSERT_TRUE(a.ok() && h.ok());
      EXPECT_EQ(AnswerDifference(NonEmpty(*a), NonEmpty(*h)), "") << s.member << " round " << s.round;
      for (const QueryCell& c : h->cells) sum[{c.column, h->groups[c.group]}] += c.histogram.count();
    }
    EXPECT_EQ(sum, whole);
  }
  EXPECT_GT(compared, 10'000u);  // not vacuous
}

TEST(AggregatesTest, TheFleetAndEachFieldAnswerExactlyAsTheHostsBeforeAndAfterRollups) {
  TempDir dir;
  Result<std::unique_ptr<Store>> store =
      Store::Open(dir.path(), Options({"role", "op"}, FourMembers()));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Load(store->get(), 1);
  ExpectAggregatesAnswerAsTheHosts(**store, 2);  // every minute pending: read from `hist`
  ASSERT_TRUE((*store)->RollUp(true).ok());
  EXPECT_EQ((*store)->PendingRollups(), 0u);
  ExpectAggregatesAnswerAsTheHosts(**store, 3);  // from the rollups
  // And after a reopen the id maps come back.
  store->reset();
  store = Store::Open(dir.path(), Options({"role", "op"}, FourMembers()));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ExpectAggregatesAnswerAsTheHosts(**store, 4);
}

TEST(AggregatesTest, AFieldAddedToAStoreThatHoldsDataIsNotReadAndQueriesStayExact) {
  TempDir dir;
  {
    Result<std::unique_ptr<Store>> store = Store::Open(dir.path(), Options({}, std::nullopt));
    ASSERT_TRUE(store.ok());
    Load(store->get(), 5);
  }
  Result<std::unique_ptr<Store>> store = Store::Open(dir.path(), Options({"role"}, std::nullopt));
  ASSERT_TRUE(store.ok());
  Load(store->get(), 6, "/2");  // the agents' next incarnation
  HistogramQuery q{"disk.latency", kT, kT + 3600, 60, "role", {}};
  const uint64_t before = (*store)->AggregateQueries();
  Result<HistogramAnswer> by_role = QueryHistograms(**store, q);
  Result<HistogramAnswer> hosts = QueryHistograms(**store, q, QueryPlan::kHosts);
  ASSERT_TRUE(by_role.ok() && hosts.ok());
  EXPECT_EQ(AnswerDifference(*by_role, *hosts), "");
  EXPECT_EQ((*store)->AggregateQueries(), before);  // role is incomplete: read from the hosts
  q.group_by = "";
  ASSERT_TRUE(QueryHistograms(**store, q).ok());
  EXPECT_EQ((*store)->AggregateQueries(), before + 1);  // the fleet is complete
}

// The aggregates of a store made without them are backfilled: a kill in the middle resumes where
// it stopped, ingest of the same minutes meanwhile counts once, and then the fleet, role and op
// answer exactly as the hosts do, before and after the rollups and after a reopen.
TEST(AggregatesTest, ABackfillMakesAggregatesAddedLaterAnswerExactlyAsTheHosts) {
  TempDir dir;
  LoadWithoutAggregates(dir.path(), /*roll_up=*/true);
  uint64_t total = 0;
  {
    Result<std::unique_ptr<Store>> store =
        Store::Open(dir.path(), Options({"role", "op"}, FourMembers()));
    ASSERT_TRUE(store.ok());
    total = (*store)->BackfillMinutesLeft();
    EXPECT_GT(total, 50u);        // 30 hosts x 60 random seconds over an hour
    Load(store->get(), 6, "/2");  // written with the aggregates, over the same minutes
    const uint64_t before = (*store)->AggregateQueries();
    ASSERT_TRUE(QueryHistograms(**store, {"disk.latency", kT, kT + 3600, 60, "", {}}).ok());
    EXPECT_EQ((*store)->AggregateQueries(), before);  // not complete: read from the hosts
  }
  uint64_t written_before_kill = 0;
#ifdef TRAILMAP_FAILPOINTS
  // Killed before the third minute's write (failpoint backfill.minute): two are written.
  EXPECT_EXIT(
      {
        setenv("TRAILMAP_FAILPOINTS", "backfill.minute=kill@3", 1);
        Result<std::unique_ptr<Store>> store =
            Store::Open(dir.path(), Options({"role", "op"}, FourMembers()));
        if (store.ok()) (void)(*store)->BackfillAggregates();
        _exit(0);
      },
      ::testing::KilledBySignal(SIGKILL), "");
  written_before_kill = 2;
#else
  {
    Result<std::unique_ptr<Store>> store =
        Store::Open(dir.path(), Options({"role", "op"}, FourMembers()));
    ASSERT_TRUE(store.ok());
    Result<size_t> two = (*store)->BackfillAggregates(2);
    ASSERT_TRUE(two.ok());
    written_before_kill = *two;
  }
#endif
  // Resumed: each minute's first try meets an ingest write to that minute and is done again.
  Store* live = nullptr;
  int hook_calls = 0, redone = 0;
  StoreOptions options = Options({"role", "op"}, FourMembers());
  options.before_backfill_write = [&live, &hook_calls, &redone](uint32_t, int64_t minute) {
    if (++hook_calls % 2 == 0) return;  // the second try goes through
    Batch b = MakeBatch("live", static_cast<uint64_t>(++redone), "h7",
                        {Latency("disk.latency", "op=read")});
    b.labels = {{"role", "db"}};
    b.seconds.push_back({minute + 7, {{0, Encoded({123456, 7654321})}}, {}});
    ASSERT_EQ(live->ApplyBatch(b)->status, Ack::Status::kApplied);
  };
  Result<std::unique_ptr<Store>> store = Store::Open(dir.path(), options);
  ASSERT_TRUE(store.ok());
  live = store->get();
  EXPECT_EQ((*store)->BackfillMinutesLeft(), total - written_before_kill);
  Result<size_t> rest = (*store)->BackfillAggregates();
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(*rest, total - written_before_kill);
  EXPECT_EQ(redone, static_cast<int>(*rest));  // every minute was written to once meanwhile
  EXPECT_EQ((*store)->BackfillMinutesLeft(), 0u);
  // 12 random queries each (every grouping, replica rounds): enough to cover both, and cheap.
  ExpectAggregatesAnswerAsTheHosts(**store, 8, 12);  // the backfilled minutes pending: `hist`
  ASSERT_TRUE((*store)->RollUp(true).ok());
  EXPECT_EQ((*store)->PendingRollups(), 0u);
  ExpectAggregatesAnswerAsTheHosts(**store, 9, 12);  // from the aggregate's rollups
  live = nullptr;
  store->reset();
  // Reopened, the aggregates are complete: read, and exact.
  store = Store::Open(dir.path(), Options({"role", "op"}, FourMembers()));
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->BackfillMinutesLeft(), 0u);
  const HistogramQuery by_role{"disk.latency", kT, kT + 3600, 60, "role", {}};
  const uint64_t before = (*store)->AggregateQueries();
  Result<HistogramAnswer> aggregate = QueryHistograms(**store, by_role);
  Result<HistogramAnswer> hosts = QueryHistograms(**store, by_role, QueryPlan::kHosts);
  ASSERT_TRUE(aggregate.ok() && hosts.ok());
  EXPECT_EQ((*store)->AggregateQueries(), before + 1);
  EXPECT_EQ(AnswerDifference(*aggregate, *hosts), "");
}

// A store whose 1 s data reaches back to within an hour of the 1 s retention's edge backfills
// from the first minute past that edge only (backfill_driver.cc), and the aggregate is then read
// only by queries that start there or later: one that starts a second earlier reads the hosts.
// Both answer exactly as the hosts.
TEST(AggregatesTest, AnAggregateBackfilledFromALaterSecondServesOnlyRangesFromThere) {
  TempDir dir;
  LoadWithoutAggregates(dir.path(), /*roll_up=*/false);
  // The 1 s retention (2 days) ends 3,600 s before kT + 1800: the edge the backfill keeps clear.
  constexpr int64_t kFrom = kT + 1800;
  StoreOptions options = Options({"role"}, std::nullopt);
  options.retention_seconds[0] = 2 * 86400;
  options.clock = [retention = options.retention_seconds[0]] { return kFrom - 3600 + retention; };
  Result<std::unique_ptr<Store>> store = Store::Open(dir.path(), options);
  ASSERT_TRUE(store.ok());
  Result<size_t> written = (*store)->BackfillAggregates();
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(*written, 30u);  // the minutes from kFrom on, each holding data; none before
  EXPECT_EQ((*store)->BackfillMinutesLeft(), 0u);
  for (const int64_t from : {kFrom - 1, kT, kFrom, kFrom + 60}) {
    SCOPED_TRACE("from kT + " + std::to_string(from - kT));
    const HistogramQuery q{"disk.latency", from, kT + 3600, 60, "role", {}};
    const uint64_t before = (*store)->AggregateQueries();
    Result<HistogramAnswer> answer = QueryHistograms(**store, q);
    Result<HistogramAnswer> hosts = QueryHistograms(**store, q, QueryPlan::kHosts);
    ASSERT_TRUE(answer.ok() && hosts.ok());
    EXPECT_EQ((*store)->AggregateQueries(), before + (from >= kFrom ? 1 : 0));
    EXPECT_EQ(AnswerDifference(*answer, *hosts), "");
    EXPECT_FALSE(hosts->cells.empty());
  }
}

TEST(AggregatesTest, QueriesAnAggregateCannotServeReadTheHosts) {
  TempDir dir;
  Result<std::unique_ptr<Store>> store = Store::Open(dir.path(), Options({"role"}, std::nullopt));
  ASSERT_TRUE(store.ok());
  Load(store->get(), 7);
  const uint64_t before = (*store)->AggregateQueries();
  HistogramQuery by_host{"disk.latency", kT, kT + 3600, 60, "host", {}};
  HistogramQuery some_hosts{"disk.latency", kT, kT + 3600, 60, "", {"h1", "h2"}};
  HistogramQuery where{"disk.latency", kT, kT + 3600, 60, "", {}};
  where.where = R"(role == "web")";
  HistogramQuery by_op{"disk.latency", kT, kT + 3600, 60, "op", {}};  // not aggregated
  HistogramQuery replicated{"disk.latency", kT, kT + 3600, 60, "", {}};
  replicated.replicas = ReplicaScope{FourMembers(), ReplicaSelection{"agg-a", 0, {}, {}}};
  for (const HistogramQuery& q : {by_host, some_hosts, where, by_op, replicated}) {
    ASSERT_TRUE(QueryHistograms(**store, q).ok());
  }
  // Without a cluster file the owner groups are unknown: a replicated query reads the hosts.
  EXPECT_EQ((*store)->AggregateQueries(), before);
}

}  // namespace
}  // namespace trailmap::aggregator
