// An aggregator started from a cluster file (core/cluster.h) with --cluster FILE --name NAME takes
// its endpoints from its own [[aggregator]] entry; `trailmap cluster` then finds it there, by name.
// A name the file does not list is a usage error (exit 2) that lists the names it has.
// With R = 2, a query takes each host from its most complete replica (core/cluster.h "Replicas by
// completeness"), not from a first owner that is behind.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "net/cluster_file.h"
#include "tests/cluster.h"
#include "tests/fault_load.h"
#include "tests/stats_json.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

TEST(ClusterFileSystem, AnAggregatorTakesItsEndpointsFromItsEntry) {
  TempDir dir;
  const std::string ingest_a = "127.0.0.1:" + std::to_string(FreePort());
  const std::string query_a = "127.0.0.1:" + std::to_string(FreePort());
  const std::string file = dir / "cluster.toml";
  WriteFile(file,
            "replication = 1\n"
            "[[aggregator]]\nname = \"agg-a\"\nzone = \"z1\"\ningest = \"" +
                ingest_a + "\"\nquery = \"" + query_a +
                "\"\n"
                "[[aggregator]]\nname = \"agg-b\"\nzone = \"z2\"\ningest = \"127.0.0.1:1\"\n"
                "query = \"127.0.0.1:2\"\n");
  Process aggregator({Binary("trailmap-aggregator"), "--cluster", file, "--name", "agg-a", "--data",
                      dir / "data", "--no-self-metrics"},
                     dir.path(), "agg-a");
  nlohmann::json j;
  ASSERT_TRUE(WaitFor(
      [&] {
        CommandResult r = Cli({"cluster", "--format", "json", "--timeout", "500ms"}, query_a);
        if (r.exit_code != 0) return false;
        j = nlohmann::json::parse(r.out);
        return true;
      },
      20s))
      << aggregator.Stderr();
  ASSERT_EQ(j["members"].size(), 1u);
  EXPECT_EQ(j["members"][0]["name"], "agg-a");
  EXPECT_EQ(j["members"][0]["state"], "up");

  CommandResult bad = RunProgram({Binary("trailmap-aggregator"), "--cluster", file, "--name",
                                  "agg-z", "--data", dir / "data-z"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("no [[aggregator]] named \"agg-z\" (it lists agg-a, agg-b)"),
            std::string::npos)
      << bad.err;
}

// Two aggregators in two zones, R = 2: each holds every host. agg-b, the first owner of web-b,
// is restarted holding its ingest (failpoint ingest.hold: batches neither applied nor acked),
// so it keeps the first ten seconds of each host and misses the next ten. The cluster's answer
// is still exact for both hosts, from agg-a, though agg-b alone is short.
TEST(ClusterFileSystem, EachHostComesFromItsMostCompleteReplica) {
  TempDir dir;
  struct Member {
    std::string name, zone, ingest, query;
  };
  std::vector<Member> members = {{"agg-a", "z1", "", ""}, {"agg-b", "z2", "", ""}};
  std::string toml = "replication = 2\n";
  for (Member& m : members) {
    m.ingest = "127.0.0.1:" + std::to_string(FreePort());
    m.query = "127.0.0.1:" + std::to_string(FreePort());
    toml += "[[aggregator]]\nname = \"" + m.name + "\"\nzone = \"" + m.zone + "\"\ningest = \"" +
            m.ingest + "\"\nquery = \"" + m.query + "\"\n";
  }
  const std::string file = dir / "cluster.toml";
  WriteFile(file, toml);
  Result<Cluster> cluster = LoadCluster(file);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  // Two hosts, one placed first on each aggregator.
  std::map<std::string, std::string> host_of;  // first owner -> host
  for (int i = 0; host_of.size() < 2; ++i) {
    const std::string h = "web-" + std::to_string(i);
    host_of.emplace(cluster->members[cluster->Owners(h, 0)[0]].name, h);
  }
  const std::string behind_first = host_of.at("agg-b"), complete_first = host_of.at("agg-a");

  const auto start = [&](const std::string& name) {
    return std::make_unique<Process>(
        std::vector<std::string>{Binary("trailmap-aggregator"), "--cluster", file, "--name", name,
                                 "--data", dir / (name + "-data"), "--no-self-metrics"},
        dir.path(), name);
  };
  std::map<std::string, std::unique_ptr<Process>> aggs;
  for (const Member& m : members) aggs[m.name] = start(m.name);

  // Ten seconds of events 10 minutes ago, then the next ten; `n` events a second, each host.
  const int64_t t0 = UnixNow() / 60 * 60 - 600;
  const auto trace = [&](int64_t from, int n) {
    std::string text = "time latency\n";
    for (int64_t s = from; s < from + 10; ++s) {
      for (int i = 0; i < n; ++i) text += std::to_string(s * 1'000'000 + i) + " 250\n";
    }
    return text;
  };
  WriteFile(dir / "first.txt", trace(t0, 7));
  WriteFile(dir / "second.txt", trace(t0 + 10, 5));
  const auto import = [&](const std::string& host, const std::string& path) {
    return RunProgram({Binary("trailmap"), "import", "--cluster", file, "--host", host, "--metric",
                       "disk.latency", "--time-unit", "us", "--value-unit", "us", "--ack-timeout",
                       "2s", path});
  };
  // Both up first: an import that one owner missed would be retried under a new agent id, and
  // the other would count it twice.
  CommandResult up;
  ASSERT_TRUE(WaitFor(
      [&] {
        up = RunProgram({Binary("trailmap"), "cluster", "--cluster", file, "--timeout", "500ms"});
        return up.exit_code == 0;
      },
      20s))
      << up.out << up.err;
  for (const std::string& h : {behind_first, complete_first}) {
    CommandResult r = import(h, dir / "first.txt");
    ASSERT_EQ(r.exit_code, 0) << r.err << aggs["agg-a"]->Stderr() << aggs["agg-b"]->Stderr();
  }
  // agg-b comes back holding its ingest: the second ten seconds reach agg-a alone.
  aggs["agg-b"]->Kill(SIGKILL);
  aggs["agg-b"]->Wait();
  setenv("TRAILMAP_FAILPOINTS", "ingest.hold=error", 1);
  aggs["agg-b"] = start("agg-b");
  unsetenv("TRAILMAP_FAILPOINTS");
  for (const std::string& h : {behind_first, complete_first}) {
    CommandResult r = import(h, dir / "second.txt");
    EXPECT_EQ(r.exit_code, 1) << r.err;  // agg-b never acknowledges
  }

  const auto stats = [&](const std::vector<std::string>& target, const std::string& by) {
    std::vector<std::string> argv = {"stats",
                                     "--metric",
                                     "disk.latency",
                                     "--from",
                                     std::to_string(t0),
                                     "--to",
                                     std::to_string(t0 + 20),
                                     "--format",
                                     "json",
                                     "--timeout",
                                     "3s"};
    if (!by.empty()) argv.insert(argv.end(), {"--by", by});
    argv.insert(argv.end(), target.begin(), target.end());
    argv.insert(argv.begin(), Binary("trailmap"));
    return RunProgram(argv);
  };
  CommandResult alone = stats({"--aggregators", members[1].query}, "host");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  std::map<std::string, GroupStats> b = ParseStats(alone.out);
  EXPECT_EQ(b[behind_first].count, 70u);  // agg-b alone: the first ten seconds only
  EXPECT_EQ(b[complete_first].count, 70u);

  CommandResult whole = stats({"--cluster", file}, "host");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  std::map<std::string, GroupStats> got = ParseStats(whole.out);
  EXPECT_EQ(got[behind_first].count, 120u) << whole.out;  // 70 + 50, from agg-a
  EXPECT_EQ(got[complete_first].count, 120u) << whole.out;
  // The fleet's total too (answered from the hosts, not agg-a's pre-aggregate of its owner group).
  CommandResult fleet = stats({"--cluster", file}, "");
  ASSERT_EQ(fleet.exit_code, 0) << fleet.err;
  std::map<std::string, GroupStats> all = ParseStats(fleet.out);
  ASSERT_EQ(all.size(), 1u) << fleet.out;
  EXPECT_EQ(all.begin()->second.count, 240u) << fleet.out;
  // Only the host behind, named: the same.
  CommandResult one = stats({"--cluster", file, "--hosts", behind_first}, "host");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(ParseStats(one.out)[behind_first].count, 120u) << one.out;
}

// SIGHUP makes the agent and the aggregators read the cluster file again: a file that does not
// read is refused, named with its line, and the old cluster kept; one that adds an epoch is taken,
// and from that epoch's start the host's batches go to its new owner, with no restart.
TEST(ClusterFileSystem, SighupReadsTheClusterFileAgain) {
  TempDir dir;
  const std::string ingest_a = "127.0.0.1:" + std::to_string(FreePort());
  const std::string query_a = "127.0.0.1:" + std::to_string(FreePort());
  const std::string ingest_b = "127.0.0.1:" + std::to_string(FreePort());
  const std::string query_b = "127.0.0.1:" + std::to_string(FreePort());
  const std::string members =
      "[[aggregator]]\nname = \"agg-a\"\ningest = \"" + ingest_a + "\"\nquery = \"" + query_a +
      "\"\n[[aggregator]]\nname = \"agg-b\"\ningest = \"" + ingest_b + "\"\nquery = \"" + query_b +
      "\"\n[[epoch]]\nfrom = 0\nmembers = [\"agg-a\"]\n";
  const std::string file = dir / "cluster.toml";
  WriteFile(file, members);
  std::map<std::string, std::unique_ptr<Process>> aggs;
  for (const std::string name : {"agg-a", "agg-b"}) {
    aggs[name] = std::make_unique<Process>(
        std::vector<std::string>{Binary("trailmap-aggregator"), "--cluster", file, "--name", name,
                                 "--data", dir / (name + "-data"), "--no-self-metrics"},
        dir.path(), name);
  }
  Agent agent(dir, "web-1", "", {"--cluster", file, "--no-self-metrics"});
  const auto count = [&](const std::string& query, int64_t from) -> uint64_t {
    CommandResult r =
        Cli({"stats", "--metric", "disk.latency", "--by", "host", "--from", std::to_string(from),
             "--to", "now", "--format", "json", "--timeout", "1s"},
            query);
    if (r.exit_code != 0) return 0;
    auto stats = ParseStats(r.out);
    return stats.count("web-1") ? stats.at("web-1").count : 0;
  };
  const int64_t began = UnixNow() - 5;
  SendEvents(agent.statsd_port(), "disk.latency", 40);
  ASSERT_TRUE(WaitFor([&] { return count(query_a, began) == 40; }, 20s))
      << agent.Log() << aggs["agg-a"]->Stderr();

  // A file that does not read: refused, its line named, the old cluster kept.
  WriteFile(file, members + "[[epoch]\n");
  const auto hup = [&] {
    agent.process().Kill(SIGHUP);
    for (auto& [name, p] : aggs) p->Kill(SIGHUP);
  };
  const auto logged = [](const std::function<std::string()>& log, const std::string& text) {
    return WaitFor([&] { return log().find(text) != std::string::npos; }, 10s);
  };
  hup();
  const std::string refused = "SIGHUP: " + file + ": line 12, column ";
  EXPECT_TRUE(logged([&] { return agent.Log(); }, refused)) << agent.Log();
  EXPECT_TRUE(logged([&] { return aggs["agg-a"]->Stderr(); }, refused)) << aggs["agg-a"]->Stderr();
  EXPECT_TRUE(logged([&] { return agent.Log(); }, "; kept the cluster as it was")) << agent.Log();

  // An epoch from E on in which agg-b owns the host: taken, and batches from E go to agg-b.
  const int64_t e = UnixNow() + 3;
  WriteFile(file, members + "[[epoch]]\nfrom = " + std::to_string(e) + "\nmembers = [\"agg-b\"]\n");
  hup();
  const std::string taken = "SIGHUP: cluster file " + file + " read again: 2 members, 2 epochs";
  EXPECT_TRUE(logged([&] { return agent.Log(); }, taken)) << agent.Log();
  EXPECT_TRUE(logged([&] { return aggs["agg-b"]->Stderr(); }, taken)) << aggs["agg-b"]->Stderr();
  ASSERT_TRUE(WaitFor([&] { return UnixNow() >= e; }, 10s));
  SendEvents(agent.statsd_port(), "disk.latency", 30);
  EXPECT_TRUE(WaitFor([&] { return count(query_b, e) == 30; }, 20s))
      << agent.Log() << aggs["agg-b"]->Stderr();
  EXPECT_EQ(count(query_a, e), 0u);       // agg-a owns nothing of it since E
  EXPECT_EQ(count(query_a, began), 40u);  // and keeps what it had
}

}  // namespace
}  // namespace trailmap::test
