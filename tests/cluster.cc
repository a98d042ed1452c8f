#include "tests/cluster.h"

#include <algorithm>

#include <signal.h>

namespace trailmap::test {

Aggregator::Aggregator(const TempDir& dir, std::string name, std::vector<std::string> extra_args)
    : dir_(dir),
      name_(std::move(name)),
      extra_args_(std::move(extra_args)),
      ingest_port_(FreePort()),
      query_port_(FreePort()),
      data_dir_(dir / (name_ + "-data")) {}

void Aggregator::Start() {
  std::vector<std::string> args{Binary("trailmap-aggregator"),
                                "--name",
                                name_,
                                "--data",
                                data_dir_,
                                "--ingest",
                                ingest(),
                                "--query",
                                query()};
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  process_ = std::make_unique<Process>(args, dir_.path(), name_);
}

void Aggregator::KillHard() {
  process_->Kill(SIGKILL);
  process_->Wait();
}

std::string Aggregator::Log() const { return ReadFile(dir_ / (name_ + ".err")); }

Agent::Agent(const TempDir& dir, std::string host, std::string aggregators_ingest,
             std::vector<std::string> extra_args)
    : dir_(dir),
      host_(std::move(host)),
      statsd_port_(FreePort()),
      spool_dir_(dir / ("spool-" + host_)) {
  argv_ = {Binary("trailmap-agent"),
           "--host",
           host_,
           "--statsd",
           "127.0.0.1:" + std::to_string(statsd_port_),
           "--spool",
           spool_dir_};
  if (!aggregators_ingest.empty()) {
    argv_.insert(argv_.end(), {"--aggregators", aggregators_ingest});
  }
  // OTLP is on at the fixed port 4318 by default: a test that wants it names a free port.
  if (std::find(extra_args.begin(), extra_args.end(), "--otlp") == extra_args.end()) {
    argv_.insert(argv_.end(), {"--otlp", "off"});
  }
  argv_.insert(argv_.end(), extra_args.begin(), extra_args.end());
  Start();
}

namespace {
size_t CountStarts(const std::string& log) {
  size_t n = 0;
  for (size_t at = log.find(" started: "); at != std::string::npos;
       at = log.find(" started: ", at + 1))
    ++n;
  return n;
}
}  // namespace

void Agent::Start() {
  // The log is appended to across restarts: wait for one more "started:" than it holds now.
  const size_t starts_before = CountStarts(Log());
  process_ = std::make_unique<Process>(argv_, dir_.path(), "agent-" + host_);
  WaitFor([&] { return CountStarts(process_->Stderr()) > starts_before || !process_->Running(); },
          std::chrono::seconds(30));
}

std::string Agent::Log() const { return ReadFile(dir_ / ("agent-" + host_ + ".err")); }

CommandResult Cli(std::vector<std::string> args, const std::string& query_list) {
  args.insert(args.begin(), Binary("trailmap"));
  args.push_back("--aggregators");
  args.push_back(query_list);
  return RunProgram(args);
}

std::string IngestList(const std::vector<std::unique_ptr<Aggregator>>& aggregators) {
  std::string out;
  for (const auto& a : aggregators) out += (out.empty() ? "" : ",") + a->ingest();
  return out;
}

std::string QueryList(const std::vector<std::unique_ptr<Aggregator>>& aggregators) {
  std::string out;
  for (const auto& a : aggregators) out += (out.empty() ? "" : ",") + a->query();
  return out;
}

}  // namespace trailmap::test
