// Bounded work against real processes on loopback: a trailmap-aggregator answering on
// a pool of query workers, the real CLI and trailmap-query.
//
// - The ReDoS predicate `host =~ "(a+)+$"` over a host named "aaaa...a!" (26 letters; 7.5 s under
//   std::regex) is answered well within its deadline while another client's plain query is
//   answered; a pattern RE2 refuses is a usage error naming it.
// - A query over its budget (--max-keys) is refused with the exact message.
// - A slow query (failpoint query.hold.held.metric holds it as a long scan would) holds up
//   neither a second query nor ingest, and ends at its deadline with the exact message.
// - SIGTERM while every query worker is busy: the aggregator exits within a second.
// - trailmap-query with --tokens: 401 without or with a wrong token, 200 with the right one;
//   each 401 counted in its own /api/self, which `trailmap cluster --query-node` shows; SIGHUP
//   reads the token file again (a broken one is refused with its line).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <cstdio>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "core/query_wire.h"
#include "core/sha256.h"
#include "tests/cluster.h"
#include "tests/http_client.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const std::string kRedosHost = std::string(26, 'a') + "!";
constexpr const char* kHeld = "held.metric";  // its queries hold (failpoint) until a deadline

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

class BoundedQuerySystem : public ::testing::Test {
 protected:
  void SetUp() override {
    // The failpoint holds every query of kHeld before its scan (aggregator/server/query_server.h); the
    // aggregator reads the variable from its environment.
    setenv("TRAILMAP_FAILPOINTS", (std::string("query.hold.") + kHeld + "=error").c_str(), 1);
    agg_ = std::make_unique<Aggregator>(
        dir_, "agg-1", std::vector<std::string>{"--no-self-metrics", "--query-workers", "4"});
    agg_->Start();
    unsetenv("TRAILMAP_FAILPOINTS");
    now_ = std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
               .count();
    t0_ = (now_ - 600) / 60 * 60;
    for (const std::string& host : {kRedosHost, std::string("web-1")}) Import(host, t0_);
  }

  // 60 seconds of events of disk.latency for `host` from `t0`, 3 a second.
  void Import(const std::string& host, int64_t t0) {
    std::string trace = "time latency\n";
    for (int s = 0; s < 60; ++s) {
      for (int i = 0; i < 3; ++i) {
        trace += std::to_string((t0 + s) * 1'000'000 + i * 1000) + " " + std::to_string(100 + i) + "\n";
      }
    }
    const std::string file = dir_ / (host + ".trace");
    WriteFile(file, trace);
    const CommandResult r = RunProgram({Binary("trailmap"), "import", "--quiet", "--host", host,
                                        "--metric", "disk.latency", "--time-unit", "us",
                                        "--value-unit", "us", "--ingest", agg_->ingest(), file});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err << agg_->Log();
  }

