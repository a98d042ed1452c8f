#include "query/fetch/replica_choice.h"

#include <gtest/gtest.h>

namespace trailmap {
namespace {

// Three members in three zones, R = 2; from second 5000 on a fourth joins.
Cluster ThreeZones(bool fourth_joins = false) {
  Cluster c;
  c.replication = 2;
  c.members = {{"agg-1", "a", "", ""}, {"agg-2", "b", "", ""}, {"agg-3", "c", "", ""}};
  c.epochs = {ClusterEpoch{INT64_MIN, {0, 1, 2}}};
  if (fourth_joins) {
    c.members.push_back({"agg-4", "a", "", ""});
    c.epochs.push_back(ClusterEpoch{5000, {0, 1, 2, 3}});
  }
  return c;
}

// A host whose owners before 5000 are [first, second] (by name), and the other member.
struct Placed {
  std::string host;
  size_t first, second, other;
};
Placed HostOwnedBy(const Cluster& c, const std::string& first) {
  for (int i = 0;; ++i) {
    const std::string host = "web-" + std::to_string(i);
    const std::vector<size_t> o = c.Owners(host, 0);
    if (c.members[o[0]].name == first) return {host, o[0], o[1], 3 - o[0] - o[1]};
  }
}

ReplicaCompleteness AllAnswered(const Cluster& c) {
  ReplicaCompleteness r(c.members.size());
  for (size_t m = 0; m < c.members.size(); ++m) r.Add(m, {});
  return r;
}

TEST(ReplicaChoice, TheEdgeIsTheRangesEndOrFiveSecondsAgo) {
  EXPECT_EQ(CompletenessBefore(1000, 2000), 1000);
  EXPECT_EQ(CompletenessBefore(1000, 1003), 998);
}

TEST(ReplicaChoice, NoOneBehindNoPreferenceNoSecondQuestion) {
  const Cluster c = ThreeZones();
  const ReplicaCompleteness r = AllAnswered(c);
  for (const auto& names : FollowUps(c, 1000, 2000, r)) EXPECT_TRUE(names.empty());
  EXPECT_TRUE(ChooseReplicas(c, 1000, 2000, 2000, r).empty());
}

// The first owner is replaying its spool (through 1500 of [1000, 2000)): its peer, not named as
// behind, is asked by name, and comes first once it says it is through the range.
TEST(ReplicaChoice, TheFirstOwnerBehindYieldsToItsCompletePeer) {
  const Cluster c = ThreeZones();
  const Placed p = HostOwnedBy(c, "agg-1");
  ReplicaCompleteness r = AllAnswered(c);
  r.Add(p.first, {{p.host, 1500}});
  const std::vector<std::vector<std::string>> follow = FollowUps(c, 1000, 2000, r);
  EXPECT_EQ(follow[p.second], std::vector<std::string>{p.host});
  EXPECT_TRUE(follow[p.first].empty());
  EXPECT_TRUE(follow[p.other].empty());  // not an owner
  r.Add(p.second, {{p.host, 2100}}, {p.host});
  EXPECT_TRUE(FollowUps(c, 1000, 2000, r)[p.second].empty());  // asked once
  EXPECT_EQ(ChooseReplicas(c, 1000, 2000, 2000, r),
            (std::vector<ReplicaPreference>{{p.host, 0, c.members[p.second].name}}));
  // Over a range the first owner has applied whole, both are complete: the owner order stands.
  EXPECT_TRUE(ChooseReplicas(c, 1000, 1400, 1400, r).empty());
  // A range ending at its newest second + 1 is still whole on it.
  EXPECT_TRUE(ChooseReplicas(c, 1000, 1501, 1501, r).empty());
  EXPECT_EQ(ChooseReplicas(c, 1000, 1502, 1502, r).size(), 1u);
}

TEST(ReplicaChoice, APeerThatDoesNotHoldTheHostIsNeverPreferred) {
  const Cluster c = ThreeZones();
  const Placed p = HostOwnedBy(c, "agg-2");
  ReplicaCompleteness r = AllAnswered(c);
  r.Add(p.first, {{p.host, 1500}});
  r.Add(p.second, {}, {p.host});  // asked by name: holds nothing of it (a fresh store)
  EXPECT_TRUE(ChooseReplicas(c, 1000, 2000, 2000, r).empty());
}

TEST(ReplicaChoice, BothBehindTheFurtherWinsAndTiesKeepTheOwnerOrder) {
  const Cluster c = ThreeZones();
  const Placed p = HostOwnedBy(c, "agg-3");
  ReplicaCompleteness r = AllAnswered(c);
  r.Add(p.first, {{p.host, 1500}});
  r.Add(p.second, {{p.host, 1600}});
  for (const auto& names : FollowUps(c, 1000, 2000, r)) EXPECT_TRUE(names.empty());
  EXPECT_EQ(ChooseReplicas(c, 1000, 2000, 2000, r),
            (std::vector<ReplicaPreference>{{p.host, 0, c.members[p.second].name}}));
  r.Add(p.second, {{p.host, 1500}});
  EXPECT_TRUE(ChooseReplicas(c, 1000, 2000, 2000, r).empty());
}

// Near now every replica is still receiving: past `before` they are not compared.
TEST(ReplicaChoice, SecondsPastTheEdgeAreNotCompared) {
  const Cluster c = ThreeZones();
  const Placed p = HostOwnedBy(c, "agg-1");
  ReplicaCompleteness r = AllAnswered(c);
  r.Add(p.first, {{p.host, 1994}});
  r.Add(p.second, {{p.host, 1998}}, {p.host});
  EXPECT_TRUE(ChooseReplicas(c, 1000, 2000, 1995, r).empty());
  EXPECT_EQ(ChooseReplicas(c, 1000, 2000, 1997, r).size(), 1u);
}

TEST(ReplicaChoice, AMemberThatDidNotAnswerHoldsNothing) {
  const Cluster c = ThreeZones();
  const Placed p = HostOwnedBy(c, "agg-1");
  ReplicaCompleteness r(c.members.size());
  r.Add(p.second, {{p.host, 1200}});
  r.Add(p.other, {});
  EXPECT_TRUE(FollowUps(c, 1000, 2000, r)[p.first].empty());  // it did not answer
  EXPECT_EQ(ChooseReplicas(c, 1000, 2000, 2000, r),
            (std::vector<ReplicaPreference>{{p.host, 0, c.members[p.second].name}}));
}

// Each epoch's owners are compared over the part of the range that epoch holds.
TEST(ReplicaChoice, EachEpochChoosesAmongItsOwnOwners) {
  const Cluster c = ThreeZones(/*fourth_joins=*/true);
  // A host agg-4 owns from 5000 on, as its first owner.
  std::string host;
  for (int i = 0; host.empty(); ++i) {
    const std::string h = "db-" + std::to_string(i);
    if (c.members[c.Owners(h, 5000)[0]].name == "agg-4") host = h;
  }
  const std::vector<size_t> after = c.Owners(host, 5000);
  ReplicaCompleteness r = AllAnswered(c);
  r.Add(3, {{host, 5100}});  // agg-4 is behind from 5101 on
  const std::vector<std::vector<std::string>> follow = FollowUps(c, 4000, 6000, r);
  EXPECT_EQ(follow[after[1]], std::vector<std::string>{host});
  r.Add(after[1], {{host, 6000}}, {host});
  EXPECT_EQ(ChooseReplicas(c, 4000, 6000, 6000, r),
            (std::vector<ReplicaPreference>{{host, 1, c.members[after[1]].name}}));
  // Before 5000 agg-4 owns nothing: the first epoch keeps its order.
  EXPECT_TRUE(ChooseReplicas(c, 4000, 5000, 5000, r).empty());
}

}  // namespace
}  // namespace trailmap
