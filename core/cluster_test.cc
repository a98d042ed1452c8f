#include "core/cluster.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "core/endpoint.h"

namespace trailmap {
namespace {

// Three valid Z85 keys (any 40 characters of the alphabet decode below 2^32 per group here).
constexpr char kKeyA[] = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
constexpr char kKeyB[] = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
constexpr char kKeyShared[] = "=Br3rPl8B)L-=Jq+mnH]4&4-c!9M.RJ}1!WR:#G1";

constexpr const char* kFile = R"(
replication = 2
[[aggregator]]
name = "agg-1"
zone = "a"
ingest = "10.0.0.1:7400"
query = "10.0.0.1"
[[aggregator]]
name = "agg-2"
zone = "b"
ingest = "10.0.0.2"
query = "10.0.0.2:7501"
[[aggregator]]
name = "agg-3"
zone = "c"
ingest = "10.0.0.3"
query = "10.0.0.3"
[[aggregator]]
name = "agg-4"
zone = "a"
ingest = "10.0.0.4"
query = "10.0.0.4"
[[epoch]]
from = 2026-11-01T00:00:00Z
members = ["agg-1", "agg-2", "agg-3"]
[[epoch]]
from = 1793577600
members = ["agg-1", "agg-2", "agg-3", "agg-4"]
)";

std::vector<std::string> Names(const Cluster& c, const std::vector<size_t>& owners) {
  std::vector<std::string> out;
  for (size_t i : owners) out.push_back(c.members[i].name);
  return out;
}

// The placement rendezvous hashing replaced: FNV-1a of the host modulo the number of members.
size_t Modulo(std::string_view host, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : host) h = (h ^ c) * 1099511628211ull;
  return static_cast<size_t>(h % n);
}

// Host names as fleets have them.
std::vector<std::string> Hosts(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("web-" + std::to_string(i) + ".dc1.example");
  return out;
}

Cluster Plain(int n, uint32_t replication = 1, int zones = 1) {
  Cluster c;
  c.replication = replication;
  ClusterEpoch all;
  for (int i = 0; i < n; ++i) {
    const std::string name = "agg-" + std::to_string(i + 1);
    c.members.push_back({name, "z" + std::to_string(i % zones), "tcp://" + name + ":7400",
                         "tcp://" + name + ":7401"});
    all.members.push_back(static_cast<size_t>(i));
  }
  c.epochs.push_back(all);
  return c;
}