  CommandResult Stats(std::vector<std::string> extra) {
    std::vector<std::string> args = {"stats", "--metric", "disk.latency", "--by", "host",
                                     "--from", std::to_string(t0_), "--to",
                                     std::to_string(t0_ + 60), "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Cli(args, agg_->query());
  }

  // `trailmap heatmap --by host` at 1 s: it reads every host-second's key of `hist`.
  CommandResult Heatmap(int64_t seconds, std::vector<std::string> extra) {
    std::vector<std::string> args = {"heatmap", "--metric", "disk.latency", "--by", "host",
                                     "--step", "1s", "--from", std::to_string(t0_), "--to",
                                     std::to_string(t0_ + seconds), "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Cli(args, agg_->query());
  }

  // Waits until the aggregator has logged `n` held queries (the failpoint's log line).
  bool WaitHeld(size_t n) {
    return WaitFor(
        [this, n] {
          const std::string log = agg_->Log();
          size_t held = 0;
          for (size_t at = log.find("holds a query"); at != std::string::npos;
               at = log.find("holds a query", at + 1)) {
            ++held;
          }
          return held >= n;
        },
        20s);
  }

  // The hosts of a stats document, with their counts.
  static std::map<std::string, int> Hosts(const std::string& json) {
    std::map<std::string, int> hosts;
    const nlohmann::json document = nlohmann::json::parse(json);
    for (const auto& row : document["rows"]) {
      hosts[row["group"].get<std::string>()] = row["count"].get<int>();
    }
    return hosts;
  }

  TempDir dir_;
  std::unique_ptr<Aggregator> agg_;
  int64_t now_ = 0, t0_ = 0;
};

TEST_F(BoundedQuerySystem, RedosPatternIsAnsweredWhileAPlainQueryIsServed) {
  const auto start = Clock::now();
  auto redos = std::async(std::launch::async, [this] {
    return Stats({"--where", "host =~ \"(a+)+$\"", "--timeout", "5s"});
  });
  const CommandResult plain = Stats({"--timeout", "5s"});
  const CommandResult matched = redos.get();
  const double ms = MsSince(start);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(Hosts(plain.out), (std::map<std::string, int>{{kRedosHost, 180}, {"web-1", 180}}));
  // No host matches (the '!'), and RE2 says so in linear time: answered, not timed out.
  ASSERT_EQ(matched.exit_code, 0) << matched.err;
  EXPECT_TRUE(Hosts(matched.out).empty()) << matched.out;
  EXPECT_LT(ms, 5000) << "both answered within the 5 s deadline";
  // A pattern that matches it, and one RE2 refuses: a usage error naming the pattern.
  EXPECT_EQ(Hosts(Stats({"--where", "host =~ \"(a+)+!\""}).out),
            (std::map<std::string, int>{{kRedosHost, 180}}));
  const CommandResult refused = Stats({"--where", "host =~ \"(a)\\\\1\""});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.err,
            "trailmap stats: --where: column 9: bad regular expression \"(a)\\1\": invalid escape "
            "sequence: \\1 (RE2 syntax, see docs/predicates.md)\n");
}

TEST_F(BoundedQuerySystem, TooExpensiveQueryIsRefusedWithItsMessage) {
  // 2 hosts x 60 seconds at 1 s: 120 keys of `hist`; the client asks for at most 100.
  const CommandResult r = Heatmap(60, {"--max-keys", "100"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.err, "trailmap heatmap: tcp://" + agg_->query() +
                       ": query over budget: it read more than 100 stored keys (max_keys); narrow "
                       "it: a larger --step (coarser rollups) or a shorter range\n");
  // A shorter range fits: 60 keys.
  const CommandResult narrowed = Heatmap(30, {"--max-keys", "100"});
  ASSERT_EQ(narrowed.exit_code, 0) << narrowed.err;
  EXPECT_EQ(nlohmann::json::parse(narrowed.out)["total"], 180);
  EXPECT_NE(agg_->Log().find("query over budget: it read more than 100 stored keys"),
            std::string::npos);
  // `trailmap flame` takes the same budget: a region's band count reads those 120 keys too, and
  // its advice names what a flame graph has (no --step).
  const std::string t0 = std::to_string(t0_), t60 = std::to_string(t0_ + 60);
  const CommandResult flame =
      Cli({"flame", "--metric", "disk.latency", "--from", t0, "--to", t60, "--region",
           t0 + ".." + t60 + ",0ms..1s", "--max-keys", "100", "--format", "json"},
          agg_->query());
  EXPECT_EQ(flame.exit_code, 2) << flame.out;
  EXPECT_EQ(flame.err, "trailmap flame: tcp://" + agg_->query() +
                           ": query over budget: it read more than 100 stored keys (max_keys); "
                           "narrow it: a shorter range or fewer hosts (--hosts, --where), or ask "
                           "for more (--max-keys, --max-cells, up to the aggregator's [queries] "
                           "limits)\n");
}

TEST_F(BoundedQuerySystem, SlowQueryHoldsUpNeitherAnotherQueryNorIngest) {
  std::atomic<bool> held_done{false};
  auto held = std::async(std::launch::async, [this, &held_done] {
    CommandResult r = Cli({"stats", "--metric", kHeld, "--timeout", "4s"}, agg_->query());
    held_done = true;
    return r;
  });
  ASSERT_TRUE(WaitHeld(1)) << agg_->Log();
  // Meanwhile a plain query is answered, while the held one still waits.
  const CommandResult plain = Stats({"--timeout", "2s"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(Hosts(plain.out).size(), 2u);
  // Ingest too: a new host's batches are applied and queryable.
  Import("web-2", t0_);
  const CommandResult after = Stats({"--timeout", "2s"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(Hosts(after.out).at("web-2"), 180);
  EXPECT_FALSE(held_done) << "the held query ended before the others were answered";
  // The held query stops at its deadline (9/10 of --timeout) and says which limit it hit.
  const CommandResult r = held.get();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "trailmap stats: tcp://" + agg_->query() +
                       ": query over budget: not answered within its deadline of 3600 ms "
                       "(deadline); narrow it: a larger --step, fewer hosts (--where, --hosts) or "
                       "a shorter range\n");
}

TEST_F(BoundedQuerySystem, SigtermWhileEveryWorkerIsBusyStopsWithinASecond) {
  // Five held queries for four workers (the fifth waits in the queue), each allowed a minute.
  zmq::context_t context;
  std::vector<zmq::socket_t> clients;
  for (int i = 0; i < 5; ++i) {
    clients.emplace_back(context, zmq::socket_type::dealer);
    clients.back().set(zmq::sockopt::linger, 0);
    UseTestKeys(clients.back());
    clients.back().connect("tcp://" + agg_->query());
    Query q;
    q.id = static_cast<uint64_t>(i + 1);
    q.kind = Query::Kind::kStacks;
    q.stacks.metric = kHeld;
    q.stacks.from = t0_;
    q.stacks.to = t0_ + 60;
    q.limits.deadline_ms = 60'000;
    clients.back().send(zmq::buffer(EncodeQuery(q)), zmq::send_flags::none);
  }
  ASSERT_TRUE(WaitHeld(4)) << agg_->Log();
  const auto start = Clock::now();
  agg_->process().Kill(SIGTERM);
  const int code = agg_->process().Wait(5s);
  const double ms = MsSince(start);
  EXPECT_EQ(code, 0) << agg_->Log();
  EXPECT_LT(ms, 1000) << "SIGTERM to exit\n" << agg_->Log();
  std::printf("SIGTERM to exit with 4 workers held and 1 query queued: %.0f ms\n", ms);
  EXPECT_NE(agg_->Log().find("stopped: "), std::string::npos) << agg_->Log();
}

TEST_F(BoundedQuerySystem, TrailmapQueryNeedsABearerToken) {
  const std::string token = "correct horse battery staple";
  WriteFile(dir_ / "tokens.txt", "# name sha256\nops " + Sha256Hex(token) + "\n");
  const int port = FreePort();
  Process node({Binary("trailmap-query"), "--listen", "127.0.0.1:" + std::to_string(port),
                "--aggregators", agg_->query(), "--tokens", dir_ / "tokens.txt"},
               dir_.path(), "trailmap-query");
  ASSERT_TRUE(WaitFor([port] { return HttpGet(port, "/").status == 200; }, 10s)) << node.Stderr();
  const std::string target = "/api/stats?metric=disk.latency&by=host&format=json&from=" +
                             std::to_string(t0_) + "&to=" + std::to_string(t0_ + 60);
  const HttpResult none = HttpGet(port, target);
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.www_authenticate, "Bearer realm=\"trailmap\"");
  EXPECT_EQ(nlohmann::json::parse(none.body)["error"],
            "this API needs a bearer token: send the header \"Authorization: Bearer TOKEN\" with "
            "a token whose SHA-256 is in trailmap-query's --tokens file");
  const HttpResult wrong = HttpGet(port, target, "Bearer correct horse");
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(nlohmann::json::parse(wrong.body)["error"],
            "the bearer token is not one this trailmap-query accepts");
  const HttpResult right = HttpGet(port, target, "Bearer " + token);
  ASSERT_EQ(right.status, 200) << right.body;
  EXPECT_EQ(right.body, Stats({}).out);
  // The page itself is served without a token (it asks for one); a refused pattern is a 400.
  EXPECT_EQ(HttpGet(port, "/").status, 200);
  const HttpResult refused =
      HttpGet(port, target + "&where=" + UrlEncode("host =~ \"(?=a)\""), "Bearer " + token);
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(nlohmann::json::parse(refused.body)["error"],
            "--where: column 9: bad regular expression \"(?=a)\": invalid perl operator: (?= "
            "(RE2 syntax, see docs/predicates.md)");
  // Its own counters (GET /api/self, behind the token): the two 401s above, then three more.
  auto self = [&] {
    const HttpResult r = HttpGet(port, "/api/self", "Bearer " + token);
    EXPECT_EQ(r.status, 200) << r.body;
    return nlohmann::json::parse(r.body, nullptr, false);
  };
  const nlohmann::json before = self();
  EXPECT_EQ(before["program"], "trailmap-query") << before.dump();
  EXPECT_EQ(before["unauthorized"], 2) << before.dump();
  EXPECT_EQ(before["client_errors"], 3) << before.dump();  // and the refused pattern's 400
  for (int i = 0; i < 3; ++i) EXPECT_EQ(HttpGet(port, "/api/self", "Bearer wrong").status, 401);
  EXPECT_EQ(HttpGet(port, "/api/self").status, 401);
  const nlohmann::json after = self();
  EXPECT_EQ(after["unauthorized"], 6) << after.dump();
  EXPECT_EQ(after["client_errors"], 7) << after.dump();
  EXPECT_EQ(after["server_errors"], 0) << after.dump();
  EXPECT_EQ(after["requests"].get<uint64_t>() - before["requests"].get<uint64_t>(), 5u);
  EXPECT_GT(after["process"]["rss_bytes"].get<uint64_t>(), 0u) << after.dump();

  // `trailmap cluster --query-node URL --token-file FILE` shows the same counters: as JSON, then
  // as a line of text (each asking once more), and names the node when it refuses the token.
  const std::string token_file = dir_ / "ops.token";
  WriteFile(token_file, token + "\n");
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  const uint64_t requests = after["requests"].get<uint64_t>();
  CommandResult shown =
      Cli({"cluster", "--format", "json", "--query-node", url, "--token-file", token_file},
          agg_->query());
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const nlohmann::json counters = nlohmann::json::parse(shown.out, nullptr, false)["query_node"];
  EXPECT_EQ(counters["url"], url) << shown.out;
  EXPECT_EQ(counters["state"], "up");
  EXPECT_EQ(counters["requests"], requests + 1);
  EXPECT_EQ(counters["unauthorized"], 6);
  EXPECT_EQ(counters["client_errors"], 7);
  EXPECT_EQ(counters["server_errors"], 0);
  EXPECT_GE(counters["uptime_seconds"].get<uint64_t>(), after["uptime_seconds"].get<uint64_t>());
  EXPECT_GT(counters["rss_bytes"].get<uint64_t>(), 0u);
  shown = Cli({"cluster", "--query-node", url, "--token-file", token_file}, agg_->query());
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("query node " + url + ": up "), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find(", " + std::to_string(requests + 2) +
                           " requests, 6 unauthorized (401), 7 client errors (4xx), 0 server "
                           "errors (5xx), RSS "),
            std::string::npos)
      << shown.out;
  WriteFile(token_file, "not the token\n");
  shown = Cli({"cluster", "--query-node", url, "--token-file", token_file}, agg_->query());
  EXPECT_EQ(shown.exit_code, 3) << shown.out << shown.err;
  EXPECT_NE(
      shown.err.find("query node " + url + ": 401: it does not accept the token in --token-file"),
      std::string::npos)
      << shown.err;

  // SIGHUP reads the token file again: the old token is refused from then on and the new one
  // admitted; a file that does not parse is refused with its line, and the tokens stay.
  const std::string tokens = dir_ / "tokens.txt";
  const std::string next = "tr0ub4dor&3";
  auto logged = [&](const std::string& text) {
    return WaitFor([&] { return node.Stderr().find(text) != std::string::npos; }, 10s);
  };
  WriteFile(tokens, "ops2 " + Sha256Hex(next) + "\n");
  node.Kill(SIGHUP);
  ASSERT_TRUE(logged("SIGHUP: token file " + tokens + " read again: 1 tokens (were 1)"))
      << node.Stderr();
  EXPECT_EQ(HttpGet(port, target, "Bearer " + token).status, 401);
  EXPECT_EQ(HttpGet(port, target, "Bearer " + next).status, 200);
  WriteFile(tokens, "ops2 " + Sha256Hex(next) + "\nbroken\n");
  node.Kill(SIGHUP);
  ASSERT_TRUE(logged("; kept the 1 tokens as they were")) << node.Stderr();
  EXPECT_NE(node.Stderr().find("SIGHUP: " + tokens + ":2: "), std::string::npos) << node.Stderr();
  EXPECT_EQ(HttpGet(port, target, "Bearer " + next).status, 200);
  EXPECT_EQ(HttpGet(port, target, "Bearer " + token).status, 401);

  // Without --tokens, an address that is not loopback needs --insecure-no-auth.
  const CommandResult open = RunProgram({Binary("trailmap-query"), "--listen", "0.0.0.0:" +
                                         std::to_string(FreePort()), "--aggregators", agg_->query()});
  EXPECT_EQ(open.exit_code, 2);
  EXPECT_NE(open.err.find("not a loopback address, and the API would be open to anyone who "
                          "reaches it: give --tokens FILE (bearer tokens), or --insecure-no-auth"),
            std::string::npos)
      << open.err;
}

}  // namespace
}  // namespace trailmap::test
