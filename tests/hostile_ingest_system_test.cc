// Hostile and careless clients on the aggregator's and the agent's side, with real processes on
// loopback:
//   - the clients file emptied on disk (an editor that truncates before it writes) and reloaded
//     with SIGHUP is refused, counted and logged, and the agent's batches keep arriving; a key
//     really removed for a while (or every key, forced) makes the agent hold its batches and
//     retry them, and once the key is back the aggregator holds exactly the events produced;
//   - the other files daemons read again on SIGHUP (the cluster file), emptied or garbled, are
//     refused the same way;
//   - a query whose metric name does not validate (bytes 0xff, NUL, CR/LF, 10,000 characters) is
//     answered with an error that carries its id, so the fan-out returns the error at once; a
//     message without a readable id is answered with id 0, which the fan-out takes as the error;
//   - a query made with a key that may only ingest is refused with the reason, and the CLI says
//     that the aggregator refused the key (exit 1), not that it did not answer;
//   - statsd metric names made up without end: the agent takes so many new names a minute and
//     so many in all, dropping and counting the rest; the aggregator takes so many new metric
//     names per key, leaving out (and counting) the series of the rest while the batch's other
//     data applies. Exact counts of names and events.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <zmq.hpp>

#include "core/query_wire.h"
#include "query/fetch/fanout.h"
#include "tests/cluster.h"
#include "tests/fault_load.h"
#include "tests/http_client.h"
#include "tests/prometheus_sample.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

constexpr char kMetric[] = "hostile.latency";

// A Prometheus sample of the daemon serving /metrics on `port`; -1 if absent or unreachable.
double Scraped(int port, const std::string& series) {
  return PrometheusSample(HttpGet(port, "/metrics").body, series);
}

// "NAME KEY RIGHTS [HOSTS]\n" for the clients file.
std::string ClientLine(const TestKey& key, const std::string& rights) {
  return key.name + " " + key.public_key + " " + rights + "\n";
}

// One aggregator whose clients file lists the test key (queries) and `web` (ingest web-1), and
// one agent for web-1 sending with web's key; both serve /metrics.
class ClientsReload : public ::testing::Test {
 protected:
  void SetUp() override {
    web_ = MakeKey(dir_.path(), "web");
    clients_ = dir_ / "clients";
    full_ = ClientLine(TestKeys().pair, "query") + ClientLine(web_, "ingest web-1");
    WriteFile(clients_, full_);
    agg_metrics_ = FreePort();
    agent_metrics_ = FreePort();
    aggs_.push_back(std::make_unique<Aggregator>(
        dir_, "agg-1",
        std::vector<std::string>{"--clients", clients_, "--metrics",
                                 "127.0.0.1:" + std::to_string(agg_metrics_)}));
    aggs_[0]->Start();
    ASSERT_TRUE(Logged("started agg-1")) << aggs_[0]->Log();
    agent_ = std::make_unique<Agent>(
        dir_, "web-1", aggs_[0]->ingest(),
        std::vector<std::string>{"--no-proc", "--key", web_.key, "--metrics",
                                 "127.0.0.1:" + std::to_string(agent_metrics_)});
  }

  // Waits for the aggregator to log `text` (10 s at most).
  bool Logged(const std::string& text) {
    return WaitFor([&] { return aggs_[0]->Log().find(text) != std::string::npos; }, 10s);
  }
  // Writes `text` as the clients file and sends SIGHUP; waits for the reload's log line.
  bool Reload(const std::string& text, const std::string& logged) {
    WriteFile(clients_, text);
    aggs_[0]->process().Kill(SIGHUP);
    return Logged(logged);
  }
  double AgentCounter(const std::string& name) {
    return Scraped(agent_metrics_, "trailmap_agent_" + name + "_total");
  }
  // Produces `n` events and waits until the aggregator holds `total`.
  uint64_t ProduceAndWait(size_t n, uint64_t total) {
    SendEvents(agent_->statsd_port(), kMetric, n);
    return WaitForCount(aggs_, kMetric, total, 20s);
  }

