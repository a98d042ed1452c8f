// StatsdServer: a UDP statsd/DogStatsD listener feeding the Bucketizer.
//
// Each datagram (up to 64 KiB) is parsed with ParseStatsdPacket; every accepted line goes to the
// bucketizer at the second it was received, or at its DogStatsD |T timestamp:
//   |ms          a latency histogram (kind latency, unit ns), each value `count` events
//   |h, |d       a histogram in the unit of the first `units` rule matching the metric name
//                (StatsdUnitFor: ms by default; latency ns, or size B / "1")
//   |c, |g, |s   scalars, through StatsdScalars (agent/statsd_scalars.h says what each becomes)
// A |T timestamp more than `max_past_seconds` before the receive second or `max_future_seconds`
// after it is refused (reason timestamp): the per-second state of counters and sets is kept for
// that long, and a sample so far off is more likely a wrong clock than a late one. Rejected
// lines are counted by reason class and logged: the first `log_first_rejections`, then every
// `log_every_rejections`-th. A tag with a reserved key, kept as tag_KEY (agent/statsd.h), is
// counted in `tags_renamed` and logged the first time. Events and service checks are counted as
// unsupported, not logged.
//
// New metric names. Every name the aggregators have not seen becomes a catalog entry there for
// good, so a client that makes names up (a request id in the name) would grow every catalog
// without bound. The server remembers the names it took; a line whose name is new is taken only
// while fewer than `new_metrics_per_minute` new names came in the last minute (a token bucket of
// as many, refilled evenly) and fewer than `max_metrics` are remembered. Past either bound the
// line is refused, reason new_metric (counted and logged like any refusal): dropped, not merged
// into a stand-in name, since any merge would mix unrelated data under one name.
//
// Threading: Start() binds and starts one thread running the socket (Boost.Asio); counters()
// may be called from any thread; the destructor stops and joins it. The bucketizer must
// outlive the server. No exception leaves the receive handler: an unexpected one is logged and
// receiving goes on.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/statsd.h"
#include "agent/statsd_scalars.h"
#include "core/status.h"
#include "ingest/bucketizer.h"

namespace trailmap {

struct StatsdServerOptions {
  std::string address = "127.0.0.1";     // IPv4/IPv6 literal, or a name resolved to IPv4
  uint16_t port = 8125;                  // 0 = any free port (see StatsdServer::port())
  uint64_t log_first_rejections = 5;     // log each of the first N rejected lines
  uint64_t log_every_rejections = 1000;  // then every N-th
  // Unix seconds now; empty = the system clock. Tests hand down a fixed clock.
  std::function<int64_t()> clock;
  std::vector<StatsdUnitRule> units;  // the unit of |h and |d lines, per metric name
  int64_t max_past_seconds = 600;     // |T window, see above
  int64_t max_future_seconds = 60;
  // New metric names, see above: taken per minute (0 = no bound), and distinct names at most.
  double new_metrics_per_minute = 1000;
  size_t max_metrics = 100'000;
};

struct StatsdCounters {
  uint64_t packets = 0;
  uint64_t lines_accepted = 0;
  uint64_t lines_rejected = 0;
  std::array<uint64_t, kStatsdRejectClasses> rejected_by_reason{};  // by StatsdReject
  uint64_t lines_unsupported = 0;  // DogStatsD events and service checks (not an error)
  uint64_t values = 0;             // values and set members of accepted lines (packed: several)
  uint64_t tags_renamed = 0;       // tags with a reserved key kept as tag_KEY (agent/statsd.h)
  StatsdScalarsCounters scalars;   // counters, gauges and sets: what their state bounds dropped
  uint64_t thread_failures = 0;    // unexpected errors its thread caught (logged; it goes on)
};

class StatsdServer {
 public:
  // Binds address:port; IOError naming the endpoint if it cannot (in use, bad address).
  static Result<std::unique_ptr<StatsdServer>> Start(StatsdServerOptions options,
                                                     Bucketizer* bucketizer);
  ~StatsdServer();
  StatsdServer(const StatsdServer&) = delete;
  StatsdServer& operator=(const StatsdServer&) = delete;

  StatsdCounters counters() const;
  uint16_t port() const;  // the bound port

 private:
  struct Impl;  // the Asio side, kept out of this header
  explicit StatsdServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace trailmap
