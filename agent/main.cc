// trailmap-agent: turns this host's statsd timings into per-second histograms and ships them to
// the aggregator that owns the host (core/shard.h).
//
// main() builds everything and hands it down: the bucketizer, the shipper (its own thread), the
// statsd server (its own thread). This thread waits for SIGINT/SIGTERM in sigtimedwait, and
// every flush_ms turns the seconds before the current one into one batch.
//
// Exit codes: 0 after a signal, 2 on a bad flag or config, 1 when the statsd port cannot be bound.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <limits>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_config.h"
#include "agent/bucketizer.h"
#include "agent/shipper.h"
#include "agent/statsd_server.h"
#include "core/log.h"

namespace trailmap {
namespace {

int64_t NowSecond() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string LabelsText(const FieldSet& labels) {
  Result<std::string> canonical = CanonicalFields(labels);
  return canonical.ok() && !canonical->empty() ? *canonical : "(none)";
}

// One line with every counter; logged when it differs from the last one logged.
std::string CountersLine(const std::optional<StatsdCounters>& statsd, const Bucketizer& bucketizer,
                         const Shipper& shipper) {
  std::string line = "counters:";
  if (statsd) {
    const StatsdCounters& s = *statsd;
    line += " statsd packets=" + std::to_string(s.packets) +
            " accepted=" + std::to_string(s.lines_accepted) +
            " rejected=" + std::to_string(s.lines_rejected);
    for (size_t i = 0; i < kStatsdRejectClasses; ++i) {
      if (s.rejected_by_reason[i] == 0) continue;
      line += std::string(" rejected_") + StatsdRejectName(static_cast<StatsdReject>(i)) + "=" +
              std::to_string(s.rejected_by_reason[i]);
    }
    line += ";";
  }
  const BucketizerCounters b = bucketizer.counters();
  line += " events=" + std::to_string(b.events) + " overflow=" + std::to_string(b.overflow_events) +
          " late=" + std::to_string(b.late_events) + ";";
  const ShipperCounters c = shipper.counters();
  line += " batches sent=" + std::to_string(c.sent) + " acked=" + std::to_string(c.acked) +
          " duplicates=" + std::to_string(c.duplicates) +
          " rejected=" + std::to_string(c.rejected) + " resent=" + std::to_string(c.resent) +
          " reconnects=" + std::to_string(c.reconnects) + " dropped=" + std::to_string(c.dropped) +
          " out_of_order=" + std::to_string(c.out_of_order) +
          " incarnations=" + std::to_string(c.incarnations);
  if (b.stack_samples > 0) {  // stack sources: samples, cuts, and definitions (re)sent
    line += "; stacks samples=" + std::to_string(b.stack_samples) +
            " truncated_stacks=" + std::to_string(b.truncated_stacks) +
            " truncated_frames=" + std::to_string(b.truncated_frames) +
            " stack_defs_sent=" + std::to_string(c.stack_defs_sent) +
            " need_dictionary=" + std::to_string(c.need_dictionary);
  }
  return line;
}

std::optional<StatsdCounters> StatsdCountersOf(const StatsdServer* statsd) {
  return statsd ? std::optional<StatsdCounters>(statsd->counters()) : std::nullopt;
}

// Turns the held seconds before `second` into batches (60 seconds at most each) and queues them.
void ShipSecondsBefore(int64_t second, const AgentConfig& config, Bucketizer* bucketizer,
                       Shipper* shipper) {
  while (true) {
    CompletedSeconds done = bucketizer->TakeSecondsBefore(second);
    if (done.empty()) return;
    shipper->Send(MakeBatch(std::move(done), config.host, config.labels));  // logs a drop
  }
}

// Parses flags over the config file; returns the exit code to use, or -1 to run.
int Configure(int argc, char** argv, AgentConfig* config) {
  CLI::App app{"trailmap-agent: per-second latency histograms from statsd, shipped to trailmap"};
  std::string config_path, host, aggregators, statsd;
  std::vector<std::string> labels;
  int64_t flush_ms = 0, max_series = 0, max_queued = 0, window = 0, ack_timeout_ms = 0;
  app.add_option("--config", config_path, "TOML config (see configs/agent.toml)");
  app.add_option("--host", host, "this host's name (default: the hostname)");
  app.add_option("--label", labels, "host label KEY=VALUE (repeatable)");
  app.add_option("--aggregators", aggregators,
                 "ingest HOST:PORT[,HOST:PORT...] (default 127.0.0.1:7400)");
  app.add_option("--statsd", statsd, "statsd UDP HOST:PORT, or off (default 127.0.0.1:8125)");
  app.add_option("--flush-ms", flush_ms, "ship completed seconds this often (default 250)");
  app.add_option("--max-series", max_series, "field sets per metric per second (default 1000)");
  app.add_option("--max-queued", max_queued, "unacknowledged batches held (default 10000)");
  app.add_option("--window", window, "batches in flight without an ack (default 64)");
  app.add_option("--ack-timeout-ms", ack_timeout_ms, "then reconnect and resend (default 2000)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (!config_path.empty()) {
    if (Status s = LoadAgentConfigFile(config_path, config); !s.ok()) {
      std::fprintf(stderr, "trailmap-agent: %s\n", s.message().c_str());
      return 2;
    }
  }
  if (app.count("--host")) config->host = host;
  for (const std::string& label : labels) {
    if (Status s = AddLabel(label, &config->labels); !s.ok()) {
      std::fprintf(stderr, "trailmap-agent: --label: %s\n", s.message().c_str());
      return 2;
    }
  }
  if (app.count("--aggregators")) {
    config->aggregators.clear();
    size_t start = 0;
    while (start <= aggregators.size()) {
      size_t end = aggregators.find(',', start);
      if (end == std::string::npos) end = aggregators.size();
      if (end > start) config->aggregators.push_back(aggregators.substr(start, end - start));
      start = end + 1;
    }
  }
  if (app.count("--statsd")) config->statsd = statsd;
  if (app.count("--flush-ms")) config->flush_ms = flush_ms;
  if (app.count("--max-series")) config->max_series = max_series;
  if (app.count("--max-queued")) config->max_queued = max_queued;
  if (app.count("--window")) config->window = window;
  if (app.count("--ack-timeout-ms")) config->ack_timeout_ms = ack_timeout_ms;
  if (config->host.empty()) config->host = DefaultHostName();
  if (Status s = ValidateAgentConfig(*config); !s.ok()) {
    std::fprintf(stderr, "trailmap-agent: %s\n", s.message().c_str());
    return 2;
  }
  return -1;
}

int Run(const AgentConfig& config) {
  // Signals are taken by this thread alone, in sigtimedwait: block them before any thread starts
  // so every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Bucketizer bucketizer(BucketizerOptions{static_cast<size_t>(config.max_series)});
  ShipperOptions shipper_options;
  shipper_options.endpoint = IngestEndpoint(config);
  shipper_options.agent_id = NewAgentId(config.host);
  shipper_options.max_queued = static_cast<size_t>(config.max_queued);
  shipper_options.window = static_cast<size_t>(config.window);
  shipper_options.ack_timeout = std::chrono::milliseconds(config.ack_timeout_ms);
  Shipper shipper(shipper_options);

  std::unique_ptr<StatsdServer> statsd;
  if (config.statsd != "off") {
    Result<HostPort> where = ParseHostPort(config.statsd);  // validated already
    StatsdServerOptions statsd_options;
    statsd_options.address = where->host;
    statsd_options.port = where->port;
    Result<std::unique_ptr<StatsdServer>> started =
        StatsdServer::Start(std::move(statsd_options), &bucketizer);
    if (!started.ok()) {
      Log(started.status().ToString());
      return started.status().code() == Status::Code::kInvalidArgument ? 2 : 1;
    }
    statsd = std::move(*started);
  }
  Log("started: host " + config.host + ", labels " + LabelsText(config.labels) + ", agent " +
      shipper_options.agent_id + ", shipping to " + shipper_options.endpoint + " (shard of " +
      std::to_string(config.aggregators.size()) + "), statsd " +
      (statsd ? config.statsd.substr(0, config.statsd.rfind(':')) + ":" +
                    std::to_string(statsd->port())
              : std::string("off")));

  const std::chrono::milliseconds tick(config.flush_ms);
  const auto report_every = std::chrono::seconds(10);
  auto last_report = std::chrono::steady_clock::now();
  std::string last_line;
  while (true) {
    const timespec wait{static_cast<time_t>(tick.count() / 1000),
                        static_cast<long>(tick.count() % 1000) * 1'000'000};
    const int signal = sigtimedwait(&signals, nullptr, &wait);
    if (signal == SIGINT || signal == SIGTERM) {
      Log(std::string("stopping on ") + (signal == SIGINT ? "SIGINT" : "SIGTERM"));
      break;
    }
    ShipSecondsBefore(NowSecond(), config, &bucketizer, &shipper);
    if (std::chrono::steady_clock::now() - last_report >= report_every) {
      last_report = std::chrono::steady_clock::now();
      std::string line = CountersLine(StatsdCountersOf(statsd.get()), bucketizer, shipper);
      if (line != last_line) Log(line);
      last_line = std::move(line);
    }
  }
  // Stop receiving, then ship everything held, the current second too: a second shipped in two
  // parts merges at the aggregator, so nothing a client sent before the signal is lost.
  const std::optional<StatsdCounters> statsd_counters = StatsdCountersOf(statsd.get());
  statsd.reset();
  ShipSecondsBefore(std::numeric_limits<int64_t>::max(), config, &bucketizer, &shipper);
  if (Status s = shipper.Flush(std::chrono::seconds(2)); !s.ok()) Log("at exit: " + s.ToString());
  Log(CountersLine(statsd_counters, bucketizer, shipper) + " (at exit)");
  return 0;
}

}  // namespace
}  // namespace trailmap

int main(int argc, char** argv) {
  trailmap::SetLogProgram("trailmap-agent");
  trailmap::AgentConfig config;
  if (const int code = trailmap::Configure(argc, argv, &config); code >= 0) return code;
  return trailmap::Run(config);
}