  TempDir dir_;
  TestKey web_;
  std::string clients_, full_;
  int agg_metrics_ = 0, agent_metrics_ = 0;
  std::vector<std::unique_ptr<Aggregator>> aggs_;
  std::unique_ptr<Agent> agent_;
};

TEST_F(ClientsReload, EmptiedOrGarbledFileIsRefusedAndNothingIsLost) {
  ASSERT_EQ(ProduceAndWait(400, 400), 400u) << agent_->Log() << aggs_[0]->Log();
  // Truncated (an editor about to write), then a file of blank lines and comments only: both
  // list no key and neither says it means to, so the old list stays. One at a time: signals sent
  // together may arrive as one.
  const std::string refused = "trailmap_aggregator_clients_reloads_refused_total{shard=\"agg-1\"}";
  int reloads = 0;
  for (const std::string& text : {std::string(), std::string("\n\n# nothing yet\n  \n")}) {
    WriteFile(clients_, text);
    aggs_[0]->process().Kill(SIGHUP);
    ++reloads;
    EXPECT_TRUE(WaitFor([&] { return Scraped(agg_metrics_, refused) == reloads; }, 10s))
        << aggs_[0]->Log();
  }
  EXPECT_TRUE(Logged("SIGHUP: clients file " + clients_ +
                     " lists no client key (a file meant to admit no one must hold the line "
                     "\"# trailmap: no clients\"); kept the 2 client keys as they were"))
      << aggs_[0]->Log();
  // Garbage (a half-written line) is refused too, with its line number, and counted.
  ASSERT_TRUE(Reload("web " + web_.public_key.substr(0, 17), clients_ + ":1:")) << aggs_[0]->Log();
  EXPECT_TRUE(WaitFor([&] { return Scraped(agg_metrics_, refused) == 3; }, 10s));
  // The agent's batches still apply: nothing refused, nothing lost.
  EXPECT_EQ(ProduceAndWait(300, 700), 700u) << agent_->Log() << aggs_[0]->Log();
  EXPECT_EQ(AgentCounter("batches_rejected"), 0);
  EXPECT_EQ(AgentCounter("batches_unauthorized"), 0);
}

TEST_F(ClientsReload, KeyRemovedForAWhileLosesNothing) {
  ASSERT_EQ(ProduceAndWait(400, 400), 400u) << agent_->Log() << aggs_[0]->Log();
  // web's key removed: its open connection loses the ingest right, and what the agent produces
  // meanwhile is refused. The agent holds it and retries.
  ASSERT_TRUE(Reload(ClientLine(TestKeys().pair, "query"), "read again: 1 client keys (were 2)"))
      << aggs_[0]->Log();
  SendEvents(agent_->statsd_port(), kMetric, 500);
  EXPECT_TRUE(WaitFor([&] { return AgentCounter("batches_unauthorized") >= 2; }, 10s))
      << agent_->Log();
  EXPECT_EQ(StoredCount(aggs_, kMetric), 400u);
  // Back: everything held arrives, exactly once.
  ASSERT_TRUE(Reload(full_, "read again: 2 client keys (were 1)")) << aggs_[0]->Log();
  EXPECT_EQ(WaitForCount(aggs_, kMetric, 900, 20s), 900u) << agent_->Log() << aggs_[0]->Log();
  EXPECT_EQ(ProduceAndWait(100, 1000), 1000u);
  EXPECT_EQ(AgentCounter("batches_rejected"), 0);
  EXPECT_EQ(AgentCounter("batches_dropped"), 0);
  const std::string log = agent_->Log();
  EXPECT_NE(log.find("refused for its key (key web may not ingest"), std::string::npos) << log;
  EXPECT_NE(log.find("accepted again after"), std::string::npos) << log;

  // Every key removed on purpose (the marker): taken, and again nothing is lost.
  ASSERT_TRUE(Reload("# trailmap: no clients\n", "read again: 0 client keys (were 2)"))
      << aggs_[0]->Log();
  const double before = AgentCounter("batches_unauthorized");
  SendEvents(agent_->statsd_port(), kMetric, 250);
  ASSERT_TRUE(WaitFor([&] { return AgentCounter("batches_unauthorized") >= before + 2; }, 20s))
      << agent_->Log();
  ASSERT_TRUE(Reload(full_, "read again: 2 client keys (were 0)")) << aggs_[0]->Log();
  EXPECT_EQ(WaitForCount(aggs_, kMetric, 1250, 20s), 1250u) << agent_->Log() << aggs_[0]->Log();
  EXPECT_EQ(AgentCounter("batches_rejected"), 0);
  EXPECT_EQ(AgentCounter("batches_dropped"), 0);
  EXPECT_EQ(
      Scraped(agg_metrics_, "trailmap_aggregator_clients_reloads_refused_total{shard=\"agg-1\"}"),
      0);
}

