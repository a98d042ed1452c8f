// CURVE and the ZAP handler against a real trailmap-aggregator: keys are made with the
// real `trailmap keygen`, the aggregator lists four of them, and raw DEALERs (ingest) and the
// real CLI (queries) connect with them:
//   - a forged agent id (another key's) is refused, counted, and moves no watermark: the real
//     agent's later batches all apply, and exactly its events are stored;
//   - a batch for a host the key may not write is refused and stores nothing;
//   - an unlisted key and a plaintext client get no connection (counted), so no data;
//   - a key without the query right gets an error naming it; plaintext queries get no answer;
//   - the aggregator will not start without keys unless --insecure-plaintext, which warns;
//   - SIGHUP reads the clients file again: a removed key's open connection loses its rights and
//     its new ones are refused, an added key is admitted, and a file that does not parse is
//     refused with FILE:LINE in the log while the old list stays;
//   - per-member server keys in the cluster file: two aggregators with different key pairs take a
//     real agent's batches and answer a query, both exact; a client given the wrong key for one
//     member names it; one member's key is rolled as docs/security.md says (the aggregator refuses to
//     start with a pair its entry does not name; the agent, sent SIGHUP, reconnects to that
//     member alone and its spooled batches arrive).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "core/batch.h"
#include "core/curve_socket.h"
#include "core/histogram.h"
#include "tests/cluster.h"
#include "tests/fault_load.h"
#include "tests/stats_json.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

// Batch `sequence` of `agent` for `host`: `events` events of 1 ms at second `second`.
Batch Make(const std::string& agent, const std::string& host, uint64_t sequence, int64_t second,
           uint64_t events) {
  Batch b;
  b.agent = agent;
  b.sequence = sequence;
  b.host = host;
  b.series = {{"curve.latency", MetricKind::kLatency, "ns", ""}};
  Histogram h;
  h.Record(1'000'000, events);
  b.seconds.push_back({second, {{0, h.Encode()}}, {}});
  return b;
}

// A DEALER to the ingest port: CURVE with `key` (a TestKey's .key) and the server's .pub, or
// plaintext when `key` is "".
class IngestClient {
 public:
  IngestClient(const std::string& endpoint, const std::string& key, const std::string& server_pub,
               std::chrono::milliseconds timeout)
      : dealer_(context_, zmq::socket_type::dealer) {
    dealer_.set(zmq::sockopt::linger, 0);
    dealer_.set(zmq::sockopt::rcvtimeo, static_cast<int>(timeout.count()));
    if (!key.empty()) {
      Result<CurveClient> curve = ResolveCurveClient(key, server_pub, false);
      EXPECT_TRUE(curve.ok()) << curve.status().ToString();
      if (curve.ok()) ApplyCurveClient(dealer_, *curve);
    }
    dealer_.connect("tcp://" + endpoint);
  }
  // The ack of `batch`, or nullopt when none came within the timeout.
  std::optional<Ack> Send(const Batch& batch) {
    dealer_.send(zmq::buffer(EncodeBatch(batch)), zmq::send_flags::none);
    zmq::message_t reply;
    if (!dealer_.recv(reply)) return std::nullopt;
    Result<Ack> ack = DecodeAck(reply.to_string_view());
    EXPECT_TRUE(ack.ok()) << ack.status().ToString();
    return ack.ok() ? std::optional<Ack>(*ack) : std::nullopt;
  }

 private:
  zmq::context_t context_;
  zmq::socket_t dealer_;
};

