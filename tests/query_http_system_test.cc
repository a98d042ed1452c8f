// trailmap-query against a real cluster on loopback: two aggregators holding imported latency
// events and stacks, the real trailmap-query process, and HTTP requests made here (a small
// Boost.Beast client). Every endpoint's body is what `trailmap ... --format json` prints for the
// same parameters, byte for byte; usage errors are 400 with the CLI's message; a killed
// aggregator gives 206 with the partial document naming it, then 502 when none answers; a request
// waiting on a silent shard does not hold up another.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <random>

#include "tests/cluster.h"
#include "tests/http_client.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

// A CLI command and the same as an HTTP target: {"heatmap", {{"metric", "m"}, {"per-column",
// ""}}} is `trailmap heatmap --metric m --per-column` and /api/heatmap?metric=m&per-column.
struct Call {
  std::string view;
  std::vector<std::pair<std::string, std::string>> params;

  std::vector<std::string> CliArgs() const {
    std::vector<std::string> args = {view};
    for (const auto& [name, value] : params) {
      args.push_back("--" + name);
      if (!value.empty()) args.push_back(value);
    }
    return args;
  }
  std::string Target() const {
    std::string target = "/api/" + view;
    char sep = '?';
    for (const auto& [name, value] : params) {
      target += sep + UrlEncode(name) + (value.empty() ? "" : "=" + UrlEncode(value));
      sep = '&';
    }
    return target;
  }
};