// How many times `text` occurs in `log`.
size_t Occurrences(const std::string& log, const std::string& text) {
  size_t n = 0;
  for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++n;
  return n;
}

// The other files daemons read again on SIGHUP: the cluster file (aggregator and agent) and the
// query node's token file. Emptied or garbled, each is refused and the old one kept, and the
// data keeps flowing.
TEST(OtherReloads, EmptiedOrGarbledClusterAndTokenFilesAreRefused) {
  TempDir dir;
  const std::string file = dir / "cluster.toml";
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(
      dir, "agg-c", std::vector<std::string>{"--cluster", file, "--no-self-metrics"}));
  const std::string good =
      "replication = 1\n[[aggregator]]\nname = \"agg-c\"\nzone = \"a\"\n"
      "ingest = \"" +
      aggs[0]->ingest() + "\"\nquery = \"" + aggs[0]->query() + "\"\n";
  WriteFile(file, good);
  aggs[0]->Start();
  Agent agent(dir, "web-c", "", {"--cluster", file, "--no-proc", "--no-self-metrics"});
  SendEvents(agent.statsd_port(), kMetric, 100);
  ASSERT_EQ(WaitForCount(aggs, kMetric, 100, 20s), 100u) << agent.Log() << aggs[0]->Log();
  const std::string token = "reload test token";
  CommandResult line =
      RunProgram({"/bin/sh", "-c",
                  "printf %s '" + token + "' | " + Binary("trailmap-query") + " --hash-token ops"});
  ASSERT_EQ(line.exit_code, 0) << line.err;
  WriteFile(dir / "tokens", line.out);
  const int port = FreePort();
  Process node({Binary("trailmap-query"), "--listen", "127.0.0.1:" + std::to_string(port),
                "--aggregators", aggs[0]->query(), "--tokens", dir / "tokens"},
               dir.path(), "trailmap-query");
  ASSERT_TRUE(WaitFor([&] { return HttpGet(port, "/").status == 200; }, 10s)) << node.Stderr();
  ASSERT_EQ(HttpGet(port, "/metrics", "Bearer " + token).status, 200);

  const std::vector<std::string> bad = {"", "\n# all gone\n", "replication = [", "ops\n"};
  for (size_t i = 0; i < bad.size(); ++i) {
    WriteFile(file, bad[i]);
    WriteFile(dir / "tokens", bad[i]);
    aggs[0]->process().Kill(SIGHUP);
    agent.process().Kill(SIGHUP);
    node.Kill(SIGHUP);
    const std::string kept = "; kept the cluster as it was";
    EXPECT_TRUE(WaitFor([&] { return Occurrences(aggs[0]->Log(), kept) == i + 1; }, 10s))
        << aggs[0]->Log();
    EXPECT_TRUE(WaitFor([&] { return Occurrences(agent.Log(), kept) == i + 1; }, 10s))
        << agent.Log();
    EXPECT_TRUE(WaitFor(
        [&] { return Occurrences(node.Stderr(), "kept the 1 tokens as they were") == i + 1; }, 10s))
        << node.Stderr();
    EXPECT_EQ(HttpGet(port, "/metrics", "Bearer " + token).status, 200) << i;
  }
  WriteFile(file, good);
  SendEvents(agent.statsd_port(), kMetric, 100);
  EXPECT_EQ(WaitForCount(aggs, kMetric, 200, 20s), 200u) << agent.Log() << aggs[0]->Log();
}