class CurveSystem : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    agg_key_ = new TestKey(MakeKey(dir_->path(), "agg"));
    web_ = new TestKey(MakeKey(dir_->path(), "web"));
    other_ = new TestKey(MakeKey(dir_->path(), "other"));
    viewer_ = new TestKey(MakeKey(dir_->path(), "viewer"));
    stranger_ = new TestKey(MakeKey(dir_->path(), "stranger"));  // never listed
    const std::string clients = *dir_ / "clients";
    // `other` may write web-1 too: only the agent id's binding stops its forgery.
    WriteFile(clients,
              "# name key rights hosts\n"
              "web    " +
                  web_->public_key + "  ingest  web-1\n" + "other  " + other_->public_key +
                  "  ingest  web-1 web-2?\n" + "viewer " + viewer_->public_key + "  query\n");
    agg_ = new Aggregator(*dir_, "agg-1", {"--key", agg_key_->key, "--clients", clients});
    agg_->Start();
  }
  static void TearDownTestSuite() {
    delete agg_;
    for (TestKey* k : {agg_key_, web_, other_, viewer_, stranger_}) delete k;
    delete dir_;
  }

  // `trailmap ARGS` as the viewer (or `key` with the aggregators' .pub).
  static CommandResult Query(std::vector<std::string> args, const std::string& key = "") {
    args.insert(args.end(),
                {"--key", key.empty() ? viewer_->key : key, "--server-key", agg_key_->pub});
    return Cli(std::move(args), agg_->query());
  }
  // Events of curve.latency stored for `host` in the last 10 minutes; -1 if the query failed.
  static int64_t Stored(const std::string& host) {
    CommandResult r = Query({"stats", "--metric", "curve.latency", "--from", "-10m", "--hosts",
                             host, "--format", "json"});
    if (r.exit_code != 0) return -1;
    int64_t total = 0;
    for (const auto& [group, stats] : ParseStats(r.out)) total += static_cast<int64_t>(stats.count);
    return total;
  }
  // The aggregator's status as `trailmap cluster --format json` gives it.
  static nlohmann::json Status() {
    CommandResult r = Query({"cluster", "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    return j.is_object() ? j["members"][0] : nlohmann::json();
  }
  static IngestClient Client(const TestKey& key, std::chrono::milliseconds timeout = 20s) {
    return IngestClient(agg_->ingest(), key.key, agg_key_->pub, timeout);
  }

  static TempDir* dir_;
  static TestKey *agg_key_, *web_, *other_, *viewer_, *stranger_;
  static Aggregator* agg_;
};

TempDir* CurveSystem::dir_ = nullptr;
TestKey *CurveSystem::agg_key_ = nullptr, *CurveSystem::web_ = nullptr,
        *CurveSystem::other_ = nullptr, *CurveSystem::viewer_ = nullptr,
        *CurveSystem::stranger_ = nullptr;
Aggregator* CurveSystem::agg_ = nullptr;

TEST_F(CurveSystem, ForgedAgentIdIsRefusedCountedAndMovesNoWatermark) {
  const int64_t base = UnixNow() - 120;
  IngestClient real = Client(*web_);
  IngestClient forger = Client(*other_);
  // The real agent: batches 1..5, 10 events each.
  for (uint64_t s = 1; s <= 5; ++s) {
    std::optional<Ack> ack = real.Send(Make("web-1/real", "web-1", s, base + s, 10));
    ASSERT_TRUE(ack) << agg_->Log();
    EXPECT_EQ(ack->status, Ack::Status::kApplied) << s << ": " << ack->reason;
  }
  // 30 forged batches under its agent id, ahead of its sequence (a forged-sequence attack).
  const uint64_t refused_before = Status()["refused_batches"].get<uint64_t>();
  for (uint64_t s = 6; s < 36; ++s) {
    std::optional<Ack> ack = forger.Send(Make("web-1/real", "web-1", s, base + s, 1000));
    ASSERT_TRUE(ack);
    EXPECT_EQ(ack->status, Ack::Status::kUnauthorized);
    EXPECT_EQ(ack->sequence, s);
    EXPECT_EQ(ack->reason,
              "agent id web-1/real belongs to key web; key other may not send under it");
  }
  // The real agent's next 50 events are applied, not taken for duplicates.
  for (uint64_t s = 6; s <= 10; ++s) {
    std::optional<Ack> ack = real.Send(Make("web-1/real", "web-1", s, base + s, 10));
    ASSERT_TRUE(ack);
    EXPECT_EQ(ack->status, Ack::Status::kApplied) << s << ": " << ack->reason;
  }
  EXPECT_EQ(Stored("web-1"), 100);
  EXPECT_EQ(Status()["refused_batches"].get<uint64_t>(), refused_before + 30);
  EXPECT_NE(agg_->Log().find("refused batch 6 of agent web-1/real: agent id web-1/real belongs "
                             "to key web; key other may not send under it"),
            std::string::npos)
      << agg_->Log();
}

TEST_F(CurveSystem, BatchForAHostTheKeyMayNotWriteIsRefused) {
  const int64_t base = UnixNow() - 100;
  const uint64_t refused_before = Status()["refused_batches"].get<uint64_t>();
  IngestClient web = Client(*web_);
  std::optional<Ack> ack = web.Send(Make("web-2/x", "web-2", 1, base, 7));
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->status, Ack::Status::kUnauthorized);
  EXPECT_EQ(ack->reason, "key web may not write host web-2 (it may write: web-1)");
  // A pattern: other may write web-2? (web-21) but not web-210.
  IngestClient other = Client(*other_);
  ack = other.Send(Make("web-21/o", "web-21", 1, base, 3));
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->status, Ack::Status::kApplied) << ack->reason;
  ack = other.Send(Make("web-210/o", "web-210", 1, base, 3));
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->reason, "key other may not write host web-210 (it may write: web-1 web-2?)");
  // A key with the query right only may not ingest at all.
  IngestClient viewer = Client(*viewer_);
  ack = viewer.Send(Make("web-1/v", "web-1", 1, base, 5));
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->status, Ack::Status::kUnauthorized);
  EXPECT_EQ(ack->reason,
            "key viewer may not ingest: list it in the aggregator's clients file with the ingest "
            "right");
  EXPECT_EQ(Stored("web-2"), 0);
  EXPECT_EQ(Stored("web-21"), 3);
  EXPECT_EQ(Status()["refused_batches"].get<uint64_t>(), refused_before + 3);
}

