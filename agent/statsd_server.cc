#include "agent/statsd_server.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "core/boundary.h"
#include "core/clock.h"
#include "core/log.h"

namespace trailmap {

namespace asio = boost::asio;
using asio::ip::udp;

struct StatsdServer::Impl {
  Impl(StatsdServerOptions o, Bucketizer* b)
      : options(std::move(o)), bucketizer(b), scalars(b), socket(io), buffer(64 * 1024) {}

  int64_t Now() const { return NowSeconds(options.clock); }

  void Receive() {
    socket.async_receive_from(asio::buffer(buffer), sender,
                              [this](const boost::system::error_code& error, size_t bytes) {
                                // `this` outlives the socket: the destructor stops io first.
                                try {
                                  OnPacket(error, bytes);
                                } catch (const std::exception& e) {
                                  Log(std::string("statsd: unexpected error: ") + e.what());
                                }
                                if (error != asio::error::operation_aborted) Receive();
                              });
  }

  void OnPacket(const boost::system::error_code& error, size_t bytes) {
    if (error == asio::error::operation_aborted) return;
    if (error) {
      Log("statsd: receive failed: " + error.message());
      return;
    }
    StatsdPacket packet = ParseStatsdPacket(std::string_view(buffer.data(), bytes));
    const int64_t now = Now();
    uint64_t values = 0, renamed = 0;
    size_t kept = 0;
    for (size_t i = 0; i < packet.samples.size(); ++i) {
      const StatsdSample& s = packet.samples[i];
      int64_t second = now;
      if (s.timestamp != 0) {
        if (s.timestamp < now - options.max_past_seconds ||
            s.timestamp > now + options.max_future_seconds) {
          Refuse(&packet, i, StatsdReject::kTimestamp,
                 "timestamp T" + std::to_string(s.timestamp) + " is " +
                     (s.timestamp < now ? std::to_string(now - s.timestamp) + " s in the past"
                                        : std::to_string(s.timestamp - now) + " s in the future") +
                     " (the agent takes " + std::to_string(options.max_past_seconds) +
                     " s back to " + std::to_string(options.max_future_seconds) + " s ahead)");
          continue;
        }
        second = s.timestamp;
      }
      if (!TakeName(now, s.metric, &packet, i)) continue;
      if (!Apply(second, s, &packet, i)) continue;
      values += s.type == StatsdType::kSet ? s.members.size() : s.values.size();
      ++kept;
      if (s.renamed_tags > 0 && renamed == 0 && !renamed_logged) {
        renamed_logged = true;
        Log("statsd: tag '" + s.renamed + "' from " + sender.address().to_string() +
            " has a reserved name (host: the host dimension; value, latency, size: the metric's "
            "value; overflow: the cardinality bound's series): kept as tag_" +
            s.renamed + " so its value stays visible; logged once, counted in tags_renamed");
      }
      renamed += s.renamed_tags;
    }
    uint64_t rejected_before = 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      rejected_before = counters.lines_rejected;
      ++counters.packets;
      counters.lines_accepted += kept;
      counters.lines_unsupported += packet.unsupported;
      counters.values += values;
      counters.tags_renamed += renamed;
      counters.scalars = scalars.counters();
      counters.lines_rejected += packet.errors.size();
      for (const StatsdError& e : packet.errors) {
        ++counters.rejected_by_reason[static_cast<size_t>(e.reason)];
      }
    }
    for (size_t i = 0; i < packet.errors.size(); ++i) {
      const uint64_t n = rejected_before + i + 1;  // this rejection's rank, from 1
      const uint64_t every = std::max<uint64_t>(1, options.log_every_rejections);
      if (n <= options.log_first_rejections || n % every == 0) {
        Log("statsd: rejected from " + sender.address().to_string() + " (" + std::to_string(n) +
            " rejected so far): " + packet.errors[i].message);
      }
    }
  }

  // Records a refusal of packet->samples[i] found after parsing (after the parser's errors).
  static void Refuse(StatsdPacket* packet, size_t i, StatsdReject reason, const std::string& why) {
    const size_t line = packet->samples[i].line;
    packet->errors.push_back({line, reason, "line " + std::to_string(line) + ": " + why});
  }

  // Whether sample i's metric name is known or may be taken now (see the header); false with a
  // refusal recorded otherwise.
  bool TakeName(int64_t now, const std::string& metric, StatsdPacket* packet, size_t i) {
    if (known.count(metric) > 0) return true;
    const double rate = options.new_metrics_per_minute;
    if (rate > 0) {
      if (!bucket_started) {  // starts full
        bucket_started = true;
        tokens = rate;
        tokens_at = now;
      }
      const double elapsed = static_cast<double>(std::max<int64_t>(0, now - tokens_at));
      tokens = std::min(rate, tokens + elapsed * rate / 60);
      tokens_at = now;
    }
    if (known.size() >= options.max_metrics) {
      Refuse(packet, i, StatsdReject::kNewMetric,
             "metric name '" + metric + "' is new and the agent already took " +
                 std::to_string(known.size()) + " distinct names, at most " +
                 std::to_string(options.max_metrics) + " (statsd_max_metrics)");
      return false;
    }
    if (rate > 0 && tokens < 1) {
      Refuse(packet, i, StatsdReject::kNewMetric,
             "metric name '" + metric + "' is new and the agent took its " +
                 std::to_string(std::llround(rate)) +
                 " new names of the last minute (statsd_new_metrics_per_minute); it takes more "
                 "as the minute goes on");
      return false;
    }
    tokens -= 1;
    known.insert(metric);
    return true;
  }

