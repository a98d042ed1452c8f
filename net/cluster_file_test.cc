#include "net/cluster_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "net/endpoint.h"

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

TEST(Cluster, ParsesMembersZonesEndpointsAndEpochs) {
  Result<Cluster> c = ParseCluster(kFile, "cluster.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->replication, 2u);
  ASSERT_EQ(c->members.size(), 4u);
  EXPECT_EQ(c->members[0],
            (ClusterMember{"agg-1", "a", "tcp://10.0.0.1:7400", "tcp://10.0.0.1:7401"}));
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
  const std::string one = "[[aggregator]]\nname = \"a\"\ningest = \"h1\"\nquery = \"h1\"\n";
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