TEST_F(CurveSystem, UnlistedKeyAndPlaintextClientGetNoConnection) {
  const int64_t base = UnixNow() - 90;
  const uint64_t connections_before = Status()["refused_connections"].get<uint64_t>();
  IngestClient stranger = Client(*stranger_, 1500ms);
  EXPECT_FALSE(stranger.Send(Make("lone-1/s", "lone-1", 1, base, 9)));
  IngestClient plain(agg_->ingest(), "", "", 1500ms);
  EXPECT_FALSE(plain.Send(Make("lone-1/p", "lone-1", 1, base, 9)));
  // Every handshake of the stranger was refused by the ZAP handler (it retries, so at least one);
  // the plaintext one never reached it (no CURVE hello).
  EXPECT_GE(Status()["refused_connections"].get<uint64_t>(), connections_before + 1);
  EXPECT_NE(agg_->Log().find("ZAP handler: refused a connection from 127.0.0.1 to ingest: key " +
                             stranger_->public_key + " is not listed"),
            std::string::npos)
      << agg_->Log();
  EXPECT_EQ(Stored("lone-1"), 0);
}

TEST_F(CurveSystem, QueriesNeedAListedKeyWithTheQueryRight) {
  CommandResult r = Query({"stats", "--metric", "curve.latency", "--from", "-10m"}, web_->key);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("refused this key: key web may only ingest, not query: give it the query "
                       "right in the clients file of aggregator agg-1"),
            std::string::npos)
      << r.err;
  r = Query({"stats", "--metric", "curve.latency", "--from", "-10m", "--timeout", "1s"},
            stranger_->key);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no answer within 1000 ms: CURVE handshake refused (ZAP status 400): key "
                       "stranger is not listed there (add it to that aggregator's clients file)"),
            std::string::npos)
      << r.err;
  r = Cli({"stats", "--metric", "curve.latency", "--from", "-10m", "--timeout", "1s",
           "--insecure-plaintext"},
          agg_->query());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("WARNING: --insecure-plaintext"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no answer within 1000 ms"), std::string::npos) << r.err;
}