// A histogram query for `metric` over the last minute.
Query HistogramQueryFor(uint64_t id, const std::string& metric) {
  Query q;
  q.id = id;
  q.kind = Query::Kind::kHistograms;
  q.histograms.metric = metric;
  q.histograms.to = UnixNow();
  q.histograms.from = q.histograms.to - 60;
  q.histograms.step = 60;
  return q;
}

// The names an attacker puts in `metric=`: each must be refused by the aggregator at once, with
// the query's id.
std::vector<std::string> NamesThatDoNotValidate() {
  return {"\xff",
          "%ff",
          std::string("disk\0latency", 12),
          "disk\r\nlatency",
          std::string(10'000, 'a'),
          "",
          "disk latency",
          "disk/../latency"};
}

TEST(HostileQueries, AnErrorAnswerCarriesTheQueryIdAndTheFanOutReturnsItAtOnce) {
  TempDir dir;
  Aggregator agg(dir, "agg-q", {"--no-self-metrics"});
  agg.Start();
  ASSERT_TRUE(WaitFor([&] { return agg.Log().find("started agg-q") != std::string::npos; }, 20s))
      << agg.Log();
  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::rcvtimeo, 10'000);
  UseTestKeys(dealer);
  dealer.connect("tcp://" + agg.query());
  auto ask = [&dealer](const std::string& bytes) -> std::optional<Answer> {
    dealer.send(zmq::buffer(bytes), zmq::send_flags::none);
    zmq::message_t reply;
    if (!dealer.recv(reply)) return std::nullopt;
    Result<Answer> answer = DecodeAnswer(reply.to_string_view());
    EXPECT_TRUE(answer.ok()) << answer.status().ToString();
    return answer.ok() ? std::optional<Answer>(*answer) : std::nullopt;
  };
  uint64_t id = 7000;
  for (const std::string& name : NamesThatDoNotValidate()) {
    std::optional<Answer> answer = ask(EncodeQuery(HistogramQueryFor(++id, name)));
    ASSERT_TRUE(answer) << name.size();
    EXPECT_EQ(answer->id, id) << name.size();
    EXPECT_EQ(answer->shard, "agg-q");
    EXPECT_TRUE(answer->error.starts_with("bad query: ")) << answer->error;
  }
  // Stacks and a region's band name metrics too.
  Query stacks;
  stacks.id = ++id;
  stacks.kind = Query::Kind::kStacks;
  stacks.stacks.metric = "cpu\nstacks";
  stacks.stacks.to = UnixNow();
  stacks.stacks.from = stacks.stacks.to - 60;
  std::optional<Answer> answer = ask(EncodeQuery(stacks));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->id, id);
  EXPECT_FALSE(answer->error.empty());
  // No readable id at all: answered with id 0 and the reason.
  for (const std::string& garbage :
       {std::string("not a query"), std::string(64, '\xff'), std::string(8, '\0')}) {
    answer = ask(garbage);
    ASSERT_TRUE(answer) << garbage.size();
    EXPECT_EQ(answer->id, 0u);
    EXPECT_TRUE(answer->error.starts_with("bad query: ")) << answer->error;
  }
  // The fan-out takes the error as that shard's answer: at once, not after its 10 s deadline.
  FanoutOptions options;
  options.curve = TestCurveClient();
  options.deadline = 10s;
  for (const std::string& name : NamesThatDoNotValidate()) {
    const auto began = std::chrono::steady_clock::now();
    FanoutResult r =
        FanOut(context, {"tcp://" + agg.query()}, HistogramQueryFor(++id, name), options);
    EXPECT_LT(std::chrono::steady_clock::now() - began, 2s) << name.size();
    ASSERT_EQ(r.failures.size(), 1u);
    EXPECT_TRUE(r.failures[0].reason.starts_with("error: bad query: ")) << r.failures[0].reason;
  }
  // A good query still answers, on the same aggregator, at once.
  FanoutResult good =
      FanOut(context, {"tcp://" + agg.query()}, HistogramQueryFor(++id, kMetric), options);
  EXPECT_EQ(good.answers.size(), 1u);
  EXPECT_TRUE(good.failures.empty());
}

