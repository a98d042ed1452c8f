// An aggregator started from a cluster file (core/cluster.h) with --cluster FILE --name NAME takes
// its endpoints from its own [[aggregator]] entry; `trailmap cluster` then finds it there, by name.
// A name the file does not list is a usage error (exit 2) that lists the names it has.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cluster.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

TEST(ClusterFileSystem, AnAggregatorTakesItsEndpointsFromItsEntry) {
  TempDir dir;
  const std::string ingest_a = "127.0.0.1:" + std::to_string(FreePort());
  const std::string query_a = "127.0.0.1:" + std::to_string(FreePort());
  const std::string file = dir / "cluster.toml";
  WriteFile(file, "replication = 1\n"
                  "[[aggregator]]\nname = \"agg-a\"\nzone = \"z1\"\ningest = \"" + ingest_a +
                      "\"\nquery = \"" + query_a + "\"\n"
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

}  // namespace
}  // namespace trailmap::test