  // Adds sample `i` at `second`; false (and a refusal recorded) when a value does not fit.
  bool Apply(int64_t second, const StatsdSample& s, StatsdPacket* packet, size_t i) {
    switch (s.type) {
      case StatsdType::kCounter:
      case StatsdType::kGauge:
      case StatsdType::kSet:
        scalars.Add(second, s);
        return true;
      default:
        break;
    }
    const StatsdUnit unit = s.type == StatsdType::kTiming ? StatsdUnit::kMilliseconds
                                                          : StatsdUnitFor(s.metric, options.units);
    converted.clear();
    for (const double v : s.values) {
      Result<uint64_t> x = StatsdHistogramValue(v, unit);
      if (!x.ok()) {
        Refuse(packet, i, StatsdReject::kValue, x.status().message());
        return false;
      }
      converted.push_back(*x);
    }
    const SeriesDef series{s.metric, StatsdUnitKind(unit), StatsdUnitSeriesUnit(unit), s.fields};
    for (const uint64_t x : converted) bucketizer->Add(second, series, x, s.count);
    return true;
  }

  StatsdServerOptions options;
  Bucketizer* bucketizer;           // not owned
  StatsdScalars scalars;            // used by the receive thread only
  std::vector<uint64_t> converted;  // scratch, receive thread
  bool renamed_logged = false;      // receive thread
  // The new-name bound (receive thread): names taken, the bucket and when it was last filled.
  std::unordered_set<std::string> known;
  bool bucket_started = false;
  double tokens = 0;
  int64_t tokens_at = 0;
  asio::io_context io;
  udp::socket socket;
  udp::endpoint sender;      // filled by each receive
  std::vector<char> buffer;  // one datagram
  mutable std::mutex mu;
  std::atomic<uint64_t> thread_failures{0};
  StatsdCounters counters;  // guarded by mu
  std::thread thread;
};

Result<std::unique_ptr<StatsdServer>> StatsdServer::Start(StatsdServerOptions options,
                                                          Bucketizer* bucketizer) {
  const std::string where = options.address + ":" + std::to_string(options.port);
  auto impl = std::make_unique<Impl>(std::move(options), bucketizer);
  boost::system::error_code error;
  // An IP literal, or a name such as localhost (resolved once, the first address is bound).
  udp::endpoint endpoint;
  if (const asio::ip::address address = asio::ip::make_address(impl->options.address, error);
      !error) {
    endpoint = udp::endpoint(address, impl->options.port);
  } else {
    udp::resolver resolver(impl->io);
    const auto results = resolver.resolve(udp::v4(), impl->options.address,
                                          std::to_string(impl->options.port), error);
    if (error || results.empty()) {
      return Status::InvalidArgument("statsd address '" + where +
                                     "': not an IP address, and the name does not resolve" +
                                     (error ? " (" + error.message() + ")" : std::string()));
    }
    endpoint = results.begin()->endpoint();
  }
  impl->socket.open(endpoint.protocol(), error);
  if (!error) impl->socket.bind(endpoint, error);
  if (error) return Status::IOError("cannot bind statsd UDP " + where + ": " + error.message());
  // A larger kernel buffer absorbs bursts while the thread is busy; best effort.
  impl->socket.set_option(asio::socket_base::receive_buffer_size(4 << 20), error);
  impl->Receive();
  Impl* raw = impl.get();
  // Joined in ~StatsdServer. A handler that throws unwinds io.run: logged, counted, and the loop
  // runs on.
  impl->thread = std::thread([raw] {
    while (!CatchAtBoundary("statsd", &raw->thread_failures, [raw] { raw->io.run(); })) {
    }
  });
  return std::unique_ptr<StatsdServer>(new StatsdServer(std::move(impl)));
}

StatsdServer::StatsdServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

StatsdServer::~StatsdServer() {
  impl_->io.stop();
  impl_->thread.join();
}

StatsdCounters StatsdServer::counters() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  StatsdCounters c = impl_->counters;
  c.thread_failures = impl_->thread_failures.load(std::memory_order_relaxed);
  return c;
}

uint16_t StatsdServer::port() const {
  boost::system::error_code error;
  return impl_->socket.local_endpoint(error).port();
}

}  // namespace trailmap