// A key listed with the ingest right only: its query is refused, and the CLI says so.
TEST(HostileQueries, AQueryWithAnIngestOnlyKeyIsRefusedAndTheCliSaysWhy) {
  TempDir dir;
  const TestKey web = MakeKey(dir.path(), "web");
  const std::string clients = dir / "clients";
  WriteFile(clients, ClientLine(TestKeys().pair, "query") + ClientLine(web, "ingest web-1"));
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(
      dir, "agg-k", std::vector<std::string>{"--clients", clients, "--no-self-metrics"}));
  aggs[0]->Start();
  ASSERT_TRUE(
      WaitFor([&] { return aggs[0]->Log().find("started agg-k") != std::string::npos; }, 20s));
  const std::string refused = "tcp://" + aggs[0]->query() +
                              " refused this key: key web may only ingest, not query: give it "
                              "the query right in the clients file of aggregator agg-k\n";
  const std::string refusal = "trailmap metrics: " + refused;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"metrics"}, {"metrics", "--format", "json"}}) {
    std::vector<std::string> argv = args;
    argv.insert(argv.end(), {"--key", web.key, "--timeout", "10s"});
    const auto began = std::chrono::steady_clock::now();
    CommandResult r = Cli(argv, aggs[0]->query());
    EXPECT_LT(std::chrono::steady_clock::now() - began, 5s);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, refusal) << r.err;
  }
  // A view too, and the same query with a key that may query works.
  CommandResult r =
      Cli({"stats", "--metric", kMetric, "--from", "-5m", "--key", web.key}, aggs[0]->query());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "trailmap stats: " + refused);
  r = Cli({"metrics"}, aggs[0]->query());
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// The metric names `trailmap metrics` lists that begin with `prefix`; -1 when the query failed.
int CountMetrics(const std::string& query, const std::string& prefix) {
  CommandResult r = Cli({"metrics", "--format", "json"}, query);
  if (r.exit_code != 0) return -1;
  int n = 0;
  for (size_t at = r.out.find("\"name\": \"" + prefix); at != std::string::npos;
       at = r.out.find("\"name\": \"" + prefix, at + 1)) {
    ++n;
  }
  return n;
}

// `n` statsd lines of `n` distinct names PREFIX0 .. PREFIX<n-1>, one event each, 20 a packet.
void SendDistinctNames(int port, const std::string& prefix, int n) {
  std::string packet;
  for (int i = 0; i < n; ++i) {
    packet += prefix + std::to_string(i) + ":1|ms\n";
    if ((i + 1) % 20 == 0 || i + 1 == n) {
      SendUdp(port, packet);
      packet.clear();
    }
  }
}

TEST(HostileStatsd, TheAgentTakesSoManyNewNamesAMinuteAndSoManyInAll) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-n", std::vector<std::string>{}));
  aggs[0]->Start();
  const int metrics = FreePort();
  // 6 new names a minute: the bucket gains one name every 10 s, so what is sent within a few
  // seconds gets exactly the 6 the full bucket holds.
  Agent agent(dir, "names-1", aggs[0]->ingest(),
              {"--no-proc", "--no-self-metrics", "--statsd-new-metrics", "6", "--metrics",
               "127.0.0.1:" + std::to_string(metrics)});
  const auto began = std::chrono::steady_clock::now();
  SendEvents(agent.statsd_port(), "steady.latency", 100);
  SendDistinctNames(agent.statsd_port(), "flood.n", 200);
  SendEvents(agent.statsd_port(), "steady.latency", 100);  // a known name: never refused
  const std::string refused = "trailmap_agent_statsd_rejected_total{reason=\"new_metric\"}";
  ASSERT_TRUE(WaitFor(
      [&] {
        return Scraped(metrics, "trailmap_agent_statsd_lines_total") +
                   std::max(0.0, Scraped(metrics, refused)) >=
               400;
      },
      10s));
  ASSERT_LT(std::chrono::steady_clock::now() - began, 9s) << "too slow to be exact";
  EXPECT_EQ(Scraped(metrics, refused), 195);  // steady.latency took the first of the 6
  EXPECT_EQ(Scraped(metrics, "trailmap_agent_statsd_lines_total"), 205);
  EXPECT_EQ(WaitForCount(aggs, "steady.latency", 200, 20s), 200u) << agent.Log();
  EXPECT_TRUE(WaitFor([&] { return CountMetrics(aggs[0]->query(), "flood.n") == 5; }, 20s));
  EXPECT_NE(agent.Log().find("statsd: rejected from 127.0.0.1 (1 rejected so far): line "),
            std::string::npos)
      << agent.Log();
  EXPECT_NE(agent.Log().find("new names of the last minute (statsd_new_metrics_per_minute)"),
            std::string::npos);
}

