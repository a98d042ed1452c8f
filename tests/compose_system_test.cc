// docker-compose.yml is real: Debian's docker-compose validates it (no engine needed), and this
// test starts the very processes it lists, with the very flags it gives them, on loopback —
// service host names and ports mapped to free local ports — and checks the cluster works.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <thread>

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

TEST(Compose, TheSameTopologyRunsOnLoopback) {
  const auto commands = ServiceCommands(ReadFile(kCompose));
  ASSERT_EQ(commands.size(), 6u) << "aggregator, three agents, the fleet, the HTTP node";
  TempDir dir;

  // Every service gets loopback ports in place of its container's; names resolve to 127.0.0.1.
  std::map<std::string, std::string> ports;  // "service:port" -> "127.0.0.1:free"
  std::map<std::string, std::string> listen;  // service -> its own "0.0.0.0:port" replacement
  for (const auto& [service, cmd] : commands) {
    for (const std::string container_port : {"7400", "7401", "7402", "8125"}) {
      if (cmd.find("0.0.0.0:" + container_port) != std::string::npos) {
        ports[service + ":" + container_port] = "127.0.0.1:" + std::to_string(FreePort());
      }
    }
  }
  auto translate = [&](const std::string& service, std::string word) {
    for (const auto& [from, to] : ports) {
      const std::string svc = from.substr(0, from.find(':')), port = from.substr(from.find(':') + 1);
      if (svc == service) word = std::regex_replace(word, std::regex("0\\.0\\.0\\.0:" + port), to);
      word = std::regex_replace(word, std::regex("\\b" + svc + ":" + port + "\\b"), to);
    }
    return std::regex_replace(word, std::regex("^/var/lib/trailmap"), dir.path() + "/" + service);
  };

  std::vector<std::unique_ptr<Process>> processes;
  for (const std::string service :
       {"aggregator", "agent-web-1", "agent-web-2", "agent-db-1", "fleet", "query"}) {
    ASSERT_EQ(commands.count(service), 1u) << service;
    std::vector<std::string> argv;
    for (const auto& w : Words(commands.at(service))) argv.push_back(translate(service, w));
    argv[0] = Binary(argv[0]);
    processes.push_back(std::make_unique<Process>(argv, dir.path(), service));
  }
  const std::string query = ports.at("aggregator:7401");

  // The fleet's 50 simulated hosts arrive directly, and its statsd timings through each agent.
  std::map<std::string, GroupStats> disk, http;
  const bool arrived = WaitFor(
      [&] {
        CommandResult d = Cli({"stats", "--metric", "disk.latency", "--by", "host", "--from", "-2m", "--format", "json"}, query);
        CommandResult h = Cli({"stats", "--metric", "http.server.latency", "--by", "host", "--from", "-2m", "--format", "json"}, query);
        if (d.exit_code != 0 || h.exit_code != 0) return false;
        disk = ParseStats(d.out);
        http = ParseStats(h.out);
        return disk.size() == 50 && http.size() == 3;
      },
      30s);
  std::string logs;
  for (const auto& p : processes) logs += p->Stderr();
  ASSERT_TRUE(arrived) << disk.size() << " disk hosts, " << http.size() << " http hosts\n" << logs;
  for (const std::string host : {"web-1", "web-2", "db-1"}) EXPECT_GT(http[host].count, 0u) << host;
  EXPECT_GT(disk["sim-001"].count, 0u);
  // The HTTP node answers from the same aggregator: all 50 simulated hosts.
  const std::string node = ports.at("query:7402");
  HttpResult stats;
  EXPECT_TRUE(WaitFor(
      [&] {
        stats = HttpGet(std::stoi(node.substr(node.rfind(':') + 1)),
                        "/api/stats?metric=disk.latency&by=host&from=-2m");
        return stats.status == 200;
      },
      10s))
      << stats.status << " " << stats.body;
  EXPECT_EQ(ParseStats(stats.body).size(), 50u) << stats.body;
  for (const auto& p : processes) EXPECT_TRUE(p->Running()) << p->Stderr();
}

}  // namespace
}  // namespace trailmap::test