TEST_F(CurveSystem, SighupReadsTheClientsFileAgain) {
  TempDir dir;
  const std::string clients = dir / "clients";
  auto line = [](const TestKey& key, const std::string& rights) {
    return key.name + " " + key.public_key + " " + rights + "\n";
  };
  WriteFile(clients, line(*viewer_, "query") + line(*web_, "ingest web-1"));
  Aggregator agg(dir, "agg-hup", {"--key", agg_key_->key, "--clients", clients,
                                  "--no-self-metrics"});
  agg.Start();
  auto client = [&](const TestKey& key, std::chrono::milliseconds timeout = 20s) {
    return IngestClient(agg.ingest(), key.key, agg_key_->pub, timeout);
  };
  // Waits for the aggregator to log `text` (after a SIGHUP).
  auto logged = [&](const std::string& text) {
    return WaitFor([&] { return agg.Log().find(text) != std::string::npos; }, 10s);
  };
  const int64_t base = UnixNow() - 60;
  IngestClient web = client(*web_);
  std::optional<Ack> ack = web.Send(Make("web-1/h", "web-1", 1, base, 2));
  ASSERT_TRUE(ack) << agg.Log();
  EXPECT_EQ(ack->status, Ack::Status::kApplied) << ack->reason;
  {
    IngestClient other = client(*other_, 1000ms);
    EXPECT_FALSE(other.Send(Make("other-1/h", "other-1", 1, base, 3)));  // not listed yet
  }

  // web removed, other added.
  WriteFile(clients, line(*viewer_, "query") + line(*other_, "ingest other-1"));
  agg.process().Kill(SIGHUP);
  ASSERT_TRUE(logged("SIGHUP: clients file " + clients + " read again: 2 client keys (were 2)"))
      << agg.Log();
  ack = web.Send(Make("web-1/h", "web-1", 2, base + 1, 2));  // its open connection
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->status, Ack::Status::kUnauthorized);
  EXPECT_EQ(ack->reason,
            "key web may not ingest: list it in the aggregator's clients file with the ingest "
            "right");
  IngestClient web_again = client(*web_, 1000ms);
  EXPECT_FALSE(web_again.Send(Make("web-1/h", "web-1", 2, base + 1, 2)));  // refused by ZAP
  IngestClient other_again = client(*other_);
  ack = other_again.Send(Make("other-1/h", "other-1", 1, base, 3));
  ASSERT_TRUE(ack) << agg.Log();
  EXPECT_EQ(ack->status, Ack::Status::kApplied) << ack->reason;

  // A file that does not parse: refused with its line, the list kept.
  WriteFile(clients, line(*viewer_, "query") + "web-2 not-a-key ingest web-2\n");
  agg.process().Kill(SIGHUP);
  ASSERT_TRUE(logged("SIGHUP: " + clients + ":2: public key of web-2: a CURVE key is 40 Z85 "
                     "characters; \"not-a-key\" has 9; kept the 2 client keys as they were"))
      << agg.Log();
  IngestClient other_third = client(*other_);
  ack = other_third.Send(Make("other-1/h", "other-1", 2, base + 1, 4));
  ASSERT_TRUE(ack) << agg.Log();
  EXPECT_EQ(ack->status, Ack::Status::kApplied) << ack->reason;
  const CommandResult r =
      Cli({"stats", "--metric", "curve.latency", "--from", "-10m", "--format", "json", "--key",
           viewer_->key, "--server-key", agg_key_->pub},
          agg.query());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int64_t total = 0;
  for (const auto& [group, stats] : ParseStats(r.out)) total += static_cast<int64_t>(stats.count);
  EXPECT_EQ(total, 2 + 3 + 4);
}