TEST(HostileStatsd, TheAgentTakesNoMoreDistinctNamesThanItsBound) {
  TempDir dir;
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(dir, "agg-m", std::vector<std::string>{}));
  aggs[0]->Start();
  const int metrics = FreePort();
  Agent agent(dir, "names-2", aggs[0]->ingest(),
              {"--no-proc", "--no-self-metrics", "--statsd-new-metrics", "0",
               "--statsd-max-metrics", "50", "--metrics", "127.0.0.1:" + std::to_string(metrics)});
  SendDistinctNames(agent.statsd_port(), "many.n", 300);
  const std::string refused = "trailmap_agent_statsd_rejected_total{reason=\"new_metric\"}";
  ASSERT_TRUE(WaitFor(
      [&] {
        return Scraped(metrics, refused) + Scraped(metrics, "trailmap_agent_statsd_lines_total") >=
               300;
      },
      10s));
  EXPECT_EQ(Scraped(metrics, "trailmap_agent_statsd_lines_total"), 50);
  EXPECT_EQ(Scraped(metrics, refused), 250);
  EXPECT_TRUE(WaitFor([&] { return CountMetrics(aggs[0]->query(), "many.n") == 50; }, 20s))
      << CountMetrics(aggs[0]->query(), "many.n");
}

// The aggregator's own quota, per key: past it a batch applies without its further new metrics.
TEST(HostileStatsd, TheAggregatorTakesSoManyNewMetricsPerKey) {
  TempDir dir;
  WriteFile(dir / "aggregator.toml", "[limits]\nnew_metrics_per_key = 5\n");
  const int agg_metrics = FreePort();
  std::vector<std::unique_ptr<Aggregator>> aggs;
  aggs.push_back(std::make_unique<Aggregator>(
      dir, "agg-p",
      std::vector<std::string>{"--config", dir / "aggregator.toml", "--no-self-metrics",
                               "--metrics", "127.0.0.1:" + std::to_string(agg_metrics)}));
  aggs[0]->Start();
  Agent agent(dir, "names-3", aggs[0]->ingest(),
              {"--no-proc", "--no-self-metrics", "--statsd-new-metrics", "0"});
  SendEvents(agent.statsd_port(), "steady.latency", 50);  // the key's first new metric
  ASSERT_EQ(WaitForCount(aggs, "steady.latency", 50, 20s), 50u) << agent.Log() << aggs[0]->Log();
  // One datagram: one second, one batch of 20 new names and 30 more events of a known one.
  std::string packet;
  for (int i = 0; i < 20; ++i) packet += "quota.n" + std::to_string(i) + ":1|ms\n";
  for (int i = 0; i < 30; ++i) packet += "steady.latency:2|ms\n";
  SendUdp(agent.statsd_port(), packet);
  EXPECT_EQ(WaitForCount(aggs, "steady.latency", 80, 20s), 80u) << agent.Log() << aggs[0]->Log();
  EXPECT_EQ(CountMetrics(aggs[0]->query(), "quota.n"), 4);
  EXPECT_TRUE(WaitFor(
      [&] {
        return Scraped(agg_metrics,
                       "trailmap_aggregator_ingest_new_metrics_refused_total{shard=\"agg-p\"}") ==
               16;
      },
      10s))
      << aggs[0]->Log();
  const std::string log = aggs[0]->Log();
  EXPECT_NE(log.find("applied without 32 refused item(s): metric quota.n"), std::string::npos)
      << log;
  EXPECT_NE(log.find(" is new to the catalog and key test created its 5 new metrics of the last "
                     "day ([limits] new_metrics_per_key)"),
            std::string::npos)
      << log;
}

}  // namespace
}  // namespace trailmap::test
