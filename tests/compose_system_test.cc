// docker-compose.yml is real: Debian's docker-compose validates it (no engine needed), and this
// test starts the very processes it lists, with the very flags it gives them, on loopback —
// service host names and ports mapped to free local ports — and checks the cluster works.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <signal.h>

#include <map>
#include <set>
#include <regex>
#include <sstream>
#include <thread>

#include "core/cluster.h"
#include "tests/cluster.h"
#include "tests/http_client.h"
#include "tests/stats_json.h"

namespace trailmap::test {
namespace {

using namespace std::chrono_literals;

const std::string kCompose = std::string(TRAILMAP_SOURCE_DIR) + "/docker-compose.yml";

// service name -> its command, from the compose file's `command: >` blocks.
std::map<std::string, std::string> ServiceCommands(const std::string& yaml) {
  std::map<std::string, std::string> commands;
  std::istringstream in(yaml);
  std::string line, service;
  bool in_services = false, in_command = false;
  while (std::getline(in, line)) {
    if (line.rfind("services:", 0) == 0) {
      in_services = true;
      continue;
    }
    if (!line.empty() && line[0] != ' ' && line[0] != '#') in_services = false;
    if (!in_services) continue;
    std::smatch m;
    if (std::regex_match(line, m, std::regex("  ([a-z0-9-]+):\\s*"))) {
      service = m[1];
      in_command = false;
    } else if (std::regex_match(line, std::regex("    command: >\\s*"))) {
      in_command = true;
    } else if (in_command && line.rfind("      ", 0) == 0) {
      commands[service] += line.substr(6) + " ";
    } else {
      in_command = false;
    }
  }
  return commands;
}

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

TEST(Compose, DockerComposeValidatesTheFile) {
  CommandResult r = RunProgram({"/usr/bin/docker-compose", "-f", kCompose, "config", "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// The compose file's processes on loopback: every service's ports become free local ones, its
// service name resolves to 127.0.0.1, its /var/lib/trailmap a directory of its own, and the
// cluster file it reads a copy with the same translation.
class Twin {
 public:
  explicit Twin(const std::map<std::string, std::string>& commands) : commands_(commands) {
    for (const auto& [service, cmd] : commands_) Ports(service, cmd);
    cluster_path_ = dir_.path() + "/cluster.toml";
    WriteCluster(ReadFile(std::string(TRAILMAP_SOURCE_DIR) + "/configs/cluster.toml"));
    // The keys the compose file mounts at /etc/trailmap/keys, made as its users make them.
    keys_dir_ = dir_.path() + "/keys";
    setenv("TRAILMAP", Binary("trailmap").c_str(), 1);
    const CommandResult keys = RunProgram(
        {"/bin/sh", "-c", std::string(TRAILMAP_SOURCE_DIR) + "/scripts/compose-keys " + keys_dir_});
    unsetenv("TRAILMAP");
    EXPECT_EQ(keys.exit_code, 0) << keys.err;
  }
  // What the CLI of the query container would pass: its key and the aggregators' public key.
  std::vector<std::string> QueryKeys() const {
    return {"--key", keys_dir_ + "/query.key", "--server-key", keys_dir_ + "/agg.pub"};
  }

  // Gives `service` (one the compose file does not have) loopback ports like those of `like`.
  void AddService(const std::string& service, const std::string& like) {
    std::string cmd = commands_.at(like);
    cmd = std::regex_replace(cmd, std::regex("--name " + like), "--name " + service);
    commands_[service] = cmd;
    Ports(service, cmd);
  }

  // The cluster file every process reads, translated.
  void WriteCluster(const std::string& toml) { WriteFile(cluster_path_, Translate("", toml)); }
  const std::string& cluster_path() const { return cluster_path_; }

  void Start(const std::string& service) {
    std::vector<std::string> argv;
    for (const auto& w : Words(commands_.at(service))) argv.push_back(Translate(service, w));
    argv[0] = Binary(argv[0]);
    processes_[service] = std::make_unique<Process>(argv, dir_.path(), service);
  }
  void Stop(const std::string& service, int signal) {
    processes_.at(service)->Kill(signal);
    processes_.at(service)->Wait();
  }
  Process& process(const std::string& service) { return *processes_.at(service); }
  std::string Logs() const {
    std::string logs;
    for (const auto& [name, p] : processes_) logs += "--- " + name + "\n" + p->Stderr();
    return logs;
  }
  // "127.0.0.1:PORT" of `service`'s container port.
  std::string Port(const std::string& service, const std::string& port) const {
    return ports_.at(service + ":" + port);
  }

 private:
  void Ports(const std::string& service, const std::string& cmd) {
    for (const std::string container_port : {"7400", "7401", "7402", "8125"}) {
      if (cmd.find("0.0.0.0:" + container_port) != std::string::npos) {
        ports_[service + ":" + container_port] = "127.0.0.1:" + std::to_string(FreePort());
      }
    }
  }
  std::string Translate(const std::string& service, std::string text) const {
    for (const auto& [from, to] : ports_) {
      const std::string svc = from.substr(0, from.find(':')), port = from.substr(from.find(':') + 1);
      if (svc == service) text = std::regex_replace(text, std::regex("0\\.0\\.0\\.0:" + port), to);
      text = std::regex_replace(text, std::regex("\\b" + svc + ":" + port + "\\b"), to);
    }
    text = std::regex_replace(text, std::regex("^/etc/trailmap/cluster\\.toml$"), cluster_path_);
    text = std::regex_replace(text, std::regex("^/etc/trailmap/keys/"), keys_dir_ + "/");
    return std::regex_replace(text, std::regex("^/var/lib/trailmap"), dir_.path() + "/" + service);
  }

  TempDir dir_;
  std::map<std::string, std::string> commands_;
  std::map<std::string, std::string> ports_;  // "service:port" -> "127.0.0.1:free"
  std::string cluster_path_;
  std::string keys_dir_;
  std::map<std::string, std::unique_ptr<Process>> processes_;
};

using Counts = std::map<std::string, uint64_t>;  // host -> events

// Events of `metric` per host in [from, to): from the whole cluster (`query` empty: --cluster,
// each host-second once) or from one aggregator alone (its query endpoint). Empty on an error.
Counts CountsByHost(const Twin& twin, const std::string& query, const std::string& metric,
                    int64_t from, int64_t to, int* exit_code = nullptr, std::string* err = nullptr) {
  std::vector<std::string> argv = {Binary("trailmap"), "stats", "--metric", metric, "--by", "host",
                                   "--from", std::to_string(from), "--to", std::to_string(to),
                                   "--format", "json", "--timeout", "2s"};
  for (const std::string& flag : twin.QueryKeys()) argv.push_back(flag);
  if (query.empty()) {
    argv.insert(argv.end(), {"--cluster", twin.cluster_path()});
  } else {
    argv.insert(argv.end(), {"--aggregators", query});
  }
  CommandResult r = RunProgram(argv);
  if (exit_code != nullptr) *exit_code = r.exit_code;
  if (err != nullptr) *err = r.err;
  Counts counts;
  // Exit 3 without a document: no aggregator answered at all (e.g. all still starting).
  if ((r.exit_code != 0 && r.exit_code != 3) || r.out.empty()) return counts;
  for (const auto& [host, stats] : ParseStats(r.out)) counts[host] = stats.count;
  return counts;
}

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<std::string> OwnerNames(const Cluster& c, const std::string& host, int64_t t) {
  std::vector<std::string> names;
  for (size_t o : c.Owners(host, t)) names.push_back(c.members[o].name);
  return names;
}

// Three aggregators in three zones with R = 2, the agents and the fleet sending each host's
// batches to its two owners: how the hosts spread, exact answers while one aggregator is down,
// each replica alone holding the same after it returns, and a fourth member joining.
TEST(Compose, ThreeZonesWithTwoReplicasStayExactThroughAnOutageAndAJoin) {
  const auto commands = ServiceCommands(ReadFile(kCompose));
  ASSERT_EQ(commands.size(), 8u) << "three aggregators, three agents, the fleet, the HTTP node";
  Twin twin(commands);
  const int64_t started = Now();
  const std::vector<std::string> aggs = {"agg-1", "agg-2", "agg-3"};
  for (const std::string service : {"agg-1", "agg-2", "agg-3", "agent-web-1", "agent-web-2",
                                    "agent-db-1", "fleet", "query"}) {
    twin.Start(service);
  }
  Result<Cluster> cluster = LoadCluster(twin.cluster_path());
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  std::vector<std::string> hosts = {"web-1", "web-2", "db-1"};
  for (int i = 1; i <= 50; ++i) hosts.push_back(fmt::format("sim-{:03d}", i));

  // Everything arrives: 50 simulated hosts directly, three through the agents' statsd.
  Counts disk, http;
  std::string first_err;
  int first_code = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        disk = CountsByHost(twin, "", "disk.latency", Now() - 60, Now(), &first_code, &first_err);
        http = CountsByHost(twin, "", "http.server.latency", Now() - 60, Now());
        return disk.size() == 50 && http.size() == 3;
      },
      40s))
      << disk.size() << " disk hosts, " << http.size() << " http hosts; trailmap exit "
      << first_code << ": " << first_err << "\n" << twin.Logs();

  // Spread: each aggregator holds exactly the hosts it owns, about two thirds of them.
  const int64_t t = Now();
  for (const std::string& agg : aggs) {
    Counts alone = CountsByHost(twin, twin.Port(agg, "7401"), "disk.latency", t - 30, t);
    Counts alone_http = CountsByHost(twin, twin.Port(agg, "7401"), "http.server.latency", t - 30, t);
    alone.insert(alone_http.begin(), alone_http.end());
    std::set<std::string> held, owned;
    for (const auto& [h, n] : alone) held.insert(h);
    for (const std::string& h : hosts) {
      const std::vector<std::string> o = OwnerNames(*cluster, h, t);
      if (std::find(o.begin(), o.end(), agg) != o.end()) owned.insert(h);
    }
    EXPECT_EQ(held, owned) << agg;
    EXPECT_GT(owned.size(), hosts.size() / 2 - 8) << agg;
    EXPECT_LT(owned.size(), hosts.size() - 8) << agg;
  }

  // Exact: over a settled range the cluster's count of each host equals each of its owners'
  // alone (a host counted on both would show twice).
  const auto per_host = [&](const std::string& query, int64_t from, int64_t to) {
    Counts c = CountsByHost(twin, query, "disk.latency", from, to);
    Counts h = CountsByHost(twin, query, "http.server.latency", from, to);
    c.insert(h.begin(), h.end());
    return c;
  };
  const auto owners_agree = [&](int64_t from, int64_t to, const std::string& only_owner,
                                std::string* why) {
    std::map<std::string, Counts> alone;
    for (const std::string& agg : aggs) alone[agg] = per_host(twin.Port(agg, "7401"), from, to);
    for (const std::string& h : hosts) {
      const std::vector<std::string> o = OwnerNames(*cluster, h, from);
      if (!only_owner.empty() && std::find(o.begin(), o.end(), only_owner) == o.end()) continue;
      if (alone[o[0]][h] == 0 || alone[o[0]][h] != alone[o[1]][h]) {
        *why = h + ": " + o[0] + " " + std::to_string(alone[o[0]][h]) + ", " + o[1] + " " +
               std::to_string(alone[o[1]][h]) + " over [" + std::to_string(from) + ", " +
               std::to_string(to) + "); hosts held:";
        for (const auto& [agg, counts] : alone) *why += " " + agg + " " + std::to_string(counts.size());
        return false;
      }
    }
    return true;
  };
  // A settled range of 20 s after the first few seconds (the processes' start).
  std::this_thread::sleep_for(std::chrono::seconds(std::max<int64_t>(0, started + 28 - Now())));
  const int64_t t1 = Now() - 4, t0 = t1 - 20;
  std::string why;
  ASSERT_TRUE(WaitFor([&] { return owners_agree(t0, t1, "", &why); }, 20s)) << why << "\n" << twin.Logs();
  const Counts whole = per_host("", t0, t1);
  ASSERT_EQ(whole.size(), hosts.size());
  std::map<std::string, Counts> settled;  // each aggregator alone over [t0, t1)
  for (const std::string& agg : aggs) settled[agg] = per_host(twin.Port(agg, "7401"), t0, t1);
  for (const std::string& h : hosts) {
    const std::vector<std::string> o = OwnerNames(*cluster, h, t0);
    EXPECT_EQ(whole.at(h), settled[o[0]][h]) << h;
  }

  // agg-2 down: the same answer, complete (exit 0), and the user told who is down.
  twin.Stop("agg-2", SIGKILL);
  const int64_t killed = Now();
  int code = -1;
  std::string err;
  Counts during = CountsByHost(twin, "", "disk.latency", t0, t1, &code, &err);
  EXPECT_EQ(code, 0) << err;
  EXPECT_NE(err.find("did not answer: agg-2"), std::string::npos) << err;
  for (const auto& [h, n] : during) EXPECT_EQ(n, whole.at(h)) << h;
  EXPECT_EQ(during.size(), 50u);
  std::this_thread::sleep_for(5s);  // agg-2 misses these seconds; its hosts' agents spool them
  const Counts outage = per_host("", killed + 1, Now() - 1);
  EXPECT_EQ(outage.size(), hosts.size());  // every host still answered, from its other owner

  // agg-2 back: its spools replay, and afterwards it alone holds what its peers hold.
  twin.Start("agg-2");
  const int64_t restarted = Now();
  EXPECT_TRUE(WaitFor([&] { return owners_agree(killed - 2, restarted + 3, "agg-2", &why); }, 60s))
      << why << "\n" << twin.Logs();

  // A fourth member joins from E on: restart every process with the new file; only the hosts
  // whose new owners include agg-4 move, and no second before or after E is lost.
  twin.AddService("agg-4", "agg-1");
  const int64_t e = Now() + 15;
  std::string toml = ReadFile(std::string(TRAILMAP_SOURCE_DIR) + "/configs/cluster.toml");
  toml += "\n[[aggregator]]\nname = \"agg-4\"\nzone = \"a\"\ningest = \"agg-4:7400\"\n"
          "query = \"agg-4:7401\"\n[[epoch]]\nfrom = 0\nmembers = [\"agg-1\", \"agg-2\", "
          "\"agg-3\"]\n[[epoch]]\nfrom = " + std::to_string(e) +
          "\nmembers = [\"agg-1\", \"agg-2\", \"agg-3\", \"agg-4\"]\n";
  twin.WriteCluster(toml);
  Result<Cluster> grown = LoadCluster(twin.cluster_path());
  ASSERT_TRUE(grown.ok()) << grown.status().ToString();
  twin.Start("agg-4");
  for (const std::string service : {"agg-1", "agg-2", "agg-3", "agent-web-1", "agent-web-2",
                                    "agent-db-1", "fleet"}) {
    twin.Stop(service, SIGTERM);
    twin.Start(service);
  }
  ASSERT_LT(Now(), e) << "the restarts took past the epoch's start";
  int moved = 0;
  std::set<std::string> to_agg4;
  for (const std::string& h : hosts) {
    const std::vector<std::string> before = OwnerNames(*grown, h, e - 1);
    const std::vector<std::string> after = OwnerNames(*grown, h, e);
    EXPECT_EQ(before, OwnerNames(*cluster, h, e - 1)) << h;  // history keeps its owners
    if (before == after) continue;
    ++moved;
    EXPECT_NE(std::find(after.begin(), after.end(), "agg-4"), after.end()) << h;
    to_agg4.insert(h);
  }
  EXPECT_GT(moved, 0);
  EXPECT_LT(moved, static_cast<int>(hosts.size()) * 3 / 4);  // about R/N = 1/2 of them
  std::this_thread::sleep_for(std::chrono::seconds(e + 8 - Now()));
  // agg-4 alone holds exactly the hosts it owns since E.
  std::set<std::string> held;
  for (const auto& [h, n] : per_host(twin.Port("agg-4", "7401"), e, e + 6)) held.insert(h);
  for (const std::string& h : hosts) {
    const std::vector<std::string> after = OwnerNames(*grown, h, e);
    const bool owns = std::find(after.begin(), after.end(), "agg-4") != after.end();
    EXPECT_EQ(held.count(h), owns ? 1u : 0u) << h;
  }
  // Across E each host's count is its old owner's before E plus its new owner's from E on.
  const Counts across = per_host("", e - 6, e + 6);
  EXPECT_EQ(across.size(), hosts.size());
  std::map<std::string, Counts> before, after;  // each aggregator alone, before E and from E
  for (const std::string agg : {"agg-1", "agg-2", "agg-3", "agg-4"}) {
    before[agg] = per_host(twin.Port(agg, "7401"), e - 6, e);
    after[agg] = per_host(twin.Port(agg, "7401"), e, e + 6);
  }
  for (const std::string& h : hosts) {
    const std::string old_owner = OwnerNames(*grown, h, e - 1)[0];
    const std::string new_owner = OwnerNames(*grown, h, e)[0];
    EXPECT_EQ(across.count(h) ? across.at(h) : 0, before[old_owner][h] + after[new_owner][h]) << h;
  }

  // The HTTP node reads the same cluster file: every host once.
  const std::string node = twin.Port("query", "7402");
  HttpResult stats;
  EXPECT_TRUE(WaitFor(
      [&] {
        stats = HttpGet(std::stoi(node.substr(node.rfind(':') + 1)),
                        "/api/stats?metric=disk.latency&by=host&from=" + std::to_string(t0) +
                            "&to=" + std::to_string(t1));
        return stats.status == 200;
      },
      10s))
      << stats.status << " " << stats.body;
  const auto page = ParseStats(stats.body);
  EXPECT_EQ(page.size(), 50u) << stats.body;
  for (const auto& [h, s] : page) EXPECT_EQ(s.count, whole.at(h)) << h;
}

}  // namespace
}  // namespace trailmap::test
