#include "query/http/node_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <vector>

#include "query/http/api.h"

namespace trailmap {
namespace {

// Parses `args` as trailmap-query's command line; throws CLI11's ParseError as the program's
// main() catches it.
NodeFlags Parse(std::vector<std::string> args) {
  CLI::App app;
  NodeFlags flags;
  AddNodeFlags(&app, &flags);
  std::vector<const char*> argv{"trailmap-query"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  return flags;
}

Status Check(std::vector<std::string> args) {
  NodeFlags flags = Parse(std::move(args));
  return CheckNodeFlags(&flags);
}

TEST(NodeFlags, EveryFlagReachesItsOption) {
  NodeFlags f = Parse({"--listen=0.0.0.0:9000",
                       "-a",
                       "a:7401,b",
                       "--config",
                       "c.toml",
                       "--timeout",
                       "2s",
                       "--workers",
                       "3",
                       "--max-queue=9",
                       "--max-connections",
                       "100",
                       "--stream-keepalive",
                       "250ms",
                       "--tokens",
                       "t.txt",
                       "--key",
                       "n.key",
                       "--server-key",
                       "agg.pub"});
  ASSERT_TRUE(CheckNodeFlags(&f).ok());
  EXPECT_EQ(f.server.listen, "0.0.0.0:9000");
  EXPECT_EQ(f.defaults.aggregators, "a:7401,b");
  EXPECT_EQ(f.defaults.config, "c.toml");
  EXPECT_EQ(f.defaults.timeout, "2s");
  EXPECT_EQ(f.server.workers, 3);
  EXPECT_EQ(f.server.max_queue, 9);
  EXPECT_EQ(f.server.max_connections, 100u);
  EXPECT_EQ(f.server.stream_keepalive, std::chrono::milliseconds(250));
  EXPECT_EQ(f.tokens, "t.txt");
  EXPECT_EQ(f.keys.key, "n.key");
  EXPECT_EQ(f.keys.server_key, "agg.pub");
  EXPECT_FALSE(f.keys.insecure_plaintext);
  f = Parse({"--cluster", "cluster.toml", "--insecure-plaintext", "--insecure-no-auth",
             "--hash-token", "alice"});
  ASSERT_TRUE(CheckNodeFlags(&f).ok());
  EXPECT_EQ(f.defaults.cluster, "cluster.toml");
  EXPECT_TRUE(f.keys.insecure_plaintext);
  EXPECT_TRUE(f.server.insecure_no_auth);
  EXPECT_EQ(f.hash_token, "alice");
  // Nothing given: the server's defaults.
  f = Parse({});
  ASSERT_TRUE(CheckNodeFlags(&f).ok());
  EXPECT_EQ(f.server.listen, "127.0.0.1:7402");
  EXPECT_EQ(f.server.workers, 8);
  EXPECT_EQ(f.server.max_queue, 64);
  EXPECT_EQ(f.server.max_connections, 0u);
  EXPECT_EQ(f.defaults.timeout, "5s");
}

TEST(NodeFlags, RefusalsNameTheFlagTheValueAndWhatToGive) {
  EXPECT_EQ(Check({"--workers", "0"}).message(), "--workers 0: give a number from 1 to 256");
  EXPECT_EQ(Check({"--workers", "257"}).message(), "--workers 257: give a number from 1 to 256");
  EXPECT_EQ(Check({"--workers", "8x"}).message(), "--workers 8x: give a number from 1 to 256");
  EXPECT_EQ(Check({"--max-queue", "-1"}).message(),
            "--max-queue -1: give a number from 1 to 100000");
  EXPECT_EQ(Check({"--max-connections", "1000001"}).message(),
            "--max-connections 1000001: give a number from 1 to 1000000");
  EXPECT_EQ(Check({"--stream-keepalive", "5ms"}).message(),
            "--stream-keepalive 5ms: give a duration from 10ms to 1h");
  EXPECT_EQ(Check({"--stream-keepalive", "2h"}).message(),
            "--stream-keepalive 2h: give a duration from 10ms to 1h");
  EXPECT_EQ(Check({"--timeout", "soon"}).message(), "--timeout soon: give e.g. 5s, 500ms");
  const Status long_timeout = Check({"--timeout", "61s"});
  EXPECT_FALSE(long_timeout.ok());
  EXPECT_EQ(long_timeout.message().rfind("--timeout", 0), 0u) << long_timeout.message();
  EXPECT_EQ(Check({"--tokens", "t.txt", "--insecure-no-auth"}).message(),
            "--tokens and --insecure-no-auth: give one");
  EXPECT_THROW(Parse({"--no-such-flag"}), CLI::ParseError);
  EXPECT_THROW(Parse({"--workers"}), CLI::ParseError);
}

// The help names every path the API answers: the router's own list (its 404 says it), the live
// stream and the node's counters.
TEST(NodeFlags, TheHelpNamesEveryPathOfTheApi) {
  CLI::App app;
  NodeFlags flags;
  AddNodeFlags(&app, &flags);
  const std::string help = app.help();
  const HttpReply nope = HandleApi("/api/no-such-path", QueryContext{}, ApiOptions{});
  ASSERT_EQ(nope.status, 404u);
  const std::string message = nlohmann::json::parse(nope.body)["error"];
  const std::string prefix = "no such path /api/no-such-path: the API has ";
  ASSERT_EQ(message.rfind(prefix, 0), 0u) << message;
  std::vector<std::string> paths{"/api/heatmap/live", "/api/self", "/metrics"};
  for (size_t at = prefix.size(); at < message.size();) {
    const size_t comma = message.find(", ", at);
    paths.push_back(message.substr(at, comma == std::string::npos ? comma : comma - at));
    at = comma == std::string::npos ? message.size() : comma + 2;
  }
  EXPECT_GE(paths.size(), 13u);
  for (const std::string& path : paths) {
    const bool named = help.find(path + ",") != std::string::npos ||
                       help.find(path + " ") != std::string::npos ||
                       help.find(path + "\n") != std::string::npos;
    EXPECT_TRUE(named) << path << " is not in --help:\n" << help;
  }
  // And says when the cluster file is read.
  EXPECT_NE(help.find("read at start and again"), std::string::npos);
}

TEST(NodeFlags, TheClusterFileReadAgainIsTheOneTheClusterCameFrom) {
  QueryContext base;
  ViewRequest defaults;
  EXPECT_EQ(NodeClusterPath(defaults, base), "");
  base.env_cluster = "/etc/trailmap/cluster.toml";
  EXPECT_EQ(NodeClusterPath(defaults, base), "/etc/trailmap/cluster.toml");
  defaults.aggregators = "a,b";  // the list overrides $TRAILMAP_CLUSTER: no file to read again
  EXPECT_EQ(NodeClusterPath(defaults, base), "");
  defaults.aggregators.clear();
  defaults.cluster = "mine.toml";
  EXPECT_EQ(NodeClusterPath(defaults, base), "mine.toml");
}

}  // namespace
}  // namespace trailmap