TEST_F(CurveSystem, AggregatorNeedsKeysOrAnExplicitPlaintextFlag) {
  TempDir dir;
  const std::string port = std::to_string(FreePort()), query = std::to_string(FreePort());
  std::vector<std::string> args{Binary("trailmap-aggregator"),
                                "--data",
                                dir / "data",
                                "--ingest",
                                "127.0.0.1:" + port,
                                "--query",
                                "127.0.0.1:" + query,
                                "--key",
                                agg_key_->key};
  // --key without --clients (the flag wins over the harness's TRAILMAP_CLIENTS only when given).
  unsetenv("TRAILMAP_CLIENTS");
  CommandResult r = RunProgram(args, 20s);
  setenv("TRAILMAP_CLIENTS", TestKeys().clients.c_str(), 1);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no CURVE keys: give --key FILE (its key pair: trailmap keygen agg) and "
                       "--clients FILE"),
            std::string::npos)
      << r.err;
  args.back() = agg_key_->pub;  // a .pub where the key pair belongs
  args.insert(args.end(), {"--clients", TestKeys().clients});
  r = RunProgram(args, 20s);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--key: " + agg_key_->pub + ": holds no secret-key"), std::string::npos)
      << r.err;

  Process plain({Binary("trailmap-aggregator"), "--data", dir / "plain", "--ingest",
                 "127.0.0.1:" + port, "--query", "127.0.0.1:" + query, "--insecure-plaintext"},
                dir.path(), "plain");
  EXPECT_TRUE(WaitFor(
      [&] { return plain.Stderr().find("trailmap-aggregator: started ") != std::string::npos; },
      30s))
      << plain.Stderr();
  EXPECT_NE(plain.Stderr().find("WARNING: --insecure-plaintext: connections are neither encrypted "
                                "nor authenticated"),
            std::string::npos);
  EXPECT_NE(plain.Stderr().find("PLAINTEXT"), std::string::npos) << plain.Stderr();
}