class QueryHttpSystem : public ::testing::Test {
 protected:
  void SetUp() override {
    // Without self-metrics: their catalog grows while the test runs (query.latency appears after
    // the first query), so the metrics document could differ between the CLI's call and the
    // page's by a second.
    for (const char* name : {"agg-1", "agg-2"}) {
      aggs_.push_back(
          std::make_unique<Aggregator>(dir_, name, std::vector<std::string>{"--no-self-metrics"}));
    }
    for (auto& a : aggs_) a->Start();
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    t0_ = (now - 3600) / 60 * 60;
    // Two hosts (one per shard at most: rendezvous placement decides) with a field each, 120 s
    // of events.
    std::mt19937_64 rng(7);
    std::lognormal_distribution<double> latency(std::log(2000.0), 0.8);  // us
    std::uniform_int_distribution<int64_t> when(0, 120'000'000 - 1);
    for (const auto& [host, op] : {std::pair{"db-1", "read"}, std::pair{"db-2", "write"}}) {
      std::string trace = "time latency\n";
      for (int i = 0; i < 3000; ++i) {
        trace += std::to_string(t0_ * 1'000'000 + when(rng)) + " " +
                 std::to_string(1 + static_cast<uint64_t>(latency(rng))) + "\n";
      }
      const std::string file = dir_ / (std::string(host) + ".trace");
      WriteFile(file, trace);
      CommandResult r =
          RunProgram({Binary("trailmap"), "import", "--quiet", "--host", host, "--metric",
                      "disk.latency", "--time-unit", "us", "--value-unit", "us", "--field",
                      std::string("op=") + op, "--ingest", IngestList(aggs_), file});
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    }
    WriteFile(dir_ / "db-1.folded", "main;work;burn_slow 50\nmain;idle 10\n");
    CommandResult r =
        RunProgram({Binary("trailmap"), "import", "--quiet", "--stacks", "--host", "db-1", "--time",
                    std::to_string(t0_ + 10), "--ingest", IngestList(aggs_), dir_ / "db-1.folded"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

    port_ = FreePort();
    server_ =
        std::make_unique<Process>(std::vector<std::string>{Binary("trailmap-query"), "--listen",
                                                           "127.0.0.1:" + std::to_string(port_),
                                                           "--aggregators", QueryList(aggs_)},
                                  dir_.path(), "trailmap-query");
    ASSERT_TRUE(WaitFor([this] { return HttpGet(port_, "/api/nothing").status == 404; }, 10s))
        << server_->Stderr();
  }

  std::string From() const { return std::to_string(t0_); }
  std::string To() const { return std::to_string(t0_ + 120); }

  TempDir dir_;
  std::vector<std::unique_ptr<Aggregator>> aggs_;
  int64_t t0_ = 0;
  int port_ = 0;
  std::unique_ptr<Process> server_;
};

TEST_F(QueryHttpSystem, EveryEndpointAnswersWhatTheCliPrints) {
  const std::vector<Call> calls = {
      {"heatmap",
       {{"metric", "disk.latency"},
        {"from", From()},
        {"to", To()},
        {"rows", "20"},
        {"step", "10s"},
        {"coloring", "linear"},
        {"per-column", ""}}},
      {"heatmap",
       {{"metric", "disk.latency"},
        {"from", From()},
        {"to", To()},
        {"by", "op"},
        {"where", "latency > 1ms"},
        {"overlay", "p50,p99"}}},
      {"heatmap",
       {{"metric", "disk.latency"},
        {"from", From()},
        {"to", To()},
        {"step", "10s"},
        {"ymax", "10ms"},
        {"at", std::to_string(t0_ + 15) + ",1ms"}}},
      {"columns", {{"metric", "disk.latency"}, {"from", From()}, {"to", To()}, {"sort", "p99"}}},
      {"trails",
       {{"metric", "disk.latency"}, {"from", From()}, {"to", To()}, {"range", "0..20ms"}}},
      {"line",
       {{"metric", "disk.latency"},
        {"from", From()},
        {"to", To()},
        {"by", "host"},
        {"stat", "max"},
        {"step", "10"}}},
      {"stats", {{"metric", "disk.latency"}, {"from", From()}, {"to", To()}, {"by", "host"}}},
      {"flame", {{"metric", "cpu.stacks"}, {"from", From()}, {"to", To()}, {"by", "host"}}},
      {"flame",
       {{"metric", "disk.latency"},
        {"from", From()},
        {"to", To()},
        {"region", From() + ".." + To() + ",1ms..100ms"},
        {"differential", ""}}},
      {"outliers", {{"metric", "disk.latency"}, {"from", From()}, {"to", To()}}},
      {"metrics", {}},
      {"fields", {{"metric", "disk.latency"}, {"from", From()}, {"to", To()}}},
  };
  for (const Call& call : calls) {
    SCOPED_TRACE(call.Target());
    std::vector<std::string> args = call.CliArgs();
    args.insert(args.end(), {"--format", "json"});
    const CommandResult cli = Cli(args, QueryList(aggs_));
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    const HttpResult got = HttpGet(port_, call.Target());
    EXPECT_EQ(got.status, 200) << got.body;
    EXPECT_EQ(got.content_type, "application/json");
    EXPECT_EQ(got.body, cli.out);
  }
  // The documents hold what was imported: 6,000 events, two hosts, the burning function.
  const auto stats = nlohmann::json::parse(HttpGet(port_, calls[6].Target()).body);
  ASSERT_EQ(stats["rows"].size(), 2u);
  EXPECT_EQ(stats["rows"][0]["count"].get<int>() + stats["rows"][1]["count"].get<int>(), 6000);
  EXPECT_NE(HttpGet(port_, calls[7].Target()).body.find("burn_slow"), std::string::npos);
  // Region -> code: db-1's stacks (the only ones) weighted by its events in the band.
  const auto region = nlohmann::json::parse(HttpGet(port_, calls[8].Target()).body);
  EXPECT_NE(region.dump().find("burn_slow"), std::string::npos);
  EXPECT_GT(region["region"]["events"].get<int>(), 0);
  EXPECT_EQ(region["region"]["differential"], true);

  // SVG and PNG on the same endpoint: the CLI's bytes too.
  for (const char* format : {"svg", "png"}) {
    Call call = calls[0];
    call.params.emplace_back("format", format);
    const CommandResult cli = Cli(call.CliArgs(), QueryList(aggs_));
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    const HttpResult got = HttpGet(port_, call.Target());
    EXPECT_EQ(got.status, 200);
    EXPECT_EQ(got.content_type, std::string(format) == "svg" ? "image/svg+xml" : "image/png");
    EXPECT_EQ(got.body, cli.out) << format;
  }
}

TEST_F(QueryHttpSystem, UsageErrorsAre400WithTheCliMessage) {
  const std::vector<Call> bad = {
      {"heatmap", {{"metric", "disk.latency"}, {"from", "yesterday"}}},
      {"heatmap", {{"metric", "disk.latency"}, {"step", "10s"}, {"cols", "5"}}},
      {"heatmap", {{"metric", "disk.latency"}, {"where", "latency >"}}},
      {"columns", {{"metric", "disk.latency"}, {"sort", "p42"}}},
      {"stats", {{"metric", "disk.latency"}, {"by", "host"}, {"clip", "x"}}},
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    const Call& call = bad[i];
    SCOPED_TRACE(call.Target());
    const HttpResult got = HttpGet(port_, call.Target());
    EXPECT_EQ(got.status, 400) << got.body;
    EXPECT_EQ(got.content_type, "application/json");
    const std::string error = nlohmann::json::parse(got.body).at("error");
    if (i + 1 == bad.size()) {  // stats has no --clip: CLI11 refuses it with its own words
      EXPECT_EQ(error, "unknown parameter clip for /api/stats");
      continue;
    }
    const CommandResult cli = Cli(call.CliArgs(), QueryList(aggs_));
    EXPECT_EQ(cli.exit_code, 2);
    EXPECT_EQ("trailmap " + call.view + ": " + error + "\n", cli.err);
  }
}

TEST_F(QueryHttpSystem, KilledAggregatorGives206ThenNoneGives502) {
  const Call call{"heatmap",
                  {{"metric", "disk.latency"},
                   {"from", From()},
                   {"to", To()},
                   {"step", "10s"},
                   {"timeout", "700ms"}}};
  const std::string full = HttpGet(port_, call.Target()).body;
  aggs_[1]->KillHard();
  const std::string silent = "tcp://" + aggs_[1]->query();

  // A request that waits out its timeout on the dead shard does not hold up another one: the
  // quick one (a usage error) is answered while the slow one is in flight.
  Call slow = call;
  slow.params.back().second = "3s";
  const auto slow_start = std::chrono::steady_clock::now();
  HttpCall waiting(port_, slow.Target());
  const HttpResult quick = HttpGet(port_, "/api/heatmap?metric=disk.latency&from=yesterday");
  const auto quick_took = std::chrono::steady_clock::now() - slow_start;
  EXPECT_EQ(quick.status, 400);
  EXPECT_LT(quick_took, 2s);
  const HttpResult waited = waiting.Receive();
  EXPECT_EQ(waited.status, 206);
  EXPECT_GE(std::chrono::steady_clock::now() - slow_start, 3s);

  const HttpResult partial = HttpGet(port_, call.Target());
  EXPECT_EQ(partial.status, 206) << partial.body;
  EXPECT_NE(partial.missing.find(silent), std::string::npos) << partial.missing;
  const auto j = nlohmann::json::parse(partial.body);
  ASSERT_EQ(j["missing_shards"].size(), 1u);
  EXPECT_NE(j["missing_shards"][0].get<std::string>().find(silent), std::string::npos);
  EXPECT_LE(j["total"].get<int>(), nlohmann::json::parse(full)["total"].get<int>());
  std::vector<std::string> args = call.CliArgs();
  args.insert(args.end(), {"--format", "json"});
  const CommandResult cli = Cli(args, QueryList(aggs_));
  EXPECT_EQ(cli.exit_code, 3);
  EXPECT_EQ(partial.body, cli.out);

  aggs_[0]->KillHard();
  const HttpResult none = HttpGet(port_, call.Target());
  EXPECT_EQ(none.status, 502) << none.body;
  const std::string error = nlohmann::json::parse(none.body).at("error");
  EXPECT_EQ(error.rfind("no aggregator answered:", 0), 0u) << error;
  EXPECT_NE(error.find(silent), std::string::npos) << error;
  EXPECT_NE(error.find("tcp://" + aggs_[0]->query()), std::string::npos) << error;
}

// `trailmap cluster`: both aggregators up, by name, holding the watermarks of the three imports
// (each import is an agent of its own); one killed is listed down, named in missing_shards, exit 3.
TEST_F(QueryHttpSystem, ClusterListsEveryAggregatorAndItsHealth) {
  CommandResult cli = Cli({"cluster", "--format", "json"}, QueryList(aggs_));
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  auto j = nlohmann::json::parse(cli.out);
  ASSERT_EQ(j["members"].size(), 2u) << cli.out;
  EXPECT_EQ(j["members"][0]["name"], "agg-1");
  EXPECT_EQ(j["members"][1]["name"], "agg-2");
  int agents = 0, hosts = 0;
  for (const auto& m : j["members"]) {
    EXPECT_EQ(m["state"], "up");
    EXPECT_EQ(m["error"], "");
    EXPECT_EQ(m["epoch"], "current");
    EXPECT_GT(m["disk_bytes"].get<uint64_t>(), 0u);
    agents += m["agents"].get<int>();
    hosts += m["hosts"].get<int>();
  }
  EXPECT_EQ(agents, 3);
  EXPECT_EQ(hosts, 2);  // db-1 and db-2 (imported twice), each on its one owner
  EXPECT_EQ(j["replication"], 1);
  EXPECT_TRUE(j["missing_shards"].empty());
  cli = Cli({"cluster"}, QueryList(aggs_));
  EXPECT_EQ(
      cli.out.rfind("replication 1, epoch 1 of 1\naggregator  zone  epoch    state  hosts   "
                    "agents  ingest lag  disk       rollups behind  refused  limited  error\nagg-1",
                    0),
      0u)
      << cli.out;

  aggs_[1]->KillHard();
  cli = Cli({"cluster", "--format", "json", "--timeout", "700ms"}, QueryList(aggs_));
  EXPECT_EQ(cli.exit_code, 3) << cli.err;
  j = nlohmann::json::parse(cli.out);
  ASSERT_EQ(j["members"].size(), 2u);
  EXPECT_EQ(j["members"][0]["name"], "agg-1");
  EXPECT_EQ(j["members"][1]["name"], "tcp://" + aggs_[1]->query());
  EXPECT_EQ(j["members"][1]["state"], "down");
  ASSERT_EQ(j["missing_shards"].size(), 1u);
  EXPECT_NE(cli.err.find(aggs_[1]->query()), std::string::npos) << cli.err;
}

TEST_F(QueryHttpSystem, LiveHeatmapStreamsEachSecondsColumn) {
  // A range that ends a minute into the imported two: the seconds after it are complete already,
  // so the stream sends them at once, each with the counts the CLI gives for that second alone.
  const std::string to = std::to_string(t0_ + 60);
  const Call call{
      "heatmap",
      {{"metric", "disk.latency"}, {"from", From()}, {"to", to}, {"rows", "10"}, {"ymax", "10ms"}}};
  const HttpResult live =
      HttpGet(port_, "/api/heatmap/live" + call.Target().substr(12) + "&events=3");
  ASSERT_EQ(live.status, 200) << live.body;
  EXPECT_EQ(live.content_type, "text/event-stream");
  std::vector<std::pair<std::string, nlohmann::json>> events;
  for (size_t at = 0; at < live.body.size();) {
    const size_t end = live.body.find("\n\n", at);
    ASSERT_NE(end, std::string::npos) << live.body.substr(at);
    const std::string chunk = live.body.substr(at, end - at);
    const size_t newline = chunk.find('\n');
    ASSERT_EQ(chunk.rfind("event: ", 0), 0u) << chunk;
    ASSERT_EQ(chunk.compare(newline + 1, 6, "data: "), 0) << chunk;
    events.emplace_back(chunk.substr(7, newline - 7),
                        nlohmann::json::parse(chunk.substr(newline + 7)));
    at = end + 2;
  }
  ASSERT_EQ(events.size(), 4u) << live.body;
  EXPECT_EQ(events[0].first, "heatmap");
  EXPECT_EQ(events[0].second, nlohmann::json::parse(HttpGet(port_, call.Target()).body));
  uint64_t total = 0;
  for (int n = 0; n < 3; ++n) {
    const auto& [name, data] = events[1 + n];
    EXPECT_EQ(name, "column");
    const int64_t second = t0_ + 60 + n;
    EXPECT_EQ(data["time"].get<int64_t>(), second);
    const CommandResult cli =
        Cli({"heatmap", "--metric", "disk.latency", "--from", std::to_string(second), "--to",
             std::to_string(second + 1), "--rows", "10", "--ymax", "10ms", "--format", "json"},
            QueryList(aggs_));
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    const auto one = nlohmann::json::parse(cli.out);
    std::vector<uint64_t> counts;
    for (const auto& row : one["counts"]) counts.push_back(row[0].get<uint64_t>());
    EXPECT_EQ(data["counts"].get<std::vector<uint64_t>>(), counts);
    EXPECT_EQ(data["total"], one["total"]);
    total += data["total"].get<uint64_t>();
  }
  EXPECT_GT(total, 0u);  // 6,000 events over 120 s: about 50 a second
}

}  // namespace
}  // namespace trailmap::test