TEST(Cluster, ParsesMembersZonesEndpointsAndEpochs) {
  Result<Cluster> c = ParseCluster(kFile, "cluster.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->replication, 2u);
  ASSERT_EQ(c->members.size(), 4u);
  EXPECT_EQ(c->members[0], (ClusterMember{"agg-1", "a", "tcp://10.0.0.1:7400", "tcp://10.0.0.1:7401"}));
  EXPECT_EQ(c->members[1].query, "tcp://10.0.0.2:7501");
  ASSERT_EQ(c->epochs.size(), 2u);
  EXPECT_EQ(c->epochs[0].from, 1'793'491'200);  // 2026-11-01T00:00:00Z
  EXPECT_EQ(c->epochs[1].from, 1'793'577'600);  // a day later
  EXPECT_EQ(c->epochs[0].members, (std::vector<size_t>{0, 1, 2}));
  // The first epoch holds before its start too; the second from its start on.
  EXPECT_EQ(&c->EpochAt(0), &c->epochs[0]);
  EXPECT_EQ(&c->EpochAt(1'793'577'599), &c->epochs[0]);
  EXPECT_EQ(&c->EpochAt(1'793'577'600), &c->epochs[1]);
  EXPECT_EQ(c->Find("agg-3")->zone, "c");
  EXPECT_EQ(c->Find("agg-9"), nullptr);
}

TEST(Cluster, OwnersComeFromDistinctZonesAndOnlyFromTheEpochsMembers) {
  Result<Cluster> c = ParseCluster(kFile, "cluster.toml");
  ASSERT_TRUE(c.ok());
  std::map<std::string, int> primaries;
  for (const std::string& host : Hosts(2000)) {
    const std::vector<size_t> before = c->Owners(host, 1'793'500'000);
    ASSERT_EQ(before.size(), 2u);
    EXPECT_NE(c->members[before[0]].zone, c->members[before[1]].zone) << host;
    for (size_t m : before) EXPECT_NE(c->members[m].name, "agg-4") << host;
    const std::vector<size_t> after = c->Owners(host, 1'793'600'000);
    ASSERT_EQ(after.size(), 2u);
    EXPECT_NE(c->members[after[0]].zone, c->members[after[1]].zone) << host;
    ++primaries[c->members[after[0]].name];
  }
  // agg-4 is a member in the second epoch, and a primary for about a quarter of the hosts.
  EXPECT_GT(primaries["agg-4"], 400);
  EXPECT_LT(primaries["agg-4"], 600);
}

TEST(Cluster, FewerZonesThanReplicasRepeatAZone) {
  Cluster c = Plain(3, /*replication=*/3, /*zones=*/2);
  const std::vector<size_t> owners = c.Owners("db-7", 0);
  ASSERT_EQ(owners.size(), 3u);
  EXPECT_EQ(std::set<size_t>(owners.begin(), owners.end()).size(), 3u);
  // The first two owners cover both zones.
  EXPECT_NE(c.members[owners[0]].zone, c.members[owners[1]].zone);
}

TEST(Cluster, PlacementDoesNotDependOnTheOrderOfTheList) {
  Cluster c = Plain(5);
  Cluster reversed = c;
  std::reverse(reversed.members.begin(), reversed.members.end());
  for (const std::string& host : Hosts(500)) {
    EXPECT_EQ(Names(c, c.Owners(host, 0)), Names(reversed, reversed.Owners(host, 0))) << host;
  }
}

// The issue's measure: adding or removing one of N members moves about 1/N of 10,000 hosts, and
// only hosts that the member gains or loses. The modulo placement it replaces moved ~N/(N+1).
TEST(Cluster, AddingOrRemovingOneOfNMovesOnlyItsShare) {
  const std::vector<std::string> hosts = Hosts(10'000);
  for (int n : {3, 4, 8}) {
    const Cluster before = Plain(n), after = Plain(n + 1);
    int moved = 0, moved_modulo = 0;
    for (const std::string& host : hosts) {
      const std::string was = before.members[before.Owners(host, 0)[0]].name;
      const std::string now = after.members[after.Owners(host, 0)[0]].name;
      if (was != now) {
        ++moved;
        EXPECT_EQ(now, "agg-" + std::to_string(n + 1)) << host << " moved between old members";
      }
      moved_modulo += Modulo(host, n) != Modulo(host, n + 1);
    }
    const double share = moved / 10'000.0, expected = 1.0 / (n + 1);
    EXPECT_NEAR(share, expected, 0.02) << n << " -> " << n + 1;
    EXPECT_GT(moved_modulo / 10'000.0, 0.6) << "modulo, " << n << " -> " << n + 1;
    // Removing an old member (agg-1) from the N+1 moves exactly the hosts it owned, and each to
    // the member that ranks next for it.
    Cluster without = after;
    without.epochs[0].members.erase(without.epochs[0].members.begin());
    int owned = 0, moved_away = 0;
    for (const std::string& host : hosts) {
      const std::vector<size_t> ranked = after.Owners(host, 0);
      const bool was_agg1 = after.members[ranked[0]].name == "agg-1";
      const size_t now = without.Owners(host, 0)[0];
      owned += was_agg1;
      moved_away += now != ranked[0];
      if (!was_agg1) {
        EXPECT_EQ(now, ranked[0]) << host << " moved off a member that stayed";
      }
    }
    EXPECT_EQ(moved_away, owned);
    EXPECT_NEAR(owned / 10'000.0, 1.0 / (n + 1), 0.02);
  }
}

TEST(Cluster, WithTwoReplicasAMemberJoiningTakesAboutTwoNthsOfTheOwnerships) {
  const std::vector<std::string> hosts = Hosts(10'000);
  const Cluster before = Plain(4, 2), after = Plain(5, 2);
  int changed = 0;
  for (const std::string& host : hosts) {
    std::vector<std::string> a = Names(before, before.Owners(host, 0));
    std::vector<std::string> b = Names(after, after.Owners(host, 0));
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) {
      ++changed;
      // Exactly one of the two owners changed, to the new member.
      std::vector<std::string> gained;
      std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(gained));
      EXPECT_EQ(gained, (std::vector<std::string>{"agg-5"})) << host;
    }
  }
  EXPECT_NEAR(changed / 10'000.0, 2.0 / 5, 0.02);
}

TEST(Cluster, EveryMemberOwnsAboutAnEqualShare) {
  const Cluster c = Plain(4);
  std::map<size_t, int> owned;
  for (const std::string& host : Hosts(10'000)) ++owned[c.Owners(host, 0)[0]];
  for (const auto& [member, n] : owned) EXPECT_NEAR(n, 2500, 200) << member;
}

TEST(Cluster, TheShortFormIsOneZoneOneReplicaOneEpoch) {
  Result<Cluster> c = ClusterFromList("127.0.0.1:7400, 127.0.0.1:7410", kDefaultIngestPort);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->replication, 1u);
  ASSERT_EQ(c->members.size(), 2u);
  EXPECT_EQ(c->members[1], (ClusterMember{"tcp://127.0.0.1:7410", "", "tcp://127.0.0.1:7410",
                                          "tcp://127.0.0.1:7410"}));
  EXPECT_EQ(c->Owners("web-1", 0).size(), 1u);
  EXPECT_EQ(ClusterFromList("a,a:7400", kDefaultIngestPort).status().message(),
            "aggregator tcp://a:7400 is listed twice in \"a,a:7400\"");
  EXPECT_FALSE(ClusterFromList("a,,b", kDefaultIngestPort).ok());
}

// Rounds of a replicated query (core/cluster.h): in each round some of the members asked fail to
// answer; every host-second is then answered exactly once if one of its owners ever answered,
// and not at all otherwise. Tried for every sequence of failures over 3 rounds on 4 members in
// 3 zones with R = 2 and R = 3, over 300 hosts (every ordered owner list of 4 members occurs).
TEST(Cluster, ReplicatedQueryRoundsAnswerEveryHostOnceFromAnOwnerThatAnswered) {
  for (uint32_t r : {2u, 3u}) {
    Result<Cluster> parsed = ParseCluster(kFile, "cluster.toml");
    ASSERT_TRUE(parsed.ok());
    Cluster c = *parsed;
    c.replication = r;
    const int64_t t = 1793577600 + 5;  // the epoch of all four members
    const size_t n = c.members.size();
    std::vector<std::vector<size_t>> owners;
    for (int h = 0; h < 300; ++h) owners.push_back(c.Owners("host-" + std::to_string(h), t));
    // fails[k] = the members failing round k, as a bit set over the 4 members.
    for (uint32_t f1 = 0; f1 < 16; ++f1) {
      for (uint32_t f2 = 0; f2 < 16; ++f2) {
        for (uint32_t f3 = 0; f3 < 16; ++f3) {
          const uint32_t fails[3] = {f1, f2, f3};
          std::vector<int> answered(owners.size(), 0);
          std::vector<std::string> down;
          std::vector<uint32_t> down_in;
          uint32_t down_bits = 0;
          for (uint32_t round = 0; round < 3; ++round) {
            std::vector<std::string> failed;
            for (size_t m = 0; m < n; ++m) {
              if (down_bits & (1u << m)) continue;  // not asked again
              if (fails[round] & (1u << m)) {
                failed.push_back(c.members[m].name);
                continue;
              }
              const ReplicaSelection s{c.members[m].name, round, down, down_in};
              for (size_t h = 0; h < owners.size(); ++h) {
                answered[h] += ReplicaAnswers(c, owners[h], s) ? 1 : 0;
              }
            }
            if (failed.empty()) break;  // as the fan-out: no one new is down, no round more
            for (const std::string& f : failed) {
              down.push_back(f);
              down_in.push_back(round);
            }
            for (size_t m = 0; m < n; ++m) down_bits |= fails[round] & (1u << m);
          }
          for (size_t h = 0; h < owners.size(); ++h) {
            // The host's chosen replica is its first owner not found down so far; it is
            // answered in the first round whose chosen replica answers.
            int expected = 0;
            uint32_t found_down = 0;
            for (uint32_t round = 0; round < 3 && expected == 0; ++round) {
              for (size_t o : owners[h]) {
                if (found_down & (1u << o)) continue;
                if (!(fails[round] & (1u << o))) expected = 1;
                break;
              }
              found_down |= fails[round];
            }
            ASSERT_EQ(answered[h], expected)
                << "R=" << r << " fails " << f1 << "," << f2 << "," << f3 << " host " << h;
            // Lost only when every owner was found down.
            if (answered[h] == 0) {
              for (size_t o : owners[h]) ASSERT_TRUE(down_bits & (1u << o));
            }
          }
        }
      }
    }
  }
}

// A preference moves its member to the front of that host's owners in that epoch only; one
// naming a member that is not an owner, another host or another epoch changes nothing.
TEST(Cluster, APreferenceMovesItsOwnerFirstForItsHostAndEpochOnly) {
  const Cluster c = Plain(4, /*replication=*/3, /*zones=*/4);
  const std::vector<size_t> owners = c.Owners("web-1", 0);
  ASSERT_EQ(owners.size(), 3u);
  size_t outsider = 0;
  while (std::find(owners.begin(), owners.end(), outsider) != owners.end()) ++outsider;
  ReplicaSelection s;
  s.prefer = {{"a-host", 0, c.members[owners[2]].name},
              {"web-1", 0, c.members[owners[2]].name},
              {"web-1", 1, c.members[owners[1]].name},
              {"web-2", 0, c.members[outsider].name}};
  std::vector<size_t> reordered = owners;
  ApplyPreference(c, s, "web-1", 0, &reordered);
  EXPECT_EQ(reordered, (std::vector<size_t>{owners[2], owners[0], owners[1]}));
  reordered = owners;
  ApplyPreference(c, s, "web-1", 1, &reordered);  // another epoch's preference
  EXPECT_EQ(reordered, (std::vector<size_t>{owners[1], owners[0], owners[2]}));
  reordered = owners;
  ApplyPreference(c, s, "web-0", 0, &reordered);  // no preference of its own
  EXPECT_EQ(reordered, owners);
  std::vector<size_t> two = c.Owners("web-2", 0);
  const std::vector<size_t> before = two;
  ApplyPreference(c, s, "web-2", 0, &two);  // names a member that is not an owner
  EXPECT_EQ(two, before);
  // The rounds follow the reordered owners: the preferred owner answers in round 0.
  reordered = owners;
  ApplyPreference(c, s, "web-1", 0, &reordered);
  s.member = c.members[owners[2]].name;
  EXPECT_TRUE(ReplicaAnswers(c, reordered, s));
  s.member = c.members[owners[0]].name;
  EXPECT_FALSE(ReplicaAnswers(c, reordered, s));
}

// A file read again while running may add members and epochs that begin later; anything that
// would move data already placed is refused, naming what changed.
TEST(Cluster, AReloadMayOnlyAddMembersAndLaterEpochs) {
  const std::string two =
      "replication = 1\n[[aggregator]]\nname = \"a\"\ningest = \"h1\"\nquery = \"h1\"\n"
      "[[aggregator]]\nname = \"b\"\ningest = \"h2\"\nquery = \"h2\"\n";
  const std::string third = "[[aggregator]]\nname = \"c\"\ningest = \"h3\"\nquery = \"h3\"\n";
  const std::string first_epoch = "[[epoch]]\nfrom = 0\nmembers = [\"a\", \"b\"]\n";
  const auto parse = [](const std::string& text) {
    Result<Cluster> c = ParseCluster(text, "c.toml");
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : Cluster{};
  };
  const Cluster current = parse(two);
  const int64_t now = 1000;
  const std::string later = "[[epoch]]\nfrom = 1060\nmembers = [\"a\", \"b\", \"c\"]\n";
  EXPECT_TRUE(
      CheckClusterReload(current, parse(two + third + first_epoch + later), now, "c.toml").ok());
  EXPECT_TRUE(CheckClusterReload(current, current, now, "c.toml").ok());
  const std::map<std::string, std::string> refused = {
      {"replication = 2\n" + two.substr(16) + third, "c.toml: replication changed from 1 to 2"},
      {"[[aggregator]]\nname = \"a\"\ningest = \"h1\"\nquery = \"h1\"\n",
       "c.toml: 1 [[aggregator]] table(s) removed"},
      {third + two.substr(16),
       "c.toml: aggregator 1 (\"a\") changed or moved: new members go "
       "after the old ones"},
      {two + third + first_epoch + "[[epoch]]\nfrom = 1000\nmembers = [\"a\", \"c\"]\n",
       "c.toml: epoch 2 is new or changed but begins at 1000, not after now (1000): give it a "
       "later `from`"},
      {two + third + "[[epoch]]\nfrom = 0\nmembers = [\"a\", \"c\"]\n",
       "c.toml: epoch 1 has begun and changed (or is gone)"},
  };
  for (const auto& [text, message] : refused) {
    const Status s = CheckClusterReload(current, parse(text), now, "c.toml");
    EXPECT_EQ(s.message().substr(0, message.size()), message) << text;
    EXPECT_NE(s.message().find("; kept the cluster as it was"), std::string::npos);
  }
  // An epoch that has not begun may still change.
  const Cluster planned = parse(two + third + first_epoch + later);
  EXPECT_TRUE(CheckClusterReload(planned,
                                 parse(two + third + first_epoch +
                                       "[[epoch]]\nfrom = 1200\nmembers = [\"a\", \"c\"]\n"),
                                 now, "c.toml")
                  .ok());
}

TEST(Cluster, AMemberNamesItsOwnServerKeyInlineOrInAFileBesideTheClusterFile) {
  const std::string dir = ::testing::TempDir() + "/cluster_test_keys";
  std::filesystem::create_directories(dir + "/keys");
  std::ofstream(dir + "/keys/b.pub") << "name = \"b\"\npublic-key = \"" << kKeyB << "\"\n";
  const std::string text = std::string("[[aggregator]]\nname = \"a\"\ningest = \"h1\"\n") +
                           "query = \"h1\"\nserver_key = \"" + kKeyA + "\"\n" +
                           "[[aggregator]]\nname = \"b\"\ningest = \"h2\"\nquery = \"h2\"\n" +
                           "server_key_file = \"keys/b.pub\"\n" +
                           "[[aggregator]]\nname = \"c\"\ningest = \"h3\"\nquery = \"h3\"\n";
  Result<Cluster> c = ParseCluster(text, dir + "/cluster.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->members[0].server_key, kKeyA);
  EXPECT_EQ(c->members[1].server_key, kKeyB);
  EXPECT_EQ(c->members[2].server_key, "");

  // Clients use a member's own key, the shared one for the rest; plaintext stays plaintext.
  const CurveClient shared{"web", kKeyA, kKeyA, kKeyShared, false};
  EXPECT_EQ(MemberCurve(shared, c->members[1]).server_key, kKeyB);
  EXPECT_EQ(MemberCurve(shared, c->members[1]).secret_key, kKeyA);
  EXPECT_EQ(MemberCurve(shared, c->members[2]).server_key, kKeyShared);
  CurveClient plain;
  plain.plaintext = true;
  EXPECT_EQ(MemberCurve(plain, c->members[1]).server_key, "");

  // A rolled key is a reload like any other: placement does not change.
  std::string rolled = text;
  rolled.replace(rolled.find(kKeyA), 40, kKeyB);
  Result<Cluster> next = ParseCluster(rolled, dir + "/cluster.toml");
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->members[0].server_key, kKeyB);
  EXPECT_TRUE(CheckClusterReload(*c, *next, 1000, "c.toml").ok());
}

TEST(Cluster, MistakesAreNamedWithWhere) {
  const std::string one =
      "[[aggregator]]\nname = \"a\"\ningest = \"h1\"\nquery = \"h1\"\n";
  const std::string two = one + "[[aggregator]]\nname = \"b\"\ningest = \"h2\"\nquery = \"h2\"\n";
  const std::map<std::string, std::string> cases = {
      {"",
       "c.toml: aggregator: no [[aggregator]] tables: list every aggregator with its name, "
       "zone, ingest and query endpoints"},
      {"replicas = 2\n" + one,
       "c.toml: replicas: unknown key (known: aggregator, epoch, replication)"},
      {"replication = 0\n" + one, "c.toml:1: replication: expected an integer from 1 to 16"},
      {"replication = 2\n" + one, "c.toml: epoch 1: 1 member(s), fewer than replication = 2"},
      {one + "[[aggregator]]\nname = \"a\"\ningest = \"h2\"\nquery = \"h2\"\n",
       "c.toml:5: aggregator 2.name: \"a\" is listed twice"},
      {"[[aggregator]]\nname = \"a\"\nquery = \"h1\"\n", "c.toml:1: aggregator 1: missing ingest"},
      {"[[aggregator]]\nname = \"a\"\ningest = \"h1:99999\"\nquery = \"h1\"\n",
       "c.toml:1: aggregator 1.ingest: bad port in \"h1:99999\": use HOST:PORT, e.g. "
       "127.0.0.1:7400"},
      {"[[aggregator]]\nname = \"a\"\nzone = 3\ningest = \"h1\"\nquery = \"h1\"\n",
       "c.toml:1: aggregator 1.zone: expected a string"},
      {"[[aggregator]]\nname = \"a\"\nport = 1\ningest = \"h1\"\nquery = \"h1\"\n",
       "c.toml:1: aggregator 1.port: unknown key (known: ingest, name, query, server_key, "
       "server_key_file, zone)"},
      {two + "[[epoch]]\nfrom = 600\nmembers = [\"a\", \"c\"]\n",
       "c.toml:9: epoch 1.members: \"c\" is not an [[aggregator]]"},
      {two + "[[epoch]]\nfrom = 600\nmembers = [\"a\"]\n[[epoch]]\nfrom = 600\nmembers = [\"b\"]\n",
       "c.toml: epoch 2: from must come after the previous epoch's"},
      {two + "[[epoch]]\nfrom = 2026-11-01T00:00:00\nmembers = [\"a\"]\n",
       "c.toml:9: epoch 1.from: a date-time needs its offset, e.g. ...T00:00:00Z"},
      {two + "[[epoch]]\nmembers = [\"a\"]\n", "c.toml:9: epoch 1: missing from"},
      {"[[aggregator]\n", "c.toml: line 1, column 14: "},
      {"[[aggregator]]\nname = \"a\"\ningest = \"h1\"\nquery = \"h1\"\nserver_key = \"abc\"\n",
       "c.toml:1: aggregator 1.server_key: a CURVE key is 40 Z85 characters; \"abc\" has 3 (the "
       "member's .pub holds it)"},
      {"[[aggregator]]\nname = \"a\"\ningest = \"h1\"\nquery = \"h1\"\nserver_key = \"" +
           std::string(kKeyA) + "\"\nserver_key_file = \"a.pub\"\n",
       "c.toml:1: aggregator 1: server_key and server_key_file both given: give one"},
      {"[[aggregator]]\nname = \"a\"\ningest = \"h1\"\nquery = \"h1\"\n"
       "server_key_file = \"no-such.pub\"\n",
       "c.toml:1: aggregator 1.server_key_file: no-such.pub: no such file"},
  };
  for (const auto& [text, message] : cases) {
    Result<Cluster> c = ParseCluster(text, "c.toml");
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.status().message().substr(0, message.size()), message) << text;
  }
}

}  // namespace
}  // namespace trailmap