TEST_F(CurveSystem, EachMemberMayHaveItsOwnServerKeyAndRollItAlone) {
  TempDir dir;
  // agg-1 runs with the shared test pair (TRAILMAP_KEY; clients know it as TRAILMAP_SERVER_KEY),
  // agg-2 with a pair of its own, named in its entry. Both list the test key as a client.
  const TestKey own = MakeKey(dir.path(), "agg-2");
  const std::string ports[] = {std::to_string(FreePort()), std::to_string(FreePort()),
                               std::to_string(FreePort()), std::to_string(FreePort())};
  const std::string query_1 = "127.0.0.1:" + ports[1], query_2 = "127.0.0.1:" + ports[3];
  const auto members = [&](const std::string& agg2_key) {
    return "replication = 2\n[[aggregator]]\nname = \"agg-1\"\ningest = \"127.0.0.1:" + ports[0] +
           "\"\nquery = \"" + query_1 +
           "\"\n[[aggregator]]\nname = \"agg-2\"\ningest = " + "\"127.0.0.1:" + ports[2] +
           "\"\nquery = \"" + query_2 + "\"\n" + agg2_key + "\n";
  };
  const std::string file = dir / "cluster.toml";
  WriteFile(file, members("server_key_file = \"agg-2.pub\""));  // beside the cluster file
  const auto start = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args{
        Binary("trailmap-aggregator"), "--cluster",        file, "--name", name, "--data",
        dir / (name + "-data"),        "--no-self-metrics"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<Process>(args, dir.path(), name);
  };
  std::unique_ptr<Process> agg1 = start("agg-1", {});
  std::unique_ptr<Process> agg2 = start("agg-2", {"--key", own.key});
  Agent agent(dir, "web-1", "", {"--cluster", file, "--no-self-metrics"});
  // web-1's events as `trailmap stats` counts them over ARGS (the cluster file, or one member).
  const int64_t began = UnixNow() - 5;
  const auto count = [&](std::vector<std::string> args) -> int64_t {
    args.insert(args.begin(),
                {Binary("trailmap"), "stats", "--metric", "disk.latency", "--by", "host", "--from",
                 std::to_string(began), "--format", "json", "--timeout", "2s"});
    CommandResult r = RunProgram(args);
    if (r.exit_code != 0) return -1;
    auto stats = ParseStats(r.out);
    return stats.count("web-1") ? static_cast<int64_t>(stats.at("web-1").count) : 0;
  };
  const auto on_agg2 = [&](const TestKey& key) {
    return count({"--aggregators", query_2, "--server-key", key.pub});
  };
  SendEvents(agent.statsd_port(), "disk.latency", 40);
  ASSERT_TRUE(WaitFor([&] { return on_agg2(own) == 40; }, 20s)) << agent.Log() << agg2->Stderr();
  EXPECT_EQ(count({"--aggregators", query_1}), 40);  // the shared key, from TRAILMAP_SERVER_KEY
  EXPECT_EQ(count({"--cluster", file}), 40);         // each member with its own key, once each

  // The wrong key for agg-2 (the shared one): named, with what went wrong.
  const std::string wrong = dir / "wrong.toml";
  WriteFile(wrong, members("server_key = \"" + TestKeys().pair.public_key + "\""));
  CommandResult r = RunProgram(
      {Binary("trailmap"), "cluster", "--cluster", wrong, "--timeout", "1s", "--format", "json"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("agg-2 (tcp://" + query_2 +
                       "): no answer within 1000 ms: CURVE handshake failed: the server closed "
                       "the connection, as it does when the server key given for it is not its "
                       "own (check server_key in the cluster file, or --server-key)"),
            std::string::npos)
      << r.out << r.err;

  // Rolling agg-2's key (docs/security.md): a new pair; its .pub into agg-2's entry; agg-2 restarted with
  // the pair (refused with the old one, whose entry no longer names it); then SIGHUP to clients.
  const TestKey next = MakeKey(dir.path(), "agg-2-next");
  WriteFile(file, members("server_key_file = \"agg-2-next.pub\""));
  agg2->Kill(SIGTERM);
  agg2->Wait();
  r = RunProgram({Binary("trailmap-aggregator"), "--cluster", file, "--name", "agg-2", "--data",
                  dir / "agg-2-data", "--key", own.key},
                 20s);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--cluster " + file + ": [[aggregator]] \"agg-2\" names server key " +
                       next.public_key + ", but --key " + own.key + " holds the pair of " +
                       own.public_key),
            std::string::npos)
      << r.err;
  agg2 = start("agg-2", {"--key", next.key});
  // The agent still has the old key for agg-2: it says so, naming agg-2, and holds the batches.
  SendEvents(agent.statsd_port(), "disk.latency", 30);
  EXPECT_TRUE(WaitFor(
      [&] {
        return agent.Log().find("shipper agg-2 (tcp://127.0.0.1:" + ports[2] +
                                "): CURVE handshake failed: the server closed the connection") !=
               std::string::npos;
      },
      20s))
      << agent.Log();
  EXPECT_TRUE(WaitFor([&] { return count({"--aggregators", query_1}) == 70; }, 20s));
  EXPECT_EQ(on_agg2(next), 40);
  agent.process().Kill(SIGHUP);
  EXPECT_TRUE(WaitFor([&] { return on_agg2(next) == 70; }, 20s)) << agent.Log() << agg2->Stderr();
  EXPECT_EQ(count({"--cluster", file}), 70);
  const std::string log = agent.Log();
  EXPECT_NE(log.find("shipper agg-2 (tcp://127.0.0.1:" + ports[2] +
                     "): its server key changed; reconnecting with the new one"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("shipper agg-1 (tcp://127.0.0.1:" + ports[0] + "): its server key changed"),
            std::string::npos)
      << log;
  // The failed handshakes are counted: the counters line the agent logs as it stops.
  agent.process().Kill(SIGTERM);
  EXPECT_EQ(agent.process().Wait(), 0);
  const std::string last = agent.Log();
  const std::string field = " handshake_failures=";
  const size_t at = last.rfind(field);
  ASSERT_NE(at, std::string::npos) << last;
  EXPECT_GE(std::stoul(last.substr(at + field.size())), 1u) << last.substr(at);
}

}  // namespace
}  // namespace trailmap::test
