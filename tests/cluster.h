// A trailmap cluster on loopback for system tests: real aggregators (with RocksDB directories
// under one TempDir), real agents, and the real CLI, each on ports nothing else uses.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tests/harness.h"

namespace trailmap::test {

class Aggregator {
 public:
  // `extra_args` are added to every start's command line (e.g. "--no-self-metrics").
  Aggregator(const TempDir& dir, std::string name, std::vector<std::string> extra_args = {});
  // Starts (or restarts, after KillHard) on the same ports and data directory.
  void Start();
  void KillHard();
  std::string ingest() const { return "127.0.0.1:" + std::to_string(ingest_port_); }
  std::string query() const { return "127.0.0.1:" + std::to_string(query_port_); }
  const std::string& data_dir() const { return data_dir_; }
  Process& process() { return *process_; }
  // Everything it logged, across restarts.
  std::string Log() const;

 private:
  const TempDir& dir_;
  std::string name_;
  std::vector<std::string> extra_args_;
  int ingest_port_, query_port_;
  std::string data_dir_;
  std::unique_ptr<Process> process_;
};

// Started by the constructor, with its spool in DIR/spool-HOST (never the user's default), OTLP off
// unless `extra_args` give --otlp, shipping
// to `aggregators_ingest` ("" = none given: pass --cluster FILE in `extra_args`). Start()
// returns once the agent has logged "started:" (its statsd port is bound), or has exited, or after
// 30 s: a datagram sent after it is received, however loaded the machine.
class Agent {
 public:
  Agent(const TempDir& dir, std::string host, std::string aggregators_ingest,
        std::vector<std::string> extra_args = {});
  // Starts again (after it died or was killed) with the same flags, statsd port and spool.
  void Start();
  int statsd_port() const { return statsd_port_; }
  const std::string& spool_dir() const { return spool_dir_; }
  Process& process() { return *process_; }
  // Everything it logged, across restarts.
  std::string Log() const;

 private:
  const TempDir& dir_;
  std::string host_;
  int statsd_port_;
  std::string spool_dir_;
  std::vector<std::string> argv_;
  std::unique_ptr<Process> process_;
};

// Runs `trailmap ARGS... --aggregators QUERY_LIST`.
CommandResult Cli(std::vector<std::string> args, const std::string& query_list);

// "a,b,c" of each aggregator's ingest (or query) endpoint, in order.
std::string IngestList(const std::vector<std::unique_ptr<Aggregator>>& aggregators);
std::string QueryList(const std::vector<std::unique_ptr<Aggregator>>& aggregators);

}  // namespace trailmap::test
